"""``bridge.from_gym``: a gym 0.21-0.26 env (an id through ``gym.make``, or an instance) as a neutral
:class:`bridge.Env`, wherever gym is installed (the legacy era has gym 0.23.1).

The API is read from the env itself: ``reset(seed=)`` where the innermost env's reset takes a seed,
else gym 0.21's ``seed()`` then ``reset()``; ``reset()`` returning ``obs`` or ``(obs, info)``; ``step``
returning 0.26's 5-tuple or the 4-tuple whose ``done`` is split by ``info["TimeLimit.truncated"]``.
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

from bridge.adapters.gym.loader import load_gym
from bridge.adapters.importers.source import ForeignEnv, imported

__all__ = ["from_gym", "seeds_by_reset"]

gym = load_gym("from_gym")


def seeds_by_reset(env: Any) -> bool:
    """Whether the innermost env's ``reset`` takes ``seed`` (gym 0.22+), else it has ``seed()``."""
    try:
        params = inspect.signature(env.unwrapped.reset).parameters
    except (TypeError, ValueError):  # a builtin or C method: assume the modern API
        return True
    return "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def from_gym(
    env_or_id: Any,
    *,
    drop_keys: Sequence[str] = (),
    wrappers: Sequence[Any] = (),
    determinism: str = "weak",
    snapshot: Any = None,
    **make_kwargs: Any,
) -> ForeignEnv:
    """The gym env ``env_or_id`` as a :class:`bridge.Env` (options as ``bridge.from_gymnasium``'s)."""
    return imported(
        gym,
        env_or_id,
        make_kwargs,
        subject="from_gym",
        registry="gym",
        registry_fix="Check the id (gym.envs.registry lists them); a package's ids need importing it first",
        seed_by_reset=seeds_by_reset,
        drop_keys=drop_keys,
        wrappers=wrappers,
        determinism=determinism,
        snapshot=snapshot,
    )

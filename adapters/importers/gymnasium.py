"""``bridge.from_gymnasium``: a Gymnasium 1.x env (an id through ``gymnasium.make``, or an instance)
as a neutral :class:`bridge.Env`; its spaces reverse-lowered exactly (``importers/spaces.py``)."""

from __future__ import annotations

from typing import Any, Sequence

from bridge.adapters.importers.source import ForeignEnv, imported
from bridge.compat import optional_import

__all__ = ["from_gymnasium"]

gymnasium = optional_import("gymnasium", "from_gymnasium")


def from_gymnasium(
    env_or_id: Any,
    *,
    drop_keys: Sequence[str] = (),
    wrappers: Sequence[Any] = (),
    determinism: str = "weak",
    snapshot: Any = None,
    **make_kwargs: Any,
) -> ForeignEnv:
    """The Gymnasium env ``env_or_id`` as a :class:`bridge.Env`.

    Args:
        env_or_id: a registered Gymnasium id (built with ``gymnasium.make(id, **make_kwargs)``, its
            wrappers kept; pass ``disable_env_checker=True`` to leave out the PassiveEnvChecker) or
            a ``gymnasium.Env`` instance (closed with the neutral env).
        drop_keys: top-level keys of a Dict observation to leave out (MiniGrid's ``"mission"``).
        wrappers: Gymnasium wrappers (classes, or functions of the env), applied innermost first
            before the import (MiniGrid's ``RGBImgPartialObsWrapper`` then ``ImgObsWrapper``).
        determinism: "weak" (default: snapshots restore the env's state), "strong" (replays
            bit-identically; needs ``snapshot``) or "none" (no snapshots).
        snapshot: None (a pickled copy, for "weak"), "deepcopy" (a pickled copy the checker
            replays in a fresh instance) or ``(get_state, set_state)``: ``get_state(env)`` returns
            plain data, ``set_state(env, state)`` puts it back.
    """
    return imported(
        gymnasium,
        env_or_id,
        make_kwargs,
        subject="from_gymnasium",
        registry="Gymnasium",
        registry_fix="Check the id (gymnasium.pprint_registry() lists them); a package's ids need 'module:Id-v0'",
        seed_by_reset=lambda env: True,
        drop_keys=drop_keys,
        wrappers=wrappers,
        determinism=determinism,
        snapshot=snapshot,
    )

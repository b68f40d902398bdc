"""``bridge.from_gymnasium``: a Gymnasium 1.x env (an id through ``gymnasium.make``, or an instance)
as a neutral :class:`bridge.Env`; its spaces reverse-lowered exactly (``importers/spaces.py``)."""

from __future__ import annotations

from typing import Any, Sequence

from bridge.adapters.importers.source import ForeignEnv
from bridge.compat import optional_import

from bridge.errors import SpecError, error

__all__ = ["from_gymnasium"]

gymnasium = optional_import("gymnasium", "from_gymnasium")


def from_gymnasium(
    env_or_id: Any,
    *,
    drop_keys: Sequence[str] = (),
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
        determinism: "weak" (default: snapshots restore the env's state), "strong" (replays
            bit-identically; needs ``snapshot``) or "none" (no snapshots).
        snapshot: None (a pickled copy, for "weak"), "deepcopy" (a pickled copy the checker
            replays in a fresh instance) or ``(get_state, set_state)``: ``get_state(env)`` returns
            plain data, ``set_state(env, state)`` puts it back.
    """
    subject = "from_gymnasium"
    if isinstance(env_or_id, str):
        try:
            env = gymnasium.make(env_or_id, **make_kwargs)
        except gymnasium.error.Error as e:
            fix = "Check the id (gymnasium.pprint_registry() lists them); a package's ids need 'module:Id-v0'"
            raise error(SpecError, f"{subject} id", "be registered with Gymnasium", f"{env_or_id!r} ({e})", fix) from e
        built = True
    elif isinstance(env_or_id, gymnasium.Env):
        if make_kwargs:
            fix = "Build the env with them yourself, or pass its id"
            raise error(SpecError, f"{subject} make kwargs", "go with an id", sorted(make_kwargs), fix)
        env, built = env_or_id, False
    else:
        fix = "Pass e.g. from_gymnasium('CartPole-v1') or from_gymnasium(gymnasium.make(...))"
        raise error(SpecError, f"{subject} env", "be a Gymnasium id or gymnasium.Env", type(env_or_id).__name__, fix)
    try:
        return ForeignEnv(
            env,
            gymnasium,
            api="gymnasium",
            seed_by_reset=True,
            drop_keys=drop_keys,
            determinism=determinism,
            snapshot=snapshot,
            subject=subject,
        )
    except Exception:
        if built:
            env.close()  # a refused import leaves nothing open
        raise

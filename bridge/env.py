"""The environment base class users subclass, wrappers, and the TimeLimit wrapper."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from bridge import snapshot as _snapshot
from bridge.errors import BridgeError, ContractError, SpecError, message
from bridge.spaces import Space

__all__ = ["Env", "Wrapper", "TimeLimit", "StepResult", "DETERMINISM", "qualname", "check_snapshot_owner"]

StepResult = Tuple[Any, float, bool, bool, Dict[str, Any]]
DETERMINISM = ("strong", "weak", "none")


def qualname(obj: object) -> str:
    """``module.QualName`` of ``obj``'s class: what snapshots record as their maker."""
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def check_snapshot_owner(obj: object, snapshot: Any, fix: str) -> None:
    """Refuse a snapshot that ``obj``'s class did not make (each snapshot records its maker)."""
    got = snapshot.get("class") if isinstance(snapshot, dict) else type(snapshot).__name__
    if got != qualname(obj):
        raise ContractError(message("snapshot", f"come from {qualname(obj)}", got, fix))


_ENV_FIX = "Restore snapshots only into the env class that made them"
_WRAPPER_FIX = "Restore snapshots only into the wrapper stack that made them"


_ENV_KEYS = (frozenset(("class", "state")), frozenset(("class", "state", "rng")))
_WRAPPER_KEYS = frozenset(("class", "state", "env"))


def _check_keys(snapshot: dict, required: Tuple[str, ...], optional: Tuple[str, ...], fix: str) -> None:
    keys = set(snapshot)
    if not set(required) <= keys <= set(required) | set(optional):
        expectation = "have the keys " + ", ".join(repr(k) for k in required)
        expectation += f" (and {', '.join(repr(k) for k in optional)} with the RNG)" if optional else ""
        raise ContractError(message("snapshot", expectation, sorted(keys, key=repr), fix))


def _set_state(env: Env, state: Any) -> None:
    """``env.set_state(state)``; what it raises (other than our own errors) becomes a ContractError."""
    try:
        env.set_state(state)
    except BridgeError:
        raise
    except Exception as e:
        raise ContractError(
            message(
                "snapshot state",
                f"be accepted by {type(env).__name__}.set_state()",
                f"{type(e).__name__}: {e}",
                "Restore only snapshots that this env's clone_state() made (the env was left as it was)",
            )
        ) from e


def _restore_or_roll_back(env: Env, snapshot: dict) -> None:
    point = env._rollback_point()
    try:
        env._apply_snapshot(snapshot)
    except Exception:
        env._roll_back(point)
        raise


def _standard(env: Env) -> bool:
    """True when ``env`` restores through the protocol above (its restore_state is not its own)."""
    return type(env).restore_state in (Env.restore_state, Wrapper.restore_state)


class Env:
    """A single environment, shaped like a Gymnasium 1.x env.

    Subclasses set ``observation_space`` and ``action_space`` (``bridge.spaces``), implement
    :meth:`reset` (calling ``super().reset(seed=seed)`` first) and :meth:`step`, and optionally
    :meth:`get_state` / :meth:`set_state` over the simulation fields, declaring ``determinism``:

    * ``"strong"``: after :meth:`restore_state`, the same actions replay bit-identically;
    * ``"weak"``: replay matches only until the first RNG draw;
    * ``"none"``: no snapshots (the default; :meth:`clone_state` raises).
    """

    observation_space: Space
    action_space: Space
    metadata: Dict[str, Any] = {"render_modes": [], "render_fps": None}
    render_mode: Optional[str] = None
    determinism: str = "none"
    spec: Any = None
    # how the author wrote the env, so that fixes name what they wrote: "class" (a bridge.Env
    # subclass) or "matlab-function" (rlFunctionEnv's step and reset functions)
    authoring: str = "class"

    _np_random: Optional[np.random.Generator] = None
    _np_random_seed: Optional[int] = None

    # -- randomness --------------------------------------------------------------------------
    @property
    def np_random(self) -> np.random.Generator:
        """The env's one Generator; seeded by ``reset(seed=...)``, unseeded until then."""
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random = value

    @property
    def np_random_seed(self) -> Optional[int]:
        """The seed of the last seeded reset, or None."""
        return self._np_random_seed

    # -- lifecycle ---------------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        """Start an episode. Subclasses call ``super().reset(seed=seed)`` and return (obs, info)."""
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise SpecError(message("reset seed", "be a non-negative int or None", seed, "Pass e.g. seed=0"))
            self._np_random = np.random.default_rng(int(seed))
            self._np_random_seed = int(seed)
        return None  # type: ignore[return-value]

    def step(self, action: Any) -> StepResult:
        """Advance one step: ``(observation, reward, terminated, truncated, info)``."""
        raise NotImplementedError(f"{type(self).__name__}.step is not implemented")

    def render(self) -> Any:
        """Render in ``self.render_mode`` (``"rgb_array"``: uint8 HWC array; ``"ansi"``: str)."""
        return None

    def close(self) -> None:
        """Release resources; safe to call twice."""

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def unwrapped(self) -> Env:
        return self

    # -- snapshots ---------------------------------------------------------------------------
    def get_state(self) -> Any:
        """Simulation fields only, as plain data (no RNG: the base class adds it)."""
        raise NotImplementedError

    def set_state(self, state: Any) -> None:
        """Inverse of :meth:`get_state`."""
        raise NotImplementedError

    def _snapshot_unsupported(self) -> bool:
        return self.determinism == "none" or type(self).get_state is Env.get_state

    def _why_no_snapshot(self) -> str:
        subject = f"{type(self).__name__}.clone_state"
        if type(self).get_state is Env.get_state:
            fix = "Implement get_state() (plain data) and set_state(), and set determinism = 'strong' on the class"
            return message(subject, "have get_state() and set_state() implemented", "neither overridden", fix)
        fix = "Set determinism = 'strong' on the class if a restore gives the same future bit for bit, else 'weak'"
        return message(subject, "have determinism 'strong' or 'weak' declared", "determinism='none' (the default)", fix)

    def clone_state(self, *, include_rng: bool = True) -> dict:
        """A plain-data snapshot: ``get_state()`` plus, by default, the RNG state."""
        if self._snapshot_unsupported():
            raise ContractError(self._why_no_snapshot())
        snap = {"class": qualname(self), "state": self.get_state()}
        if include_rng:
            snap["rng"] = _snapshot.rng_state(self.np_random)
        return snap

    def restore_state(self, snapshot: dict) -> None:
        """Rewind to a snapshot from :meth:`clone_state` of an env of the same class.

        The whole snapshot is checked before anything changes (its maker, its keys, the RNG's
        kind); should ``set_state`` or the RNG state still be refused, the env is set back as it
        was and the error is a ContractError. A refused snapshot never leaves it half restored.
        """
        self._check_snapshot(snapshot)
        _restore_or_roll_back(self, snapshot)

    # the restore protocol: check everything, keep a rollback point, apply (Wrapper nests these)
    def _check_snapshot(self, snapshot: Any) -> None:
        if self._snapshot_unsupported():
            raise ContractError(self._why_no_snapshot())
        check_snapshot_owner(self, snapshot, _ENV_FIX)
        keys = snapshot.keys()
        if type(snapshot) is not dict or (keys != _ENV_KEYS[0] and keys != _ENV_KEYS[1]):  # the sets: ~10x faster
            _check_keys(snapshot, ("class", "state"), ("rng",), _ENV_FIX)
        if "rng" in snapshot:  # its kind here; its values when applied, rolled back if they do not fit
            _snapshot.check_rng_kind(self.np_random, snapshot["rng"])

    def _rollback_point(self) -> Any:
        # exact as long as get_state() returns copies, as its contract asks
        return self.get_state(), _snapshot.rng_point(self.np_random)

    def _roll_back(self, point: Any) -> None:
        self.set_state(point[0])
        _snapshot.roll_back_rng(self.np_random, point[1])

    def _apply_snapshot(self, snapshot: dict) -> None:
        _set_state(self, snapshot["state"])
        if "rng" in snapshot:
            _snapshot.apply_rng_state(self.np_random, snapshot["rng"])

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class Wrapper(Env):
    """Forwards everything to ``env``; subclasses override what they change."""

    def __init__(self, env: Env) -> None:
        if not isinstance(env, Env):
            raise SpecError(message("Wrapper env", "be a bridge.Env", type(env).__name__, "Wrap a bridge.Env"))
        self.env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space

    metadata = property(lambda self: self.env.metadata)  # type: ignore[assignment]
    render_mode = property(lambda self: self.env.render_mode)  # type: ignore[assignment]
    determinism = property(lambda self: self.env.determinism)  # type: ignore[assignment]

    @property
    def np_random(self) -> np.random.Generator:  # type: ignore[override]
        return self.env.np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.env.np_random = value

    @property
    def np_random_seed(self) -> Optional[int]:  # type: ignore[override]
        return self.env.np_random_seed

    @property
    def unwrapped(self) -> Env:
        return self.env.unwrapped

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> StepResult:
        return self.env.step(action)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def get_state(self) -> Any:
        return None

    def set_state(self, state: Any) -> None:
        pass

    def clone_state(self, *, include_rng: bool = True) -> dict:
        return {
            "class": qualname(self),
            "state": self.get_state(),
            "env": self.env.clone_state(include_rng=include_rng),
        }

    def restore_state(self, snapshot: dict) -> None:
        """Rewind the whole stack; the snapshot is checked at every level before any level changes."""
        self._check_snapshot(snapshot)
        _restore_or_roll_back(self, snapshot)

    def _check_snapshot(self, snapshot: Any) -> None:
        check_snapshot_owner(self, snapshot, _WRAPPER_FIX)
        if type(snapshot) is not dict or snapshot.keys() != _WRAPPER_KEYS:
            _check_keys(snapshot, ("class", "state", "env"), (), _WRAPPER_FIX)
        if _standard(self.env):
            self.env._check_snapshot(snapshot["env"])

    def _rollback_point(self) -> Any:
        inner = self.env._rollback_point() if _standard(self.env) else self.env.clone_state()
        return self.get_state(), inner

    def _roll_back(self, point: Any) -> None:
        if _standard(self.env):
            self.env._roll_back(point[1])
        else:
            self.env.restore_state(point[1])
        self.set_state(point[0])

    def _apply_snapshot(self, snapshot: dict) -> None:
        if _standard(self.env):
            self.env._apply_snapshot(snapshot["env"])
        else:  # an env with its own restore_state: it checks and applies its part itself
            self.env.restore_state(snapshot["env"])
        _set_state(self, snapshot["state"])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.env!r}>"


class TimeLimit(Wrapper):
    """Truncates an episode after ``max_episode_steps`` steps; termination wins on the cap step."""

    def __init__(self, env: Env, max_episode_steps: int) -> None:
        ok = isinstance(max_episode_steps, (int, np.integer)) and not isinstance(max_episode_steps, bool)
        if not ok or max_episode_steps < 1:
            raise SpecError(
                message("TimeLimit max_episode_steps", "be an int >= 1", max_episode_steps, "Pass e.g. 100")
            )
        super().__init__(env)
        self.max_episode_steps = int(max_episode_steps)
        self.elapsed_steps = 0

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        self.elapsed_steps = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.elapsed_steps += 1
        if self.elapsed_steps >= self.max_episode_steps and not terminated:
            truncated = True
        return obs, reward, terminated, truncated, info

    def get_state(self) -> Any:
        return {"elapsed_steps": self.elapsed_steps}

    def set_state(self, state: Any) -> None:
        self.elapsed_steps = int(state["elapsed_steps"])

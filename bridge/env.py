"""The environment base class users subclass, wrappers, and the TimeLimit wrapper."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from bridge import arguments
from bridge import snapshot as _snapshot
from bridge.errors import BridgeError, ContractError, SpecError, message
from bridge.spaces import Space

__all__ = [
    "Env",
    "Wrapper",
    "TimeLimit",
    "StepResult",
    "DETERMINISM",
    "qualname",
    "check_snapshot_owner",
]

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


def _check_keys(snapshot: dict, required: Tuple[str, ...], optional: Tuple[str, ...], fix: str) -> None:
    keys = set(snapshot)
    if not set(required) <= keys <= set(required) | set(optional):
        expectation = "have the keys " + ", ".join(repr(k) for k in required)
        expectation += f" (and {', '.join(repr(k) for k in optional)} with the RNG)" if optional else ""
        raise ContractError(message("snapshot", expectation, sorted(keys, key=repr), fix))


def _refused_state(env: Env, e: Exception) -> ContractError:
    """What ``env.set_state`` raised (other than our own errors), as the ContractError to raise."""
    return ContractError(
        message(
            "snapshot state",
            f"be accepted by {type(env).__name__}.set_state()",
            f"{type(e).__name__}: {e}",
            "Restore only snapshots that this env's clone_state() made (the env was left as it was)",
        )
    )


def _restore(top: Env, snapshot: Any) -> None:
    """Rewind the stack from ``top`` down to its innermost env in one pass over flat lists.

    1. Walk the stack and the snapshot together and check every level (maker, keys, RNG kind, and
       the innermost env's ``check_state``) before anything changes.
    2. Keep a rollback point for every level whose state can change (wrappers without state of
       their own are skipped).
    3. Set the states from the innermost env outwards. A PCG64 RNG state as ``clone_state`` writes
       it is decoded in step 1 and written last, where it cannot fail; any other RNG state is
       applied right after the innermost env's state, and rolled back if it does not fit.
    4. Should any level refuse its state, every level tried is set back as it was, and the error
       is a ContractError.
    """
    plan: List[Tuple[Any, Any, bool]] = []  # (level, its part of the snapshot, foreign: has its own restore_state)
    env, part, rng, rng_state, raw = top, snapshot, None, None, None
    while True:
        cls = type(env)
        if cls.restore_state is not Env.restore_state and cls.restore_state is not Wrapper.restore_state:
            plan.append((env, part, True))  # it checks and applies its part itself
            break
        name = f"{cls.__module__}.{cls.__qualname__}"  # qualname(env), without the call
        if isinstance(env, Wrapper):
            if type(part) is not dict or part.get("class") != name:
                check_snapshot_owner(env, part, _WRAPPER_FIX)
            if len(part) != 3 or "state" not in part or "env" not in part:  # "class": found by the owner check
                _check_keys(part, ("class", "state", "env"), (), _WRAPPER_FIX)
            if cls.get_state is not Wrapper.get_state or cls.set_state is not Wrapper.set_state:
                plan.append((env, part["state"], False))
            env, part = env.env, part["env"]
            continue
        if env.determinism == "none" or cls.get_state is Env.get_state:
            raise ContractError(env._why_no_snapshot())
        if type(part) is not dict or part.get("class") != name:
            check_snapshot_owner(env, part, _ENV_FIX)
        if "state" not in part or len(part) != 2 + ("rng" in part):  # "class": found by the owner check
            _check_keys(part, ("class", "state"), ("rng",), _ENV_FIX)
        if cls.check_state is not Env.check_state:
            env.check_state(part["state"])
        if "rng" in part:  # decoded now if it can be; else its kind now and its values when applied
            rng, rng_state = env.np_random, part["rng"]
            raw = _snapshot.rng_bytes(rng, rng_state)
            if raw is None:
                _snapshot.check_rng_kind(rng, rng_state)
        plan.append((env, part["state"], False))
        break
    points = []  # a loop, not a comprehension: on Python 3.11 that is one call frame less
    for env, _, foreign in plan:
        points.append(env.clone_state() if foreign else env.get_state())
    rng_point = None if rng is None or raw is not None else _snapshot.rng_point(rng)
    tried = len(plan)
    try:
        for tried in range(len(plan) - 1, -1, -1):  # the innermost env first
            env, state, foreign = plan[tried]
            if foreign:
                env.restore_state(state)
                continue
            try:
                env.set_state(state)
            except BridgeError:
                raise
            except Exception as e:
                raise _refused_state(env, e) from e
            if rng_point is not None and tried == len(plan) - 1:
                _snapshot.apply_rng_state(rng, rng_state)
        if raw is not None:
            _snapshot.write_rng_bytes(rng, raw)
    except Exception:
        for k in range(len(plan) - 1, tried - 1, -1):
            env, _, foreign = plan[k]
            if foreign:
                env.restore_state(points[k])
            else:
                env.set_state(points[k])
        if rng_point is not None:
            _snapshot.roll_back_rng(rng, rng_point)
        raise


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
    # the largest difference in ulps the env may show on another platform (the numpy eras, another CPU or
    # BLAS kernel) for the same state and action; 0: bit for bit. Read by the conformance (docs/conformance.md)
    cross_era_ulps: int = 0
    # whether clone_state() can be restored in another process (plain data: True for every env that
    # implements get_state/set_state); a tape records snapshots only of such envs (an imported env's
    # default snapshot is a pickle signed for its own process: bridge.adapters.importers.source)
    portable_snapshots: bool = True
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
            seed = arguments.seed(seed, "reset seed")
            self._np_random = np.random.default_rng(seed)
            self._np_random_seed = seed
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

    def get_wrapper_attr(self, name: str) -> Any:
        """``name`` from the outermost layer of the wrapper stack that has it (wrappers do not
        forward attributes: ``wrapper.size`` is an AttributeError, as in Gymnasium 1.x)."""
        if hasattr(self, name):
            return getattr(self, name)
        raise AttributeError(
            message(
                f"get_wrapper_attr({name!r})",
                "name an attribute of a layer of the wrapper stack",
                f"no layer down to {type(self).__name__} with it",
                "Check the spelling, or set the attribute in the env's __init__",
            )
        )

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> bool:
        """Set ``name`` on the outermost layer that has it, else (``force``) on this one, as Gymnasium 1.x."""
        layer: Env = self
        while not hasattr(layer, name) and isinstance(layer, Wrapper):
            layer = layer.env
        if hasattr(layer, name) or force:
            setattr(layer if hasattr(layer, name) else self, name, value)
            return True
        return False

    # -- snapshots ---------------------------------------------------------------------------
    def get_state(self) -> Any:
        """Simulation fields only, as plain data (no RNG: the base class adds it)."""
        raise NotImplementedError

    def set_state(self, state: Any) -> None:
        """Inverse of :meth:`get_state`."""
        raise NotImplementedError

    def check_state(self, state: Any) -> None:
        """Refuse ``state`` (raise a BridgeError) before :meth:`restore_state` changes anything.

        By default every state is left to :meth:`set_state` (a refusal there is rolled back). An env
        whose ``set_state`` rebuilds objects, so that a rollback would not give back the same ones,
        checks here: the importers' pickled snapshots (``adapters/importers/source.py``).
        """

    def _why_no_snapshot(self) -> str:
        subject = f"{type(self).__name__}.clone_state"
        if type(self).get_state is Env.get_state:
            fix = "Implement get_state() (plain data) and set_state(), and set determinism = 'strong' on the class"
            return message(subject, "have get_state() and set_state() implemented", "neither overridden", fix)
        fix = "Set determinism = 'strong' on the class if a restore gives the same future bit for bit, else 'weak'"
        return message(subject, "have determinism 'strong' or 'weak' declared", "determinism='none' (the default)", fix)

    def clone_state(self, *, include_rng: bool = True) -> dict:
        """A plain-data snapshot: ``get_state()`` plus, by default, the RNG state."""
        cls = type(self)
        if self.determinism == "none" or cls.get_state is Env.get_state:
            raise ContractError(self._why_no_snapshot())
        snap = {"class": f"{cls.__module__}.{cls.__qualname__}", "state": self.get_state()}
        if include_rng:
            snap["rng"] = _snapshot.rng_state(self.np_random)
        return snap

    def restore_state(self, snapshot: dict) -> None:
        """Rewind to a snapshot from :meth:`clone_state` of an env of the same class.

        The whole snapshot is checked before anything changes (its maker, its keys, the RNG's
        kind); should ``set_state`` or the RNG state still be refused, the env is set back as it
        was and the error is a ContractError. A refused snapshot never leaves it half restored.
        """
        _restore(self, snapshot)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class Wrapper(Env):
    """Forwards the Env API to ``env``; subclasses override what they change.

    Other attributes are not forwarded (Gymnasium 1.x's rule): read them with ``env.unwrapped.x``
    or ``env.get_wrapper_attr("x")``. A ``__getattr__`` would also make every attribute load on
    every wrapper the interpreter's slow, unspecialized path: even one that only raises costs
    +4.2k instructions a CartPole snapshot+restore pair, 8 % (benchmarks/bench_core.py --instructions).
    """

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
        cls = type(self)
        return {
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "state": self.get_state(),
            "env": self.env.clone_state(include_rng=include_rng),
        }

    def restore_state(self, snapshot: dict) -> None:
        """Rewind the whole stack; the snapshot is checked at every level before any level changes."""
        _restore(self, snapshot)

    def get_wrapper_attr(self, name: str) -> Any:
        """``name`` from this wrapper if it has it, else from the env it wraps (and so on inwards)."""
        if hasattr(self, name):
            return getattr(self, name)
        return self.env.get_wrapper_attr(name)

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

"""The one single-env port under every single-env export (Gymnasium, gym 0.23, Dreamer-ready, MATLAB).

A :class:`Port` joins a neutral env, the runtime's two lowerings and one :class:`~bridge.guard.Guard`.
It owns what every export shares; each export only shapes its runtime's API around ``port.step``
and ``port.reset``:

* the per-step path: the action checked in the runtime's terms and decoded (before anything moves),
  the guarded neutral step (lifecycle, output, user exceptions named with env id and step; applied
  once: a facade env that guards itself, such as ``rlFunctionEnv``, is passed through), the
  observation checked (dtype, shape, discrete ranges; float bounds with ``strict=True``) and encoded;
* seeding: ``reset(seed=...)`` seeds the neutral env's one Generator (runtimes share it);
* snapshots: the neutral snapshot plus the export's own state (its options, the step count);
* close.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from bridge.adapters._shared.lowering import Lowering

from bridge.env import Env, qualname
from bridge.errors import ContractError, SpecError, message
from bridge.guard import Guard

__all__ = ["Port", "neutral_env"]


def neutral_env(env: Any, subject: str, fix: str) -> Env:
    """``env`` if it is a bridge.Env, else the house SpecError (``subject`` names the export)."""
    if not isinstance(env, Env):
        raise SpecError(message(subject, "be a bridge.Env or a registered id", type(env).__name__, fix))
    return env


def _own(layer: Any, name: str) -> Any:
    """``layer``'s own attribute ``name`` or None: no ``__getattr__`` forwarding, and no ``vars()``
    (in CPython 3.11+ that materializes the instance dict and slows every later attribute access)."""
    try:
        return object.__getattribute__(layer, name)
    except AttributeError:
        return None


def _inner_guards(env: Any) -> List[Guard]:
    """The guards of facade envs inside the wrapper chain (an rlFunctionEnv guards itself)."""
    found, layer = [], env
    while isinstance(layer, Env):
        inner = _own(layer, "_guard")
        if isinstance(inner, Guard) and inner.passable:
            found.append(inner)
        layer = _own(layer, "env")
    return found


def _passing(call: Callable[..., Any], guards: List[Guard]) -> Callable[..., Any]:
    """``call`` with the inner guards passed through for its duration: the port's guard checks once."""

    def through(*args: Any, **kwargs: Any) -> Any:
        for guard in guards:
            guard.through = True
        try:
            return call(*args, **kwargs)
        finally:
            for guard in guards:
                guard.through = False

    return through


class Port:
    """The port between one neutral env and one export (see module doc).

    Args:
        env: the neutral env (wrappers included); the export owns it from now on.
        observation: the runtime's observation lowering.
        action: the runtime's action lowering.
        label: how lifecycle errors name the export, e.g. ``"gymnasium env"``.
        check_actions: check every action in the runtime's terms before decoding it.
        strict: also check the float bounds of every observation.
        warn_after_end: see :class:`~bridge.guard.Guard` (gym 0.23 only).
    """

    def __init__(
        self,
        env: Env,
        observation: Lowering,
        action: Lowering,
        *,
        label: str,
        check_actions: bool = True,
        strict: bool = False,
        warn_after_end: bool = False,
    ) -> None:
        self.env = env
        self.observation, self.action = observation, action
        self.check_actions, self.strict = bool(check_actions), bool(strict)
        self.guard = Guard(env, label, strict=strict, warn_after_end=warn_after_end)
        self._wire()

    def _wire(self) -> None:
        """Bind the per-step path (after construction, a copy or an unpickle)."""
        inner = _inner_guards(self.env)
        self._env_step = _passing(self.env.step, inner) if inner else self.env.step
        self._env_reset = _passing(self.env.reset, inner) if inner else self.env.reset
        self._encode = None if self.observation.identity else self.observation.encode
        check = self.check_actions
        self.guard.bind(self._env_step, self.action.preparer(check), self._encode, self.action.table)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_env_step"], state["_env_reset"], state["_encode"]  # rebuilt by _wire
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._wire()

    @property
    def step(self) -> Callable[[Any], Tuple[Any, float, bool, bool, dict]]:
        """``step(runtime_action) -> (runtime_obs, reward, terminated, truncated, info)``."""
        return self.guard.checked_step

    @property
    def steps(self) -> int:
        """Steps since the last reset."""
        return self.guard.steps

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        """Reset the neutral env (``seed`` seeds its one Generator); the observation is encoded."""
        out = self.guard.reset(self._env_reset, seed, options)
        if self._encode is None:  # the guard returns only a checked (obs, info) tuple
            return out
        return self._encode(out[0]), out[1]

    def close(self) -> None:
        self.guard.close()
        self.env.close()

    def lifecycle(self) -> tuple:
        """The guard's state (for an export rebuilt in another process)."""
        return (self.guard.state, self.guard.steps, self.guard._ended_by)

    def set_lifecycle(self, lifecycle: tuple) -> None:
        self.guard.state, self.guard.steps, self.guard._ended_by = lifecycle

    # -- snapshots -----------------------------------------------------------------------------
    def clone_state(self, owner: Any, own: Dict[str, Any], include_rng: bool = True) -> dict:
        """``owner``'s snapshot: the neutral one plus ``own`` (the export's options) and the steps."""
        return {
            "class": qualname(owner),
            "adapter": {**own, "steps": self.steps},
            "env": self.env.clone_state(include_rng=include_rng),
        }

    def restore_state(self, owner: Any, own: Dict[str, Any], snapshot: Any) -> None:
        """Rewind to ``owner``'s snapshot; everything is checked before anything changes."""
        made_by = snapshot.get("class") if isinstance(snapshot, dict) else type(snapshot).__name__
        if made_by != qualname(owner):
            fix = "Restore snapshots only into the export that made them"
            raise ContractError(message("snapshot", f"come from {qualname(owner)}", made_by, fix))
        adapter = snapshot.get("adapter")
        steps = adapter.get("steps") if isinstance(adapter, dict) else None
        if type(steps) is not int or steps < 0 or "env" not in snapshot:
            fix = "Restore a snapshot made by clone_state() of this export"
            got = sorted(snapshot) if adapter is None else f"adapter={adapter!r}"
            raise ContractError(message("snapshot", "hold 'adapter' (with 'steps') and 'env'", got, fix))
        theirs = {k: v for k, v in adapter.items() if k != "steps"}
        if theirs != own:
            raise ContractError(
                message("snapshot export options", f"equal {own}", theirs, "Export with the same options")
            )
        self.env.restore_state(snapshot["env"])
        self.guard.restart(steps)

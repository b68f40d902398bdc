"""The Dreamer-ready legacy gym env and the ``to_dreamerv2`` chain of DreamerV2's own wrappers."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from bridge.adapters._shared.port import neutral_env
from bridge.adapters.dreamerv2.actions import ActionLowering
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.lowering import ObservationLowering
from bridge.adapters.gym.export import GymEnv

from bridge.env import Env
from bridge.errors import SpecError, message

__all__ = [
    "DreamerReadyEnv",
    "to_dreamer_ready",
    "to_dreamerv2",
    "build_chain",
    "wrap_chain",
    "PARALLEL",
]

PARALLEL = (None, "thread", "process")
DEFAULT_TIMEOUT = 60.0  # seconds a process worker may take for one call before it counts as hung


class DreamerReadyEnv(GymEnv):
    """A neutral env lowered for DreamerV2, behind the gym 0.23 API that ``common.GymWrapper`` wraps.

    It is the gym 0.23 export (:class:`~bridge.adapters.gym.export.GymEnv`, on the single-env
    port) with DreamerV2's lowerings: observations are a dict (:mod:`.lowering`), actions an index
    or a float array (:mod:`.actions`). ``step`` returns ``(obs, reward, done, info)`` with ``done =
    terminated or truncated`` and, on every step, ``info["is_terminal"] = terminated`` (GymWrapper
    otherwise treats every time-out as terminal). ``seed(s)`` applies at the next ``reset()``
    (GymWrapper resets without arguments).
    """

    def __init__(
        self,
        env: Env,
        *,
        size: Sequence[int] = (64, 64),
        action_bounds: Any = None,
        check_actions: bool = True,
        strict: bool = False,
        float64_as_float32: bool = True,
    ) -> None:
        neutral_env(env, "to_dreamerv2 env", "Pass a bridge.Env instance")
        self._args = (tuple(size), action_bounds, check_actions, strict, float64_as_float32)
        super().__init__(
            env,
            check_actions=check_actions,
            strict=strict,
            observation=ObservationLowering(env.observation_space, size, float64_as_float32),
            action=ActionLowering(env.action_space, action_bounds, check_actions),
            label="DreamerV2 env",
            warn_after_end=False,
        )
        modes = self.metadata["render_modes"]
        self.metadata = {"render_modes": modes, "render.modes": modes, "render_fps": env.metadata.get("render_fps")}

    @property
    def image_keys(self) -> List[str]:
        return list(self.observation_lowering.image_keys)

    @property
    def vector_keys(self) -> List[str]:
        return list(self.observation_lowering.vector_keys)

    def encode_action(self, action: Any) -> Any:
        """A neutral action -> this env's action (index or array): what the agent's one-hot / [-1, 1] maps to."""
        return self.action_lowering.encode(action)

    def render(self, mode: str = "rgb_array") -> Any:
        return self.env.render()

    def exported(self) -> Tuple[Env, Dict[str, Dict[str, Any]]]:
        """The neutral env; check it with targets=["dreamerv2"] and options for to_dreamerv2."""
        return self.env, {}

    def _options(self) -> dict:
        size, bounds, _, _, narrow = self._args
        return {"size": list(size), "float64_as_float32": narrow, "action_bounds": repr(bounds)}

    def __reduce__(self) -> tuple:
        # the lowerings hold closures; rebuild them instead (common.Async pickles act_space, and
        # OneHotAction's act_space holds a bound method of the whole chain)
        state = {"_pending_seed": self._pending_seed, "last_flags": self.last_flags}
        return (_rebuild, (self.env, self._args, state, self.port.lifecycle()))


def _rebuild(env: Env, args: tuple, state: dict, lifecycle: tuple) -> DreamerReadyEnv:
    size, bounds, check, strict, narrow = args
    ready = DreamerReadyEnv(
        env, size=size, action_bounds=bounds, check_actions=check, strict=strict, float64_as_float32=narrow
    )
    vars(ready).update(state)
    ready.port.set_lifecycle(lifecycle)
    return ready


def _resolve(env: Any) -> Env:
    if isinstance(env, Env):
        return env
    if isinstance(env, str):
        from bridge.registry import make

        return make(env)
    if callable(env):
        return env()
    raise SpecError(
        message(
            "to_dreamerv2 env",
            "be a bridge.Env, a registered id or a zero-argument factory",
            type(env).__name__,
            "Pass e.g. bridge.make('envbridge/GridWorld-v0')",
        )
    )


def to_dreamer_ready(
    env: Any,
    *,
    size: Sequence[int] = (64, 64),
    action_bounds: Any = None,
    check_actions: bool = True,
    seed: Optional[int] = None,
    strict: bool = False,
    float64_as_float32: bool = True,
) -> DreamerReadyEnv:
    """Lower ``env`` (an Env, a registered id or a factory) to the legacy gym env DreamerV2 wraps.

    ``strict=True`` also checks every observation against its space (not free; see
    docs/bad-input.md); ``float64_as_float32=False`` refuses float64 observations instead of
    presenting them as float32. Wrap the result with :func:`wrap_chain` for DreamerV2's chain.
    """
    neutral = _resolve(env)
    try:
        ready = DreamerReadyEnv(
            neutral,
            size=size,
            action_bounds=action_bounds,
            check_actions=check_actions,
            strict=strict,
            float64_as_float32=float64_as_float32,
        )
    except Exception:
        if neutral is not env:  # built here from an id or factory: a refusal leaves nothing open
            neutral.close()
        raise
    if seed is not None:
        ready.seed(seed)
    return ready


def build_chain(
    env: Any,
    size: Sequence[int] = (64, 64),
    time_limit: int = 0,
    action_bounds: Any = None,
    check_actions: bool = True,
    seed: Optional[int] = None,
    float64_as_float32: bool = True,
) -> Any:
    """DreamerV2's own wrapper chain, in ``api.train``'s order, over the Dreamer-ready env.

    A module-level function, so that ``functools.partial(build_chain, ...)`` pickles by reference
    for ``common.Async`` workers.
    """
    ready = to_dreamer_ready(
        env,
        size=size,
        action_bounds=action_bounds,
        check_actions=check_actions,
        seed=seed,
        float64_as_float32=float64_as_float32,
    )
    return wrap_chain(ready, size, time_limit)


def wrap_chain(ready: DreamerReadyEnv, size: Sequence[int] = (64, 64), time_limit: int = 0) -> Any:
    """Wrap a :class:`DreamerReadyEnv` in DreamerV2's chain (``api.train``'s order)."""
    common = load_dreamerv2().common
    chain = common.GymWrapper(ready)
    chain = common.ResizeImage(chain, tuple(size))
    chain = common.OneHotAction(chain) if ready.action_lowering.discrete else common.NormalizeAction(chain)
    return common.TimeLimit(chain, time_limit)


def to_dreamerv2(
    env: Any,
    *,
    size: Sequence[int] = (64, 64),
    time_limit: int = 0,
    parallel: Optional[str] = None,
    action_bounds: Any = None,
    check_actions: bool = True,
    seed: Optional[int] = None,
    float64_as_float32: bool = True,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
) -> Any:
    """Export ``env`` as the chain ``dreamerv2.api.train`` builds, from DreamerV2's own classes.

    ``GymWrapper -> ResizeImage -> OneHotAction | NormalizeAction -> TimeLimit`` over a
    :class:`DreamerReadyEnv`. With ``parallel="thread"`` or ``"process"`` the whole chain is built
    inside a worker and ``common.Async`` wraps it (for "process", ``env`` must pickle with
    cloudpickle: pass an id or a factory to build it in the worker; the wrapper is
    :class:`~bridge.adapters.dreamerv2.workers.WatchedAsync`, whose worker faults raise at once).

    Args:
        env: a bridge.Env, a registered id, or a zero-argument factory.
        size: the image size DreamerV2's ResizeImage produces.
        time_limit: DreamerV2's TimeLimit duration (0: none; the neutral TimeLimit also works).
        parallel: None, "thread" or "process".
        action_bounds: finite ``(low, high)`` for a Box action with infinite bounds.
        check_actions: validate each action (cheap); ``False`` skips it.
        seed: the seed of the first reset.
        float64_as_float32: present float64 observations as float32 (DreamerV2 computes in
            float32; announced by the "dreamerv2" check); False refuses them instead.
        timeout: seconds a "process" worker may take to answer one call (None: no limit).

    Raises:
        ConversionError: the env cannot be lowered losslessly; nothing is wrapped.
    """
    if parallel not in PARALLEL:
        raise SpecError(
            message(
                "to_dreamerv2 parallel", f"be one of {PARALLEL}", repr(parallel), "Pass None, 'thread' or 'process'"
            )
        )
    args = (tuple(size), time_limit, action_bounds, check_actions, seed, float64_as_float32)
    if parallel is None:
        return build_chain(env, *args)
    common = load_dreamerv2().common
    if isinstance(env, Env):  # lower once here: a ConversionError surfaces in the caller, not in the worker
        ObservationLowering(env.observation_space, size, float64_as_float32)
        ActionLowering(env.action_space, action_bounds, check_actions)
    ctor = functools.partial(build_chain, env, *args)
    if parallel == "thread":
        return common.Async(ctor, parallel)
    # a spawned worker unpickles DreamerV2's classes by their top-level names ("common.envs"):
    # it needs DreamerV2's folders on the sys.path it inherits at start, not ours afterwards
    saved, here = list(sys.path), os.path.dirname(load_dreamerv2().__file__)
    sys.path.extend([here, os.path.dirname(here)])
    from bridge.adapters.dreamerv2.workers import WatchedAsync, env_label

    try:  # DreamerV2's Async, but a dead or raising worker is an error naming the env and step
        return WatchedAsync(ctor, label=env_label(env), timeout=timeout)
    finally:
        sys.path[:] = saved

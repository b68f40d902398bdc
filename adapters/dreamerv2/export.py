"""The Dreamer-ready legacy gym env and the ``to_dreamerv2`` chain of DreamerV2's own wrappers."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, List, Optional, Sequence, Tuple

from bridge.adapters.dreamerv2.actions import ActionLowering
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.lowering import ObservationLowering, gym, lowering_summary

from bridge.env import Env
from bridge.errors import SpecError, message
from bridge.guard import Guard

__all__ = [
    "DreamerReadyEnv",
    "to_dreamer_ready",
    "to_dreamerv2",
    "build_chain",
    "wrap_chain",
    "PARALLEL",
]

PARALLEL = (None, "thread", "process")


class DreamerReadyEnv(gym.Env):
    """A neutral env lowered for DreamerV2, behind the gym 0.23 API that ``common.GymWrapper`` wraps.

    Observations are a dict (see :mod:`bridge.adapters.dreamerv2_lowering`); ``step`` returns
    ``(obs, reward, done, info)`` with ``done = terminated or truncated`` and, on every step,
    ``info["is_terminal"] = terminated`` (GymWrapper otherwise treats every time-out as terminal).
    ``seed(s)`` applies at the next ``reset()`` (GymWrapper resets without arguments).
    ``last_flags`` / ``last_action`` hold the neutral flags and action of the last step and
    ``step_count`` counts the steps that reached the neutral env (for checks).
    """

    def __init__(
        self,
        env: Env,
        *,
        size: Sequence[int] = (64, 64),
        action_bounds: Any = None,
        check_actions: bool = True,
        strict: bool = False,
    ) -> None:
        if not isinstance(env, Env):
            raise SpecError(
                message(
                    "to_dreamerv2 env",
                    "be a bridge.Env or a registered id",
                    type(env).__name__,
                    "Pass a bridge.Env instance",
                )
            )
        self._args = (tuple(size), action_bounds, check_actions)
        self.observation_lowering = ObservationLowering(env.observation_space, size)
        self.action_lowering = ActionLowering(env.action_space, action_bounds, check_actions)
        self.env = env
        self._env_step = env.step
        self._guard = Guard(env, "DreamerV2 env", strict=strict)  # lifecycle + user output (bridge.guard)
        self._guard.bind(self._env_step)
        self.observation_space = self.observation_lowering.space
        self.action_space = self.action_lowering.space
        self._encode = self.observation_lowering.encode
        self._decode_action = self.action_lowering.decode
        self._pending_seed: Optional[int] = None
        self.last_flags: Tuple[bool, bool] = (False, False)
        self.last_action: Any = None
        self.step_count = 0
        modes = list(env.metadata.get("render_modes", []))
        self.metadata = {"render_modes": modes, "render.modes": modes, "render_fps": env.metadata.get("render_fps")}

    @property
    def np_random(self) -> Any:  # type: ignore[override]
        return self.env.np_random

    @property
    def image_keys(self) -> List[str]:
        return list(self.observation_lowering.image_keys)

    @property
    def vector_keys(self) -> List[str]:
        return list(self.observation_lowering.vector_keys)

    def seed(self, seed: Optional[int] = None) -> List[Optional[int]]:
        self._pending_seed = seed
        return [seed]

    def reset(self, *, seed: Optional[int] = None, return_info: bool = False, options: Optional[dict] = None) -> Any:
        if seed is None:
            seed, self._pending_seed = self._pending_seed, None
        obs, info = self._guard.reset(self.env.reset, seed=seed, options=options)
        obs = self._encode(obs)
        return (obs, info) if return_info else obs

    def step(self, action: Any) -> Tuple[dict, float, bool, dict]:
        neutral_action = self._decode_action(action)  # raises ContractError before the env moves
        obs, reward, terminated, truncated, info = self._guard.checked_step(neutral_action)
        self.last_flags, self.last_action = (terminated, truncated), neutral_action
        self.step_count += 1
        info = dict(info, is_terminal=terminated)
        return self._encode(obs), reward, terminated or truncated, info

    def __reduce__(self) -> tuple:
        # the lowering holds closures; rebuild it instead (common.Async pickles act_space, and
        # OneHotAction's act_space holds a bound method of the whole chain)
        size, bounds, check = self._args
        state = {
            "_pending_seed": self._pending_seed,
            "last_flags": self.last_flags,
            "last_action": self.last_action,
            "step_count": self.step_count,
            "_guard": self._guard,  # lifecycle and strict travel with the env
        }
        return (_rebuild, (self.env, size, bounds, check, state))

    def decode_observation(self, obs: dict) -> Any:
        """A Dreamer observation dict (extra keys ignored) -> the neutral observation."""
        return self.observation_lowering.decode(obs)

    def encode_action(self, action: Any) -> Any:
        """A neutral action -> this env's action (index or array): what the agent's one-hot / [-1, 1] maps to."""
        inner = action["action"] if self.action_lowering.principal_key else action
        return self.action_lowering.encode(inner)

    def summary(self) -> dict:
        return lowering_summary(self.observation_lowering, self.action_lowering)

    def render(self, mode: str = "rgb_array") -> Any:
        return self.env.render()

    def close(self) -> None:
        self._guard.close()
        self.env.close()

    def __repr__(self) -> str:
        return f"<DreamerReadyEnv{self.env!r}>"


def _rebuild(env: Env, size: Sequence[int], bounds: Any, check: bool, state: dict) -> DreamerReadyEnv:
    ready = DreamerReadyEnv(env, size=size, action_bounds=bounds, check_actions=check)
    vars(ready).update(state)
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
) -> DreamerReadyEnv:
    """Lower ``env`` (an Env, a registered id or a factory) to the legacy gym env DreamerV2 wraps.

    ``strict=True`` also checks every observation against its space (not free; see
    docs/bad-input.md); wrap the result with :func:`wrap_chain` for DreamerV2's chain.
    """
    neutral = _resolve(env)
    try:
        ready = DreamerReadyEnv(
            neutral, size=size, action_bounds=action_bounds, check_actions=check_actions, strict=strict
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
) -> Any:
    """DreamerV2's own wrapper chain, in ``api.train``'s order, over the Dreamer-ready env.

    A module-level function, so that ``functools.partial(build_chain, ...)`` pickles by reference
    for ``common.Async`` workers.
    """
    ready = to_dreamer_ready(env, size=size, action_bounds=action_bounds, check_actions=check_actions, seed=seed)
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
) -> Any:
    """Export ``env`` as the chain ``dreamerv2.api.train`` builds, from DreamerV2's own classes.

    ``GymWrapper -> ResizeImage -> OneHotAction | NormalizeAction -> TimeLimit`` over a
    :class:`DreamerReadyEnv`. With ``parallel="thread"`` or ``"process"`` the whole chain is built
    inside a worker and ``common.Async`` wraps it (for "process", ``env`` must pickle with
    cloudpickle: pass an id or a factory to build it in the worker; the wrapper is
    :class:`~bridge.adapters.dreamerv2_async.WatchedAsync`, whose worker faults raise at once).

    Args:
        env: a bridge.Env, a registered id, or a zero-argument factory.
        size: the image size DreamerV2's ResizeImage produces.
        time_limit: DreamerV2's TimeLimit duration (0: none; the neutral TimeLimit also works).
        parallel: None, "thread" or "process".
        action_bounds: finite ``(low, high)`` for a Box action with infinite bounds.
        check_actions: validate each action (cheap); ``False`` skips it.
        seed: the seed of the first reset.

    Raises:
        ConversionError: the env cannot be lowered losslessly; nothing is wrapped.
    """
    if parallel not in PARALLEL:
        raise SpecError(
            message(
                "to_dreamerv2 parallel", f"be one of {PARALLEL}", repr(parallel), "Pass None, 'thread' or 'process'"
            )
        )
    if parallel is None:
        return build_chain(env, size, time_limit, action_bounds, check_actions, seed)
    common = load_dreamerv2().common
    if isinstance(env, Env):  # lower once here: a ConversionError surfaces in the caller, not in the worker
        DreamerReadyEnv(env, size=size, action_bounds=action_bounds, check_actions=check_actions)
    ctor = functools.partial(build_chain, env, tuple(size), time_limit, action_bounds, check_actions, seed)
    if parallel == "thread":
        return common.Async(ctor, parallel)
    # a spawned worker unpickles DreamerV2's classes by their top-level names ("common.envs"):
    # it needs DreamerV2's folders on the sys.path it inherits at start, not ours afterwards
    saved, here = list(sys.path), os.path.dirname(load_dreamerv2().__file__)
    sys.path.extend([here, os.path.dirname(here)])
    from bridge.adapters.dreamerv2.workers import WatchedAsync, env_label

    try:  # DreamerV2's Async, but a dead or raising worker is an error naming the env and step
        return WatchedAsync(ctor, label=env_label(env))
    finally:
        sys.path[:] = saved

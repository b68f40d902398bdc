"""The "matlab" conformance view: any neutral env seen through the facade, as a MATLAB user would.

The env's specs come from ``getObservationInfo`` / ``getActionInfo``; an :class:`rlFunctionEnv` is
built whose step and reset functions call the env, so every value crosses the facade's own
conversions (finite-set element values, DataTypes, channel lists). MATLAB has one flag, IsDone:
the env's TimeLimit moves outside the facade, as ``MaxStepsPerEpisode`` would, so a step that is
both terminated and truncated reads as terminated (``both_flags = False``).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from bridge.adapters.matlab.function_env import rlFunctionEnv
from bridge.adapters.matlab.validation import getActionInfo, getObservationInfo

from bridge import spaces
from bridge.conformance.replay import StepOut, View
from bridge.env import Env, TimeLimit


def _to_matlab_action(space: spaces.Space, action: Any) -> Any:
    """Neutral action -> the value MATLAB code holds (finite-set elements are doubles)."""
    if isinstance(space, spaces.Tuple):  # hybrid: [element, array]
        return [_to_matlab_action(s, a) for s, a in zip(space, action)]
    return float(action) if isinstance(space, spaces.Discrete) else action


def _to_neutral_action(space: spaces.Space, value: Any) -> Any:
    """The value the step function receives -> the wrapped env's neutral action."""
    if isinstance(space, spaces.Tuple):
        return tuple(_to_neutral_action(s, v) for s, v in zip(space, value))
    if isinstance(space, spaces.Discrete):
        return np.int64(value)
    return np.asarray(value, dtype=space.dtype).reshape(space.shape)


def _channels(space: spaces.Space) -> list:
    """The wrapped env's observation spaces, one per MATLAB channel (getObservationInfo's order)."""
    if isinstance(space, spaces.Dict):
        return list(space.spaces.values())
    return list(space) if isinstance(space, spaces.Tuple) else [space]


def _to_facade_observation(space: spaces.Space, keys: Optional[list], obs: Any) -> Any:
    """Wrapped env's observation -> the facade's (a finite set is its 0-based index; channels keyed)."""
    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        parts = list(obs.values()) if isinstance(space, spaces.Dict) else list(obs)
    else:
        parts = [obs]
    parts = [np.int64(v - s.start) if isinstance(s, spaces.Discrete) else v for s, v in zip(_channels(space), parts)]
    return parts[0] if keys is None else dict(zip(keys, parts))


def _from_facade_leaf(space: spaces.Space, value: Any) -> Any:
    if isinstance(space, spaces.Discrete):
        return np.int64(value + space.start)
    return value.reshape(()) if isinstance(space, spaces.Box) and not space.shape else value  # MATLAB's [1 1]


def _from_facade_observation(space: spaces.Space, keys: Optional[list], obs: Any) -> Any:
    """The facade's observation -> the wrapped env's (the inverse of :func:`_to_facade_observation`)."""
    parts = [obs] if keys is None else [obs[k] for k in keys]
    parts = [_from_facade_leaf(s, v) for s, v in zip(_channels(space), parts)]
    if isinstance(space, spaces.Dict):
        return dict(zip(space.keys(), parts))
    return tuple(parts) if isinstance(space, spaces.Tuple) else parts[0]


class MatlabView(View):
    """Neutral env -> rlFunctionEnv (+ TimeLimit outside, MATLAB's MaxStepsPerEpisode)."""

    name = "matlab"
    both_flags = False

    def __init__(self, env: Env) -> None:
        cap = env.max_episode_steps if isinstance(env, TimeLimit) else None
        self.inner = env.env if isinstance(env, TimeLimit) else env
        act_space, obs_space = self.inner.action_space, self.inner.observation_space

        def to_matlab(obs: Any) -> Any:
            return self.facade.to_matlab_observation(_to_facade_observation(obs_space, self._keys, obs))

        def reset_fcn(rng: np.random.Generator) -> Any:
            self.inner.unwrapped.np_random = rng  # one Generator, the facade's
            obs, _ = self.inner.reset()
            return to_matlab(obs), None

        def step_fcn(Action: Any, Info: Any) -> Any:
            obs, reward, terminated, _, _ = self.inner.step(_to_neutral_action(act_space, Action))
            return to_matlab(obs), reward, terminated, Info

        self.facade = rlFunctionEnv(
            getObservationInfo(self.inner), getActionInfo(self.inner), step_fcn, reset_fcn, validate=False
        )
        space = self.facade.observation_space
        channels = isinstance(space, spaces.Dict) and isinstance(obs_space, (spaces.Dict, spaces.Tuple))
        self._keys = list(space.keys()) if channels else None
        self._obs_space = obs_space
        self.env: Env = TimeLimit(self.facade, cap) if cap else self.facade
        self._act_space = act_space

    def reset(self, seed: Optional[int]) -> Any:
        return self.to_neutral_observation(self.env.reset(seed=seed)[0])

    def step(self, action: Any) -> StepOut:
        neutral = self.facade.to_neutral_action(_to_matlab_action(self._act_space, action))
        obs, reward, terminated, truncated, _ = self.env.step(neutral)
        return self.to_neutral_observation(obs), reward, terminated, truncated

    def to_neutral_observation(self, obs: Any) -> Any:
        """The facade's observation -> the wrapped env's (Discrete starts back, Tuple channels back)."""
        return _from_facade_observation(self._obs_space, self._keys, obs)

    def clone_state(self) -> Any:
        if self.inner.determinism == "none":
            raise NotImplementedError("this env declares no snapshots")
        return {"facade": self.env.clone_state(), "inner": self.inner.clone_state(include_rng=False)}

    def restore_state(self, snapshot: Any) -> None:
        self.env.restore_state(snapshot["facade"])  # the RNG state, restored in place
        self.inner.restore_state(snapshot["inner"])

    def close(self) -> None:
        self.inner.close()


"""The "matlab" conformance view: any neutral env seen through the facade, as a MATLAB user would.

The env's specs come from ``getObservationInfo`` / ``getActionInfo``; an :class:`rlFunctionEnv` is
built whose step and reset functions call the env, so every value crosses the facade's own
conversions (finite-set element values, DataTypes, channel lists). MATLAB has one flag, IsDone:
the env's TimeLimit moves outside the facade, as ``MaxStepsPerEpisode`` would, so a step that is
both terminated and truncated reads as terminated (``both_flags = False``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from bridge import spaces
from bridge.adapters.matlab.function_env import rlFunctionEnv
from bridge.adapters.matlab.validation import getActionInfo, getObservationInfo
from bridge.conformance.replay import StepOut, View, register_view
from bridge.env import Env, TimeLimit


def _to_matlab_action(space: spaces.Space, action: Any) -> Any:
    """Neutral action -> the value MATLAB code holds (finite-set elements are doubles)."""
    return float(action) if isinstance(space, spaces.Discrete) else action


def _to_neutral_action(space: spaces.Space, value: Any) -> Any:
    """The value the step function receives -> the wrapped env's neutral action."""
    if isinstance(space, spaces.Discrete):
        return np.int64(value)
    return np.asarray(value, dtype=space.dtype).reshape(space.shape)


class MatlabView(View):
    """Neutral env -> rlFunctionEnv (+ TimeLimit outside, MATLAB's MaxStepsPerEpisode)."""

    name = "matlab"
    both_flags = False

    def __init__(self, env: Env) -> None:
        cap = env.max_episode_steps if isinstance(env, TimeLimit) else None
        self.inner = env.env if isinstance(env, TimeLimit) else env
        act_space = self.inner.action_space

        def reset_fcn(rng: np.random.Generator) -> Any:
            self.inner.unwrapped.np_random = rng  # one Generator, the facade's
            obs, _ = self.inner.reset()
            return self.facade.to_matlab_observation(obs), None

        def step_fcn(Action: Any, Info: Any) -> Any:
            obs, reward, terminated, _, _ = self.inner.step(_to_neutral_action(act_space, Action))
            return self.facade.to_matlab_observation(obs), reward, terminated, Info

        self.facade = rlFunctionEnv(getObservationInfo(self.inner), getActionInfo(self.inner), step_fcn, reset_fcn, validate=False)
        self.env: Env = TimeLimit(self.facade, cap) if cap else self.facade
        self._act_space = act_space

    def reset(self, seed: Optional[int]) -> Any:
        return self.env.reset(seed=seed)[0]

    def step(self, action: Any) -> StepOut:
        neutral = self.facade.to_neutral_action(_to_matlab_action(self._act_space, action))
        obs, reward, terminated, truncated, _ = self.env.step(neutral)
        return obs, reward, terminated, truncated

    def clone_state(self) -> Any:
        if self.inner.determinism == "none":
            raise NotImplementedError("this env declares no snapshots")
        return {"facade": self.env.clone_state(), "inner": self.inner.clone_state(include_rng=False)}

    def restore_state(self, snapshot: Any) -> None:
        self.env.restore_state(snapshot["facade"])  # the RNG state, restored in place
        self.inner.restore_state(snapshot["inner"])

    def close(self) -> None:
        self.inner.close()


def _factory(make_env: Callable[[], Env]) -> View:
    return MatlabView(make_env())


register_view("matlab", _factory)

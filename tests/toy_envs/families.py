"""The five env families a new user ported (issue 30, "Must show"), written in each shape:

* :func:`double_integrator`: an ``rlFunctionEnv`` with a ``[2 1]`` state and MATLAB's usual continuous
  ``rlNumericSpec([1 1])`` force;
* :func:`column_and_row`: a ``[2 1]`` column observation and a ``[1 2]`` row action;
* :class:`CameraAndState`: a Dict of a 36x36 RGB image and a vector, with a ``Discrete(3, start=1)``
  action (36x36: the smallest image SB3's default CNN convolves);
* :class:`TinyTreasure`: a 16x16 image, trained with :mod:`toy_envs.small_cnn`'s extractor;
* :class:`Tracker`: an env that never terminates, only its TimeLimit truncates.

Zero-argument factories (``toy_envs.families:double_integrator``) so the CLI can name each one.
numpy and bridge only at import (every era uses them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import bridge
from bridge import spaces

STEPS = 8  # every family's episodes are cut here: tiny budgets, several episodes per run


def double_integrator() -> bridge.Env:
    """``x'' = u``: position and velocity in a ``[2 1]`` column, the force a ``[1 1]`` in [-1, 1]."""
    from bridge.adapters.matlab import rlFunctionEnv, rlNumericSpec

    obs = rlNumericSpec([2, 1], LowerLimit=-10.0, UpperLimit=10.0)
    obs.Name = "state"
    act = rlNumericSpec([1, 1], LowerLimit=-1.0, UpperLimit=1.0)
    act.Name = "force"

    def step(Action, Info):
        pos, vel = float(Info[0, 0]), float(Info[1, 0])
        vel = vel + 0.1 * float(Action[0, 0])
        pos = float(np.clip(pos + 0.1 * vel, -10.0, 10.0))
        state = np.array([[pos], [float(np.clip(vel, -10.0, 10.0))]])
        return state, -abs(pos), abs(pos) < 0.05, state

    def reset():
        state = np.array([[1.0], [0.0]])
        return state, state

    return bridge.TimeLimit(rlFunctionEnv(obs, act, step, reset), STEPS)


def column_and_row() -> bridge.Env:
    """A ``[2 1]`` column observation and a ``[1 2]`` row action (both MATLAB-shaped Boxes)."""
    from bridge.adapters.matlab import rlFunctionEnv, rlNumericSpec

    obs = rlNumericSpec([2, 1], LowerLimit=-5.0, UpperLimit=5.0)
    act = rlNumericSpec([1, 2], LowerLimit=-1.0, UpperLimit=1.0)

    def step(Action, Info):
        state = np.clip(Info + 0.5 * Action.reshape(2, 1), -5.0, 5.0)
        return state, -float(np.abs(state).sum()), False, state

    def reset():
        state = np.array([[2.0], [-2.0]])
        return state, state

    return bridge.TimeLimit(rlFunctionEnv(obs, act, step, reset), STEPS)


class CameraAndState(bridge.Env):
    """A Dict of an RGB image and a 2-vector; actions 1, 2, 3 move a bar left, stay, right."""

    metadata = {"render_modes": [], "render_fps": None}

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            image=spaces.Image(36, 36, 3), state=spaces.Box(-1.0, 1.0, (2,), np.float32)
        )
        self.action_space = spaces.Discrete(3, start=1)
        self.x = 0

    def _obs(self) -> Any:
        image = np.zeros((36, 36, 3), np.uint8)
        image[:, 12 + 4 * self.x, 1] = 255
        return {"image": image, "state": np.array([self.x / 3.0, 0.0], np.float32)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = int(self.np_random.integers(-2, 3))
        return self._obs(), {}

    def step(self, action):
        self.x = int(np.clip(self.x + int(action) - 2, -3, 3))
        return self._obs(), -abs(self.x) / 3.0, self.x == 0, False, {}


def camera_and_state() -> bridge.Env:
    return bridge.TimeLimit(CameraAndState(), STEPS)


class TinyTreasure(bridge.Env):
    """A 16x16 grid as an image: a dot walks (4 moves) to the treasure in a corner."""

    metadata = {"render_modes": [], "render_fps": None}
    MOVES = ((0, 1), (0, -1), (1, 0), (-1, 0))

    def __init__(self) -> None:
        self.observation_space = spaces.Image(16, 16, 3)
        self.action_space = spaces.Discrete(4)
        self.pos = np.zeros(2, np.int64)

    def _obs(self) -> np.ndarray:
        frame = np.zeros((16, 16, 3), np.uint8)
        frame[15, 15, 0] = 255
        frame[self.pos[0], self.pos[1], 2] = 255
        return frame

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = self.np_random.integers(8, 16, 2)
        return self._obs(), {}

    def step(self, action):
        self.pos = np.clip(self.pos + self.MOVES[int(action)], 0, 15)
        found = bool((self.pos == 15).all())
        return self._obs(), 1.0 if found else -0.01, found, False, {}


def tiny_treasure() -> bridge.Env:
    return bridge.TimeLimit(TinyTreasure(), STEPS)


class Tracker(bridge.Env):
    """Follow a drifting target with a velocity in [-1, 1]; never terminates (only truncated)."""

    metadata = {"render_modes": [], "render_fps": None}

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-5.0, 5.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.state = np.zeros(2, np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.state.copy(), {}

    def step(self, action):
        drift = np.float32(self.np_random.normal(0, 0.05))
        self.state = np.clip(self.state + np.array([0.2 * action[0], drift], np.float32), -5, 5).astype(np.float32)
        return self.state.copy(), -float(abs(self.state[0] - self.state[1])), False, False, {}


def tracker() -> bridge.Env:
    return bridge.TimeLimit(Tracker(), STEPS)

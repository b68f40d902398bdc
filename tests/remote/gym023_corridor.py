"""A gym-0.23-only env (gym 0.23 does not import on numpy 2): hosted in the legacy venv by
``bridge.remote`` and trained on from the modern one (tests/remote/test_sb3_on_a_legacy_host.py).

``GymCorridor`` is written against gym 0.23's API (``seed`` through ``reset(seed=)``, 4-tuple
``step``, ``done``); ``Corridor`` is the bridge.Env glue that drives it. The resolver takes
``GymCorridor`` itself too (through ``from_gym``, in the host): the test compares the two."""

from __future__ import annotations

import gym
import numpy as np
from gym import spaces as gym_spaces

import bridge
from bridge import spaces

LENGTH, LIMIT = 6, 30


class GymCorridor(gym.Env):
    """Walk right from cell 0 to cell LENGTH - 1 (reward 1, done); left/right; LIMIT steps."""

    observation_space = gym_spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym_spaces.Discrete(2)

    def reset(self, *, seed=None, return_info=False, options=None):
        super().reset(seed=seed)
        self.cell, self.t = 0, 0
        return self._obs()

    def step(self, action):
        self.t += 1
        self.cell = int(np.clip(self.cell + (1 if int(action) == 1 else -1), 0, LENGTH - 1))
        at_goal = self.cell == LENGTH - 1
        done = at_goal or self.t >= LIMIT
        info = {"TimeLimit.truncated": bool(done and not at_goal), "gym": gym.__version__}
        return self._obs(), 1.0 if at_goal else 0.0, done, info

    def _obs(self):
        return np.array([self.cell / (LENGTH - 1)], dtype=np.float32)


class Corridor(bridge.Env):
    observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self) -> None:
        self.gym_env = GymCorridor()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.gym_env.reset(seed=seed), {}

    def step(self, action):
        obs, reward, done, info = self.gym_env.step(int(action))
        truncated = bool(info.pop("TimeLimit.truncated"))
        return obs, float(reward), done and not truncated, truncated, info

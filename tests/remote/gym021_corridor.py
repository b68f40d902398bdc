"""A gym-0.21-style env, as most published gym envs still are: ``seed()`` then ``reset()`` (which
takes no seed and returns the observation alone) and a 4-tuple ``step`` whose time-out is only
``info["TimeLimit.truncated"]``. Hosted in the legacy venv (gym 0.23.1 installed, none of its newer
API used) and trained on by SB3 from the modern one (tests/remote/test_sb3_on_a_legacy_host.py),
through ``bridge.from_gym``, which reads the API from the env itself.
"""

from __future__ import annotations

import gym
import numpy as np
from gym import spaces as gym_spaces
from gym.utils import seeding

import bridge

LENGTH, LIMIT = 6, 30


class Gym021Corridor(gym.Env):
    """Walk right from cell 0, 1 or 2 (drawn at reset) to cell LENGTH - 1 (reward 1); LIMIT steps."""

    observation_space = gym_spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym_spaces.Discrete(2)

    def __init__(self):
        self.seed()

    def seed(self, seed=None):
        self.np_random, seed = seeding.np_random(seed)
        return [seed]

    def reset(self):
        self.cell, self.t = int(self.np_random.integers(0, 3)), 0
        return self._obs()

    def step(self, action):
        self.t += 1
        self.cell = int(np.clip(self.cell + (1 if int(action) == 1 else -1), 0, LENGTH - 1))
        at_goal = self.cell == LENGTH - 1
        done = at_goal or self.t >= LIMIT
        info = {"TimeLimit.truncated": True} if done and not at_goal else {}
        return self._obs(), 1.0 if at_goal else 0.0, done, info

    def _obs(self):
        return np.array([self.cell / (LENGTH - 1)], dtype=np.float32)


def corridor() -> bridge.Env:
    """The factory the host builds: the 0.21-style env through from_gym."""
    return bridge.from_gym(Gym021Corridor())

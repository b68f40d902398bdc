"""Envs with deliberate defects, importable as ``toy_envs.broken:<Name>`` by the CLI tests."""

from __future__ import annotations

import numpy as np

import bridge
from bridge import spaces


class ManyDefects(bridge.Env):
    """numpy reward, numpy flag, the reserved info key and a float64 observation, all at once."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2), np.float64(1.0), np.bool_(False), False, {"episode": {}}

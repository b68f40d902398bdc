"""Envs the remote tests host in the other interpreter (imported there as remote_envs.py:NAME)."""

from __future__ import annotations

import os
import time

import numpy as np

import bridge
from bridge import spaces


class Faulty(bridge.Env):
    """Steps fine until step ``at``, then does ``how``: "raise", "die" (SIGKILL itself), "hang"."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, how: str = "raise", at: int = 2) -> None:
        self.how, self.at, self.t = how, at, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.t == self.at:
            if self.how == "raise":
                raise ValueError("the pole broke")
            if self.how == "die":
                os.kill(os.getpid(), 9)
            time.sleep(60)
        return np.zeros(2, np.float32), 0.0, False, False, {"t": self.t}

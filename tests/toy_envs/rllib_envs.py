"""Envs of the RLlib tests: an offset Discrete action that records what it gets, one that fails on cue.

They are built inside RLlib's env runners (other processes, other nodes), so whatever a test reads
back travels through files or through the env itself, never through module state of the driver.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from bridge import spaces
from bridge.env import Env

__all__ = ["OffsetChoice", "FailOnce"]


class OffsetChoice(Env):
    """Actions are Discrete(3, start=1); action 2 pays 1. Every action received is kept in ``seen``."""

    def __init__(self, length: int = 10) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(3, start=1)
        self.length = int(length)
        self.seen: set = set()
        self._t = 0

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Any:
        super().reset(seed=seed)
        self._t = 0
        return self._obs(), {}

    def _obs(self) -> np.ndarray:
        return np.array([self._t / self.length, 1.0], dtype=np.float32)

    def step(self, action: Any) -> Any:
        self.seen.add(int(action))
        self._t += 1
        return self._obs(), float(action == 2), self._t >= self.length, False, {}


class FailOnce(Env):
    """Raises ``ValueError("boom")`` at its ``fail_at``-th step of its lifetime (fail_at=30: step 10
    of its second episode; episodes are 20 steps long), in the first env of all runners that gets
    there: the one that creates ``marker`` first."""

    def __init__(self, fail_at: int = 30, marker: str = "") -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.fail_at, self.marker = int(fail_at), str(marker)
        self._steps = self._t = 0

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Any:
        super().reset(seed=seed)
        self._t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action: Any) -> Any:
        self._steps += 1
        self._t += 1
        if self._steps == self.fail_at and self._first():
            raise ValueError("boom")
        return np.full(2, 0.5 * int(action), np.float32), 1.0, self._t >= 20, False, {}

    def _first(self) -> bool:
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
            return True
        except FileExistsError:
            return False

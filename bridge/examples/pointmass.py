"""PointMass: steer a point to the origin with a continuous action."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.env import Env


class PointMass(Env):
    """A point in [-1, 1]^2 moved by ``0.1 * action``, action ``Box(-1, 1, (2,))``.

    Reward: minus the distance to the origin; terminated (reward +1) within 0.1 of it.
    Registered as ``envbridge/PointMass-v0`` with a 50-step limit. Strong determinism.
    """

    determinism = "strong"

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.pos = np.zeros(2, dtype=np.float32)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1.0, 1.0, size=2).astype(np.float32)
        return self.pos.copy(), {}

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, dict]:
        move = np.clip(np.asarray(action, dtype=np.float32), -1.0, 1.0)
        self.pos = np.clip(self.pos + np.float32(0.1) * move, -1.0, 1.0).astype(np.float32)
        distance = float(np.linalg.norm(self.pos))
        terminated = distance < 0.1
        reward = 1.0 if terminated else -distance
        return self.pos.copy(), reward, terminated, False, {"distance": distance}

    def get_state(self) -> dict:
        return {"pos": self.pos.copy()}

    def set_state(self, state: dict) -> None:
        self.pos = np.asarray(state["pos"], dtype=np.float32).copy()

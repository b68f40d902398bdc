"""GoalReach: a goal-conditioned env with a batch ``compute_reward`` (for HER)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.env import Env


class GoalReach(Env):
    """Move a point in 3-D toward a goal; sparse reward 0 within ``tolerance``, else -1.

    Observation ``Dict(observation, achieved_goal, desired_goal)``, each ``Box(-10, 10, (3,))``;
    action ``Box(-1, 1, (3,))`` moves the point by ``0.3 * action``. Episodes end by truncation only
    (the usual HER setting). Registered as ``envbridge/GoalReach-v0`` (30 steps). Strong.
    """

    determinism = "strong"

    def __init__(self, tolerance: float = 0.3) -> None:
        box = spaces.Box(-10.0, 10.0, (3,), np.float32)
        self.observation_space = spaces.Dict(observation=box, achieved_goal=box, desired_goal=box)
        self.action_space = spaces.Box(-1.0, 1.0, (3,), np.float32)
        self.tolerance = float(tolerance)
        self.pos = np.zeros(3, dtype=np.float32)
        self.goal = np.zeros(3, dtype=np.float32)

    def compute_reward(self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any) -> np.ndarray:
        """-1 where the goal is farther than ``tolerance`` else 0; works on one goal or a batch."""
        distance = np.linalg.norm(np.asarray(achieved_goal) - np.asarray(desired_goal), axis=-1)
        return -(distance > self.tolerance).astype(np.float32)

    def _obs(self) -> dict:
        return {"observation": self.pos.copy(), "achieved_goal": self.pos.copy(), "desired_goal": self.goal.copy()}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[dict, dict]:
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1.0, 1.0, size=3).astype(np.float32)
        self.goal = self.np_random.uniform(-1.0, 1.0, size=3).astype(np.float32)
        return self._obs(), {"is_success": False}

    def step(self, action: Any) -> Tuple[dict, float, bool, bool, dict]:
        move = np.clip(np.asarray(action, dtype=np.float32), -1.0, 1.0)
        self.pos = np.clip(self.pos + np.float32(0.3) * move, -10.0, 10.0).astype(np.float32)
        reward = float(self.compute_reward(self.pos, self.goal, None))
        return self._obs(), reward, False, False, {"is_success": reward == 0.0}

    def get_state(self) -> dict:
        return {"pos": self.pos.copy(), "goal": self.goal.copy()}

    def set_state(self, state: dict) -> None:
        self.pos = np.asarray(state["pos"], dtype=np.float32).copy()
        self.goal = np.asarray(state["goal"], dtype=np.float32).copy()

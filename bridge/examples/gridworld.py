"""GridWorld: walk to a random goal on a square grid (the SB3 custom-env template, neutral)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.env import Env

# up, down, left, right as (dx, dy) on screen coordinates
_MOVES = np.array([[0, -1], [0, 1], [-1, 0], [1, 0]], dtype=np.int64)


class GridWorld(Env):
    """An agent and a goal on a ``size`` x ``size`` grid.

    Observation: ``Box(0, size - 1, (4,), float32)`` = agent (x, y) then goal (x, y).
    Action: ``Discrete(4)`` = up, down, left, right. Reward: 1.0 on reaching the goal (terminated),
    else -0.01. Registered as ``envbridge/GridWorld-v0`` with a 100-step limit. ``step`` draws no
    randomness, so snapshots are ``strong``.
    """

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 4}
    determinism = "strong"

    def __init__(self, size: int = 5, render_mode: Optional[str] = None) -> None:
        self.size = int(size)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, self.size - 1, (4,), np.float32)
        self.action_space = spaces.Discrete(4)
        self.agent = np.zeros(2, dtype=np.int64)
        self.goal = np.zeros(2, dtype=np.int64)

    def _obs(self) -> np.ndarray:
        return np.concatenate([self.agent, self.goal]).astype(np.float32)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.agent = self.np_random.integers(0, self.size, size=2)
        self.goal = self.agent
        while np.array_equal(self.goal, self.agent):
            self.goal = self.np_random.integers(0, self.size, size=2)
        return self._obs(), {"distance": int(np.abs(self.goal - self.agent).sum())}

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, dict]:
        self.agent = np.clip(self.agent + _MOVES[int(action)], 0, self.size - 1)
        distance = int(np.abs(self.goal - self.agent).sum())
        terminated = distance == 0
        reward = 1.0 if terminated else -0.01
        return self._obs(), reward, terminated, False, {"distance": distance}

    def render(self) -> Any:
        if self.render_mode == "ansi":
            rows = [["." for _ in range(self.size)] for _ in range(self.size)]
            rows[int(self.goal[1])][int(self.goal[0])] = "G"
            rows[int(self.agent[1])][int(self.agent[0])] = "A"
            return "\n".join("".join(r) for r in rows) + "\n"
        if self.render_mode == "rgb_array":
            cell = 16
            frame = np.full((self.size * cell, self.size * cell, 3), 255, dtype=np.uint8)
            for pos, color in ((self.goal, (0, 160, 0)), (self.agent, (200, 0, 0))):
                x, y = int(pos[0]) * cell, int(pos[1]) * cell
                frame[y + 2 : y + cell - 2, x + 2 : x + cell - 2] = color
            return frame
        return None

    def get_state(self) -> dict:
        return {"agent": self.agent.copy(), "goal": self.goal.copy()}

    def set_state(self, state: dict) -> None:
        self.agent = np.asarray(state["agent"], dtype=np.int64).copy()
        self.goal = np.asarray(state["goal"], dtype=np.int64).copy()

"""MultiModal: a Dict observation with an image, a vector and a discrete entry."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.env import Env


class MultiModal(Env):
    """Move a cursor on a 1-D track of 8 cells to a lamp; three sensors see the same world.

    Observation ``Dict(image=Image(64, 64, 3), vector=Box(-10, 10, (4,)), discrete=Discrete(3))``:
    the image draws cursor and target; the vector holds (cursor, target, offset, steps/10); the
    discrete entry is the sign of the offset (0 left, 1 here, 2 right). Action ``Discrete(3)``:
    left, stay, right. Reward 1.0 on reaching the target (terminated), else -0.05.
    Registered as ``envbridge/MultiModal-v0`` (40 steps). Strong determinism.
    """

    determinism = "strong"
    _CELLS = 8

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            image=spaces.Image(64, 64, 3),
            vector=spaces.Box(-10.0, 10.0, (4,), np.float32),
            discrete=spaces.Discrete(3),
        )
        self.action_space = spaces.Discrete(3)
        self.cursor = 0
        self.target = 0
        self.steps = 0

    def _obs(self) -> dict:
        image = np.zeros((64, 64, 3), dtype=np.uint8)
        image[24:40, self.target * 8 : self.target * 8 + 8, 1] = 255
        image[28:36, self.cursor * 8 + 2 : self.cursor * 8 + 6, 0] = 255
        offset = self.target - self.cursor
        vector = np.array([self.cursor, self.target, offset, min(self.steps / 10.0, 10.0)], dtype=np.float32)
        return {"image": image, "vector": vector, "discrete": np.int64(np.sign(offset) + 1)}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[dict, dict]:
        super().reset(seed=seed)
        # integers() streams are stable across numpy 1.19 .. 2.x; choice(replace=False) is not promised
        self.cursor = int(self.np_random.integers(self._CELLS))
        self.target = int(self.np_random.integers(self._CELLS - 1))
        self.target += int(self.target >= self.cursor)
        self.steps = 0
        return self._obs(), {}

    def step(self, action: Any) -> Tuple[dict, float, bool, bool, dict]:
        self.cursor = int(np.clip(self.cursor + int(action) - 1, 0, self._CELLS - 1))
        self.steps += 1
        terminated = self.cursor == self.target
        return self._obs(), (1.0 if terminated else -0.05), terminated, False, {}

    def get_state(self) -> dict:
        return {"cursor": self.cursor, "target": self.target, "steps": self.steps}

    def set_state(self, state: dict) -> None:
        self.cursor, self.target, self.steps = int(state["cursor"]), int(state["target"]), int(state["steps"])

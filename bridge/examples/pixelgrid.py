"""PixelGrid: GridWorld seen through a 64x64 RGB image."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.examples.gridworld import GridWorld


class PixelGrid(GridWorld):
    """GridWorld on a 4x4 grid whose observation is ``Image(64, 64, 3)`` (16-pixel cells).

    The agent is red, the goal green. Registered as ``envbridge/PixelGrid-v0`` (50 steps).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, render_mode: Optional[str] = None) -> None:
        super().__init__(size=4, render_mode=render_mode)
        self.observation_space = spaces.Image(64, 64, 3)

    def _obs(self) -> np.ndarray:
        frame = np.zeros((64, 64, 3), dtype=np.uint8)
        for pos, channel in ((self.goal, 1), (self.agent, 0)):
            x, y = int(pos[0]) * 16, int(pos[1]) * 16
            frame[y + 2 : y + 14, x + 2 : x + 14, channel] = 255
        return frame

    def render(self) -> Any:
        return self._obs() if self.render_mode == "rgb_array" else None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        return super().reset(seed=seed, options=options)

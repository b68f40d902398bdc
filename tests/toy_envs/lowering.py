"""Small neutral envs whose spaces need lowering (shared by the gymnasium and sb3 tests).

:func:`register` registers each under ``envbridge-test/...`` so its export has a spec (Gymnasium's
checker then rebuilds it for every render mode instead of warning).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

import bridge
from bridge import spaces
from bridge.vector import VectorEnv


class _Base(bridge.Env):
    """A counter walking on [0, 10]; ``step`` draws nothing from the Generator (strong)."""

    determinism = "strong"

    def __init__(self) -> None:
        self.pos = 0
        self.last = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        super().reset(seed=seed)
        self.pos = int(self.np_random.integers(0, 10))
        return self._obs(), {}

    def _move(self, delta: int) -> Tuple[Any, float, bool, bool, dict]:
        self.pos = int(np.clip(self.pos + delta, 0, 10))
        return self._obs(), float(self.pos) / 10.0, self.pos == 10, False, {}

    def get_state(self) -> dict:
        return {"pos": self.pos}

    def set_state(self, state: dict) -> None:
        self.pos = int(state["pos"])


class ShiftedDiscreteEnv(_Base):
    """Action ``Discrete(3, start=-1)``: move by the action itself (-1, 0 or +1)."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Box(0, 10, (1,), np.float32)
        self.action_space = spaces.Discrete(3, start=-1)

    def _obs(self) -> np.ndarray:
        return np.array([self.pos], dtype=np.float32)

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        self.last = action
        return self._move(int(action))


class GridActionEnv(_Base):
    """Action: a 2-D ``MultiDiscrete([[3, 2], [2, 4]], start=[[-1, 0], [0, 1]])``; moves by its sum."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Box(0, 10, (1,), np.float32)
        self.action_space = spaces.MultiDiscrete(np.array([[3, 2], [2, 4]]), np.array([[-1, 0], [0, 1]]))

    def _obs(self) -> np.ndarray:
        return np.array([self.pos], dtype=np.float32)

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        self.last = action
        return self._move(int(np.sum(action)) - 3)


class TupleObsEnv(_Base):
    """Observation ``Tuple(Box(0, 10, (2,)), Discrete(11, start=-5), Dict(flag=MultiBinary((2, 2))))``."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Tuple(
            [
                spaces.Box(0, 10, (2,), np.float32),
                spaces.Discrete(11, start=-5),
                spaces.Dict(flag=spaces.MultiBinary([2, 2])),
            ]
        )
        self.action_space = spaces.Discrete(2)

    def _obs(self) -> tuple:
        flag = np.array([[self.pos % 2, 1], [0, self.pos > 5]], dtype=np.int8)
        return (np.array([self.pos, 10 - self.pos], dtype=np.float32), np.int64(self.pos - 5), {"flag": flag})

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        return self._move(1 if int(action) == 1 else -1)


class ImageObsEnv(_Base):
    """Observation ``Image(40, 48, 3)`` (not square, so a wrong transpose shows)."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Image(40, 48, 3)
        self.action_space = spaces.Discrete(2)

    def _obs(self) -> np.ndarray:
        frame = np.zeros((40, 48, 3), dtype=np.uint8)
        frame[: 4 * self.pos + 1, :, 0] = 200
        frame[:, : self.pos + 1, 2] = 50
        return frame

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        return self._move(1 if int(action) == 1 else -1)


class HybridActionEnv(_Base):
    """Action ``Tuple(Discrete(2), Box(-1, 1, (1,)))``: direction and a continuous speed."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Box(0, 10, (1,), np.float32)
        self.action_space = spaces.Tuple([spaces.Discrete(2), spaces.Box(-1.0, 1.0, (1,), np.float32)])

    def _obs(self) -> np.ndarray:
        return np.array([self.pos], dtype=np.float32)

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        direction, speed = action
        return self._move(int(round((1 if int(direction) else -1) * (1 + float(speed[0])))))


class CapEnv(bridge.Env):
    """Counts steps; action 1 terminates; ``both=True`` also truncates on the terminating step."""

    def __init__(self, both: bool = False) -> None:
        self.observation_space = spaces.Box(0, 100, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.both = both
        self.count = 0

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        super().reset(seed=seed)
        self.count = 0
        return np.array([0.0], dtype=np.float32), {}

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        self.count += 1
        terminated = int(action) == 1
        return np.array([self.count], dtype=np.float32), 1.0, terminated, terminated and self.both, {}


class CapVector(VectorEnv):
    """``num_envs`` step counters in one batch (same-step): action 1 terminates, ``cap`` truncates.

    Flags are raw: on the cap step a terminating env reports both terminated and truncated.
    """

    def __init__(self, num_envs: int = 3, cap: int = 4) -> None:
        self.num_envs = num_envs
        self.cap = cap
        self.autoreset_mode = "same-step"
        self.single_observation_space = spaces.Box(0, 100, (1,), np.float32)
        self.single_action_space = spaces.Discrete(2)
        self.count = np.zeros(num_envs, dtype=np.int64)

    def reset_envs(self, mask: np.ndarray, seeds: Any, options: Optional[dict]) -> Tuple[np.ndarray, dict]:
        self.count[mask] = 0
        return self.count[:, None].astype(np.float32), {}

    def step_envs(
        self, actions: Any, active: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        self.count[active] += 1
        terminated = np.asarray(actions) == 1
        truncated = self.count >= self.cap
        return self.count[:, None].astype(np.float32), np.ones(self.num_envs), terminated, truncated, {}


LOWERING_ENVS = {
    "envbridge-test/ShiftedDiscrete-v0": ShiftedDiscreteEnv,
    "envbridge-test/GridAction-v0": GridActionEnv,
    "envbridge-test/TupleObs-v0": TupleObsEnv,
    "envbridge-test/ImageObs-v0": ImageObsEnv,
}


def register() -> None:
    """Register the envs above under their test ids (each test module that uses an id calls it)."""
    for env_id, cls in LOWERING_ENVS.items():
        bridge.register(env_id, cls, max_episode_steps=20)
    bridge.register("envbridge-test/Hybrid-v0", HybridActionEnv, max_episode_steps=20)
    bridge.register("envbridge-test/Cap-v0", CapEnv, max_episode_steps=3)

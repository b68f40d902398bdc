"""The sources of the export matrix besides the examples, registered under ``envbridge-test/...``.

* the MATLAB cart-pole of the facade's examples, discrete (``rlFiniteSetSpec([-10, 10])``) and
  continuous (``rlNumericSpec([1 1])``), with MATLAB's default "double" observations;
* a finite-set env: an ``rlFunctionEnv`` whose elements are not indices (``[0.5, 2, 7]``), with two
  observation channels (a numeric one and a finite-set one);
* a small-image env: a Dict of a 16x16 Image and a position, and a ``Discrete(3, start=1)`` action.

Batched sources (the MATLAB vector cart-pole) are built by :func:`vector_sources`.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
from bridge.adapters.matlab import examples as cartpole
from bridge.adapters.matlab import rlFiniteSetSpec, rlFunctionEnv, rlNumericSpec

import bridge
from bridge import spaces
from bridge.env import Env

__all__ = ["MATRIX_IDS", "REFUSALS", "register", "vector_sources", "SmallImage"]

LEVELS = [0.5, 2.0, 7.0]


def finite_set_reset(rng: np.random.Generator) -> Tuple[Any, dict]:
    level = float(LEVELS[int(rng.integers(3))])
    return [np.zeros((2, 1)), level], {"Position": np.zeros((2, 1)), "Level": level}


def finite_set_step(Action: Any, Info: dict, rng: np.random.Generator) -> Tuple[Any, float, bool, dict]:
    position = Info["Position"] + Action * np.array([[0.1], [-0.05]]) + rng.normal(0.0, 0.01, (2, 1))
    level = float(LEVELS[int(rng.integers(3))])
    reward = float(-np.abs(position).sum() + (1.0 if level == Action else 0.0))
    done = bool(np.abs(position).max() > 1.0)
    return [position, level], reward, done, {"Position": position, "Level": level}


def make_finite_set() -> Env:
    """Two observation channels and a finite-set action whose elements are not indices."""
    observation_info = [
        rlNumericSpec([2, 1], LowerLimit=-5.0, UpperLimit=5.0, Name="Position"),
        rlFiniteSetSpec(LEVELS, Name="Level"),
    ]
    action_info = rlFiniteSetSpec(LEVELS, Name="Push")
    return rlFunctionEnv(observation_info, action_info, finite_set_step, finite_set_reset)


class SmallImage(bridge.Env):
    """A 16x16 RGB image and a position; actions 1, 2, 3 move a bright dot left, stay, right."""

    determinism = "strong"

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            camera=spaces.Image(16, 16, 3), pos=spaces.Box(-8.0, 8.0, (2,), np.float32)
        )
        self.action_space = spaces.Discrete(3, start=1)
        self.pos = np.zeros(2, np.int64)

    def _obs(self) -> dict:
        image = np.zeros((16, 16, 3), np.uint8)
        image[self.pos[0] + 8, self.pos[1] + 8] = (255, 128, 64)
        return {"camera": image, "pos": self.pos.astype(np.float32)}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[dict, dict]:
        super().reset(seed=seed)
        self.pos = self.np_random.integers(-3, 4, size=2)
        return self._obs(), {}

    def step(self, action: Any) -> Tuple[dict, float, bool, bool, dict]:
        self.pos = np.clip(self.pos + np.array([0, int(action) - 2]) + self.np_random.integers(-1, 2, 2), -8, 7)
        reward = float(-np.abs(self.pos).sum())
        return self._obs(), reward, bool((self.pos == 0).all()), False, {}

    def get_state(self) -> dict:
        return {"pos": self.pos.copy()}

    def set_state(self, state: dict) -> None:
        self.pos = np.array(state["pos"], dtype=np.int64)


MATRIX_IDS: Dict[str, Tuple[Callable[..., Env], int]] = {
    "envbridge-test/MatlabCartPole-v0": (lambda: cartpole.make_cartpole("discrete", None), 60),
    "envbridge-test/MatlabCartPoleContinuous-v0": (lambda: cartpole.make_cartpole("continuous", None), 60),
    "envbridge-test/FiniteSet-v0": (make_finite_set, 40),
    "envbridge-test/SmallImage-v0": (SmallImage, 30),
}


# (source, view) -> the start of the export's own refusal (docs/export-matrix.md); every other
# pair of a source and a view of its era must agree bit for bit
REFUSALS = {
    ("envbridge-test/MatlabCartPoleContinuous-v0", "dreamerv2"): (
        "ConversionError: the dreamerv2 view's action space must be a Box of float32 or narrower to replay a tape "
        "bit for bit (DreamerV2's actions are float32)"
    ),
}


def register() -> None:
    """Register the matrix sources (each test module that uses an id calls it)."""
    for env_id, (entry_point, steps) in MATRIX_IDS.items():
        bridge.register(env_id, entry_point, max_episode_steps=steps)


def vector_sources() -> Dict[str, Callable[[], bridge.VectorEnv]]:
    """The batched sources: CartPoleVector and the MATLAB vector cart-pole, discrete and continuous."""
    return {
        "CartPoleVector": lambda: bridge.examples.CartPoleVector(num_envs=4, max_episode_steps=25),
        "MatlabVectorCartPole": lambda: cartpole.make_vector_cartpole(4, "discrete", MaxStepsPerEpisode=25),
        "MatlabVectorCartPoleContinuous": lambda: cartpole.make_vector_cartpole(4, "continuous", MaxStepsPerEpisode=25),
    }

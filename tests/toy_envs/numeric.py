"""Float envs whose last bits differ between numpy 1.19 and numpy 2 (the cross-era tests).

* :class:`Hover`: a drone pushed by a wind field; one observation leaf per kind of computation:
  ``distance`` (``np.linalg.norm``), ``cost`` (a 2x2 quadratic form ``v @ Q @ v``), ``gust``
  (``np.exp`` and ``np.sin`` on arrays), ``total`` (``np.sum`` over a 4,096-element array of
  ``np.sin`` values), and ``exact`` (the same quantities written elementwise with ``math``);
  a discrete ``zone`` and episode ends by reaching the pad or leaving the box. It declares no
  tolerance: :class:`DeclaredHover` is the same env with ``cross_era_ulps = 4``.
* :class:`DoublePendulum`: chaotic; its mass matrix is solved with ``np.linalg.solve`` in every
  RK4 stage, so two eras' trajectories separate after about a hundred steps while one step from
  the same state differs in the last bits only (it declares ``cross_era_ulps = 4``).

The file is also the package the init-tox matrix test installs (it imports only numpy, math and bridge).
"""

from __future__ import annotations

import math

import numpy as np

import bridge
from bridge import spaces

__all__ = ["Hover", "DeclaredHover", "DoublePendulum"]

_Q = np.array([[2.0, 0.3], [0.3, 1.5]])
_GRID = np.linspace(0.0, 40.0, 4096)
_PHASES = np.linspace(0.0, 3.0, 16)


class Hover(bridge.Env):
    """Reach the pad at the origin against a gusty wind."""

    determinism = "strong"

    def __init__(self) -> None:
        box = spaces.Box(-1e6, 1e6, (1,), np.float64)
        self.observation_space = spaces.Dict(
            distance=box,
            cost=box,
            gust=spaces.Box(-1e6, 1e6, (16,), np.float64),
            total=box,
            exact=spaces.Box(-1e6, 1e6, (2,), np.float64),
            zone=spaces.Discrete(4),
        )
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)  # float32: DreamerV2 replays it exactly
        self.pos, self.vel, self.t = np.zeros(2), np.zeros(2), 0

    def _obs(self) -> dict:
        v = self.vel
        distance = np.linalg.norm(self.pos)
        gust = np.exp(-0.3 * _PHASES * (1.0 + abs(self.pos[0]))) * np.sin(_PHASES * (self.t + 1) + self.pos[1])
        exact = [
            math.sqrt(self.pos[0] * self.pos[0] + self.pos[1] * self.pos[1]),
            _Q[0, 0] * v[0] * v[0] + (_Q[0, 1] + _Q[1, 0]) * v[0] * v[1] + _Q[1, 1] * v[1] * v[1],
        ]
        return {
            "distance": np.array([distance]),
            "cost": np.array([v @ _Q @ v]),
            "gust": gust,
            "total": np.array([np.sum(np.sin(_GRID * (1.0 + 0.01 * self.t)))]),
            "exact": np.array(exact),
            "zone": int(self.pos[0] > 0) + 2 * int(self.pos[1] > 0),
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.vel, self.t = self.np_random.uniform(-3.0, 3.0, 2), np.zeros(2), 0
        return self._obs(), {}

    def step(self, action):
        # the dynamics elementwise with math (the same bits in both eras): only the observations differ
        gust = np.array([math.exp(-abs(x)) * math.sin(x * 3.0 + self.t) for x in self.pos])
        self.vel = 0.9 * self.vel + 0.1 * (np.asarray(action) + 0.5 * gust)
        self.pos, self.t = self.pos + 0.2 * self.vel, self.t + 1
        obs = self._obs()
        distance = obs["distance"][0]
        reward = float(-distance - 0.1 * obs["cost"][0])
        return obs, reward, bool(distance < 0.3 or distance > 6.0), self.t >= 40, {}

    def get_state(self) -> dict:
        return {"pos": self.pos.copy(), "vel": self.vel.copy(), "t": self.t}

    def set_state(self, state: dict) -> None:
        self.pos, self.vel, self.t = np.array(state["pos"]), np.array(state["vel"]), int(state["t"])


class DeclaredHover(Hover):
    """:class:`Hover`, declaring the last-bit differences it shows between the eras."""

    cross_era_ulps = 4


class DoublePendulum(bridge.Env):
    """Two unit rods, torque on the first joint; observations are the angles and angular speeds."""

    determinism = "strong"
    cross_era_ulps = 4
    g, substeps, h = 9.81, 10, 0.02  # RK4, 10 substeps of 20 ms a step: chaotic within ~100 steps

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1e6, 1e6, (4,), np.float64)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.state = np.zeros(4)

    def _derivative(self, s: np.ndarray, torque: float) -> np.ndarray:
        a, b, p, q = s
        c = math.cos(a - b)
        mass = np.array([[2.0, c], [c, 1.0]])
        force = np.array(
            [
                torque - q * q * math.sin(a - b) - 2.0 * self.g * math.sin(a),
                p * p * math.sin(a - b) - self.g * math.sin(b),
            ]
        )
        return np.concatenate([[p, q], np.linalg.solve(mass, force)])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state = np.concatenate([self.np_random.uniform(2.0, 2.5, 2), np.zeros(2)])
        return self.state.copy(), {}

    def step(self, action):
        torque, h = float(np.asarray(action)[0]), self.h
        for _ in range(self.substeps):  # RK4
            s = self.state
            k1 = self._derivative(s, torque)
            k2 = self._derivative(s + h / 2 * k1, torque)
            k3 = self._derivative(s + h / 2 * k2, torque)
            k4 = self._derivative(s + h * k3, torque)
            self.state = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        reward = float(3.0 - math.cos(self.state[0]) - math.cos(self.state[1]))  # the tip above its lowest point, + 1
        return self.state.copy(), reward, False, False, {}

    def get_state(self) -> dict:
        return {"state": self.state.copy()}

    def set_state(self, state: dict) -> None:
        self.state = np.array(state["state"])

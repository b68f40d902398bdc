"""CartPole with the classic dynamics, as a scalar Env and as a numpy-batched VectorEnv."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

from bridge import spaces
from bridge.env import Env
from bridge.vector import VectorEnv

# Classic constants (Barto, Sutton & Anderson; identical to Gym's CartPole-v1)
GRAVITY, CART_MASS, POLE_MASS, HALF_LENGTH, FORCE_MAG, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TOTAL_MASS = CART_MASS + POLE_MASS
POLE_MASS_LENGTH = POLE_MASS * HALF_LENGTH
THETA_LIMIT = 12 * 2 * np.pi / 360
X_LIMIT = 2.4
_HIGH = np.array([X_LIMIT * 2, np.finfo(np.float32).max, THETA_LIMIT * 2, np.finfo(np.float32).max], dtype=np.float32)


def dynamics(state: np.ndarray, force: Union[float, np.ndarray]) -> np.ndarray:
    """One Euler step of the cart-pole; ``state`` is (..., 4) float64 = x, x_dot, theta, theta_dot."""
    return np.stack(_euler(state[..., 0], state[..., 1], state[..., 2], state[..., 3], force), axis=-1)


def _euler(x: Any, x_dot: Any, theta: Any, theta_dot: Any, force: Any) -> Tuple[Any, Any, Any, Any]:
    """The classic update on scalars or on contiguous rows; one expression order for both, so the
    batched and the scalar env agree to the bit."""
    cos, sin = np.cos(theta), np.sin(theta)
    temp = (force + POLE_MASS_LENGTH * theta_dot**2 * sin) / TOTAL_MASS
    theta_acc = (GRAVITY * sin - cos * temp) / (HALF_LENGTH * (4.0 / 3.0 - POLE_MASS * cos**2 / TOTAL_MASS))
    x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS
    return x + TAU * x_dot, x_dot + TAU * x_acc, theta + TAU * theta_dot, theta_dot + TAU * theta_acc


def _euler_rows(rows: np.ndarray, force: np.ndarray) -> None:
    """:func:`_euler` in place on (4, n) contiguous rows: the same operations in the same order
    (so the same bits, which the tests check against scalar CartPoles), without temporaries."""
    x, x_dot, theta, theta_dot = rows
    cos, sin = np.cos(theta), np.sin(theta)
    temp = np.square(theta_dot)  # theta_dot**2
    temp *= POLE_MASS_LENGTH
    temp *= sin
    temp += force
    temp /= TOTAL_MASS
    sin *= GRAVITY  # GRAVITY * sin
    denom = np.square(cos)  # HALF_LENGTH * (4/3 - POLE_MASS * cos**2 / TOTAL_MASS)
    denom *= POLE_MASS
    denom /= TOTAL_MASS
    np.subtract(4.0 / 3.0, denom, out=denom)
    denom *= HALF_LENGTH
    theta_acc = cos * temp
    np.subtract(sin, theta_acc, out=theta_acc)
    theta_acc /= denom
    x_acc = theta_acc * POLE_MASS_LENGTH  # temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS
    x_acc *= cos
    x_acc /= TOTAL_MASS
    np.subtract(temp, x_acc, out=x_acc)
    x += TAU * x_dot
    theta += TAU * theta_dot
    x_acc *= TAU
    x_dot += x_acc
    theta_acc *= TAU
    theta_dot += theta_acc


def fallen(state: np.ndarray) -> Union[bool, np.ndarray]:
    """True where the cart left the track or the pole tilted past 12 degrees."""
    return (np.abs(state[..., 0]) > X_LIMIT) | (np.abs(state[..., 2]) > THETA_LIMIT)


class CartPole(Env):
    """Balance a pole: ``Discrete(2)`` push left/right, +1 per step, terminated on a fall.

    Registered as ``envbridge/CartPole-v0`` with a 500-step limit. Strong determinism.
    """

    determinism = "strong"

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-_HIGH, _HIGH, (4,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.state = np.zeros(4, dtype=np.float64)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.state = self.np_random.uniform(-0.05, 0.05, size=4)
        return self.state.astype(np.float32), {}

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, dict]:
        force = FORCE_MAG if int(action) == 1 else -FORCE_MAG
        self.state = dynamics(self.state, force)
        return self.state.astype(np.float32), 1.0, bool(fallen(self.state)), False, {}

    def get_state(self) -> dict:
        return {"state": self.state.copy()}

    def set_state(self, state: dict) -> None:
        self.state = np.array(state["state"], dtype=np.float64)


class CartPoleVector(VectorEnv):
    """``num_envs`` cart-poles stepped as one numpy batch (no per-env Python loop).

    Same dynamics as :class:`CartPole`, truncation at ``max_episode_steps`` (by the VectorEnv base,
    as its autoreset), either autoreset mode. The batch shares one Generator, seeded by
    ``reset(seed=int)``. The state is kept as four contiguous rows (x, x_dot, theta, theta_dot),
    which is what makes the batch fast.
    """

    def __init__(self, num_envs: int = 16, max_episode_steps: int = 500, autoreset_mode: str = "next-step") -> None:
        self.num_envs = int(num_envs)
        self.max_episode_steps = int(max_episode_steps)
        self.autoreset_mode = autoreset_mode
        self.single_observation_space = spaces.Box(-_HIGH, _HIGH, (4,), np.float32)
        self.single_action_space = spaces.Discrete(2)
        self.rows = np.zeros((4, self.num_envs), dtype=np.float64)

    @property
    def state(self) -> np.ndarray:
        """The (num_envs, 4) float64 state, as :class:`CartPole` holds it per env (a copy)."""
        return self.rows.T.copy()

    def reset_envs(self, mask: np.ndarray, seeds: list, options: Optional[dict]) -> Tuple[np.ndarray, dict]:
        if mask.all():
            self.rows = self.np_random.uniform(-0.05, 0.05, size=(self.num_envs, 4)).T.copy()
        else:
            self.rows[:, mask] = self.np_random.uniform(-0.05, 0.05, size=(int(mask.sum()), 4)).T
        return self.rows.T.astype(np.float32), {}

    def step_envs(
        self, actions: Any, active: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        force = np.where(np.asarray(actions) == 1, FORCE_MAG, -FORCE_MAG)
        rows = self.rows
        _euler_rows(rows, force)  # every row: a sub-env about to reset is stepped too, then reset
        terminated = (np.abs(rows[0]) > X_LIMIT) | (np.abs(rows[2]) > THETA_LIMIT)
        rewards = np.ones(self.num_envs, dtype=np.float64)
        return rows.T.astype(np.float32), rewards, terminated, np.zeros(self.num_envs, dtype=bool), {}

"""The gym 0.23.1 export (legacy era): ``to_gym``, ``register``, ``make_gym``.

Inside: ``export`` (the gym 0.23 env), ``lowering`` (neutral spaces and values <-> gym's),
``profile`` (the "gym" check), ``view`` (its conformance view).
"""

from __future__ import annotations

from bridge.adapters.gym.export import GymEnv, make_gym, register, to_gym
from bridge.adapters.gym.lowering import to_gym_space

__all__ = ["to_gym", "register", "make_gym", "GymEnv", "to_gym_space"]

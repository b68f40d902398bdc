"""The Gymnasium 1.x export (modern era): ``to_gymnasium``, ``register``, ``to_gymnasium_vector``.

Inside: ``export`` (the single-env export), ``vector`` (the VectorEnv export), ``lowering`` (neutral
spaces and values <-> Gymnasium's), ``profile`` (the "gymnasium" check), ``view`` (its conformance view).
"""

from __future__ import annotations

from bridge.adapters.gymnasium.export import GoalGymnasiumEnv, GymnasiumEnv, register, to_gymnasium
from bridge.adapters.gymnasium.vector import GymnasiumVectorEnv, to_gymnasium_vector

__all__ = [
    "to_gymnasium",
    "register",
    "to_gymnasium_vector",
    "GymnasiumEnv",
    "GoalGymnasiumEnv",
    "GymnasiumVectorEnv",
]

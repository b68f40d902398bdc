"""envbridge: write an RL environment once, export it to SB3, DreamerV2 and a MATLAB-style facade.

``import bridge`` needs numpy only. Framework exports are reached through :mod:`bridge.adapters`
or lazily through convenience names here (``bridge.to_gymnasium`` imports gymnasium on first use).
"""

from __future__ import annotations

import importlib
from typing import Any

from bridge import spaces
from bridge.checker import Problem, Report, check
from bridge.env import Env, TimeLimit, Wrapper
from bridge.errors import BridgeError, ContractError, ConversionError, MissingDependencyError, SpecError
from bridge.registry import EnvSpec, make, register, registry
from bridge.vector import SyncVectorEnv, VectorEnv, vectorize

__version__ = "0.1.0"

__all__ = [
    "spaces",
    "Env",
    "Wrapper",
    "TimeLimit",
    "VectorEnv",
    "SyncVectorEnv",
    "vectorize",
    "register",
    "make",
    "registry",
    "EnvSpec",
    "check",
    "Report",
    "Problem",
    "BridgeError",
    "SpecError",
    "ContractError",
    "ConversionError",
    "MissingDependencyError",
    "to_gymnasium",
    "to_gym",
    "to_dreamerv2",
]

# convenience name -> adapter module; imported on first attribute access only
_LAZY = {
    "to_gymnasium": "bridge.adapters.gymnasium",
    "to_gymnasium_vector": "bridge.adapters.gymnasium",
    "make_vec_env": "bridge.adapters.sb3",
    "to_gym": "bridge.adapters.gym",
    "to_dreamerv2": "bridge.adapters.dreamerv2",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bridge' has no attribute {name!r}")


def _register_examples() -> None:
    from bridge.examples import EXAMPLE_IDS

    for env_id, (entry_point, steps) in EXAMPLE_IDS.items():
        register(env_id, entry_point, max_episode_steps=steps)


_register_examples()

"""envbridge: write an RL environment once, export it to SB3, DreamerV2 and a MATLAB-style facade.

``import bridge`` needs numpy only. Framework exports are reached through :mod:`bridge.adapters`
or lazily through convenience names here (``bridge.to_gymnasium`` imports gymnasium on first use).
"""

from __future__ import annotations

from typing import Any

from bridge import examples, runtimes, spaces
from bridge._version import __version__ as __version__  # re-exported: bridge.__version__
from bridge.checker import Problem, Report, check
from bridge.env import Env, TimeLimit, Wrapper
from bridge.errors import BridgeError, ContractError, ConversionError, MissingDependencyError, SpecError
from bridge.hosted.client import RemoteEnv, remote
from bridge.hosted.vector import RemoteVectorEnv, remote_vector
from bridge.registry import EnvSpec, make, register, registry
from bridge.vector import SyncVectorEnv, VectorEnv, vectorize

__all__ = [
    "spaces",
    "examples",
    "Env",
    "Wrapper",
    "TimeLimit",
    "VectorEnv",
    "SyncVectorEnv",
    "vectorize",
    "remote",
    "RemoteEnv",
    "remote_vector",
    "RemoteVectorEnv",
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
]

# convenience name -> "module:attr", from the runtime table; imported on first attribute access
# only, so they are not in __all__ (``from bridge import *`` must work without any framework)
_LAZY = {name: ref for runtime in runtimes.RUNTIMES.values() for name, ref in runtime.exports.items()}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return runtimes.load(_LAZY[name])
    raise AttributeError(f"module 'bridge' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))

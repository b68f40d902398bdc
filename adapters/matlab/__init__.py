"""A MATLAB-style facade (Reinforcement Learning Toolbox names) over the neutral core.

Port a MATLAB environment line by line: ``rlNumericSpec`` / ``rlFiniteSetSpec`` describe the
channels, ``rlFunctionEnv(obsInfo, actInfo, stepFcn, resetFcn)`` builds a ``bridge.Env`` that
every export takes, ``sim`` runs a policy and returns the experience. numpy and bridge only: it
runs in both eras. See docs/matlab.md.
"""

from __future__ import annotations

from bridge.adapters.matlab.datatypes import DATA_TYPES
from bridge.adapters.matlab.describe import specs_from_space
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.function_env import rlFunctionEnv
from bridge.adapters.matlab.simulation import IS_DONE, Experience, rlSimulationOptions, sim
from bridge.adapters.matlab.specs import rlNumericSpec
from bridge.adapters.matlab.validation import getActionInfo, getObservationInfo, validateEnvironment
from bridge.adapters.matlab.vector_env import rlFunctionVectorEnv

__all__ = [
    "rlNumericSpec",
    "rlFiniteSetSpec",
    "rlFunctionEnv",
    "rlFunctionVectorEnv",
    "validateEnvironment",
    "getObservationInfo",
    "getActionInfo",
    "rlSimulationOptions",
    "sim",
    "Experience",
    "IS_DONE",
    "DATA_TYPES",
    "specs_from_space",
]

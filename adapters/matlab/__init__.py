"""A MATLAB-style facade (Reinforcement Learning Toolbox names) over the neutral core.

Port a MATLAB environment line by line: ``rlNumericSpec`` / ``rlFiniteSetSpec`` describe the
channels, ``rlFunctionEnv(obsInfo, actInfo, stepFcn, resetFcn)`` builds a ``bridge.Env`` that
every export takes, ``sim`` runs a policy (or an agent) and returns the experience. Default agents
(``rlDQNAgent``, ``rlPPOAgent``, ...), ``rlTrainingOptions`` and ``train`` work with SB3 underneath.
Importing needs numpy and bridge only (both eras); building an agent or training needs SB3 (the
modern era). See docs/matlab.md.
"""

from __future__ import annotations

from bridge.adapters.matlab.datatypes import DATA_TYPES
from bridge.adapters.matlab.describe import specs_from_space
from bridge.adapters.matlab.export import MatlabEnv, to_matlab
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.function_env import rlFunctionEnv
from bridge.adapters.matlab.octave.names import addpath, rmpath
from bridge.adapters.matlab.specs import rlNumericSpec
from bridge.adapters.matlab.validation import getActionInfo, getObservationInfo, validateEnvironment
from bridge.adapters.matlab.vector_env import rlFunctionVectorEnv
from bridge.adapters.matlab.workflow.agent_files import load, save
from bridge.adapters.matlab.workflow.agent_options import (
    rlACAgentOptions,
    rlAgentInitializationOptions,
    rlDDPGAgentOptions,
    rlDQNAgentOptions,
    rlOptimizerOptions,
    rlPPOAgentOptions,
    rlSACAgentOptions,
    rlTD3AgentOptions,
)
from bridge.adapters.matlab.workflow.agents import (
    getAction,
    rlACAgent,
    rlDDPGAgent,
    rlDQNAgent,
    rlPPOAgent,
    rlSACAgent,
    rlTD3Agent,
)
from bridge.adapters.matlab.workflow.simulation import IS_DONE, Experience, rlSimulationOptions, sim
from bridge.adapters.matlab.workflow.training import TrainingStatistics, rlTrainingOptions, train

__all__ = [
    "to_matlab",
    "MatlabEnv",
    "rlNumericSpec",
    "rlFiniteSetSpec",
    "rlFunctionEnv",
    "addpath",
    "rmpath",
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
    "rlDQNAgent",
    "rlPPOAgent",
    "rlACAgent",
    "rlSACAgent",
    "rlTD3Agent",
    "rlDDPGAgent",
    "rlDQNAgentOptions",
    "rlPPOAgentOptions",
    "rlACAgentOptions",
    "rlSACAgentOptions",
    "rlTD3AgentOptions",
    "rlDDPGAgentOptions",
    "rlOptimizerOptions",
    "rlAgentInitializationOptions",
    "getAction",
    "save",
    "load",
    "rlTrainingOptions",
    "train",
    "TrainingStatistics",
]

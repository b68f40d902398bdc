"""``validateEnvironment``, ``getObservationInfo`` and ``getActionInfo``.

They take an :class:`rlFunctionEnv`, an :class:`rlFunctionVectorEnv`, or any ``bridge.Env`` /
``bridge.VectorEnv`` (whose spaces are then described as the MATLAB specs a user would see);
``getObservationInfo`` / ``getActionInfo`` also take an agent.
"""

from __future__ import annotations

import copy
from typing import Any, List

import numpy as np
from bridge.adapters.matlab.checks import ACTION_SEED, FUNCTION_WHERE, NEUTRAL_WHERE, check_value, validate_once
from bridge.adapters.matlab.describe import specs_from_space
from bridge.adapters.matlab.function_env import unwrap_function_env
from bridge.adapters.matlab.workflow.agents import Agent

from bridge.env import Env
from bridge.errors import ContractError, SpecError, error
from bridge.spaces import _describe_value
from bridge.vector import VectorEnv

__all__ = ["validateEnvironment", "getObservationInfo", "getActionInfo", "specs_from_space"]


def validateEnvironment(env: Any) -> None:
    """Reset, step once with a sampled action, and check every output against the specs.

    Raises the house ContractError naming the output, what was expected and what came. For an
    rlFunctionEnv the env is left as just after the reset (its Info is restored), as MATLAB shows it.
    """
    if isinstance(env, VectorEnv):
        _validate_vector(env)
        return
    if not isinstance(env, Env):
        raise error(
            SpecError,
            "validateEnvironment env",
            "be an rlFunctionEnv, a bridge.Env or a bridge.VectorEnv",
            type(env).__name__,
            "Pass the environment object",
        )
    function_env = unwrap_function_env(env)
    if function_env is None:
        validate_once(env, NEUTRAL_WHERE)
    else:
        validate_once(env, FUNCTION_WHERE, function_env.keep_moment)


def _validate_vector(env: VectorEnv) -> None:
    n = env.num_envs
    out = env.reset()
    check_value(env.observation_space, out[0], "ResetFcn output InitialObservation (batched)")
    action = env.action_space.sample(np.random.default_rng(ACTION_SEED))
    observation, rewards, terminated, truncated, infos = env.step(action)
    check_value(env.observation_space, observation, "StepFcn output NextObservation (batched)")
    for name, value, dtype in (
        ("Reward", rewards, np.float64),
        ("terminated", terminated, np.bool_),
        ("truncated", truncated, np.bool_),
    ):
        if not isinstance(value, np.ndarray) or value.shape != (n,) or value.dtype != dtype:
            raise error(
                ContractError,
                f"vector step {name}",
                f"be a {np.dtype(dtype).name} array of shape ({n},)",
                _describe_value(value),
                "Return one value per instance",
            )
    if not isinstance(infos, dict):
        raise error(
            ContractError,
            "vector step infos",
            "be a dict",
            _describe_value(infos),
            "Return {} when there is nothing to report",
        )


def getObservationInfo(env: Any) -> Any:
    """The observation specs: one spec, or a list (several channels)."""
    own = _own_info(env, "observationInfo")
    if own is not None:
        return own
    space = env.single_observation_space if isinstance(env, VectorEnv) else env.observation_space
    return specs_from_space(space, "observation")


def getActionInfo(env: Any) -> Any:
    """The action spec: one spec, or [rlFiniteSetSpec, rlNumericSpec] (hybrid)."""
    own = _own_info(env, "actionInfo")
    if own is not None:
        return own
    space = env.single_action_space if isinstance(env, VectorEnv) else env.action_space
    return specs_from_space(space, "action")


def _own_info(env: Any, name: str) -> Any:
    if isinstance(env, Agent):  # MATLAB reads the specs of an agent too
        return copy.deepcopy(env.ObservationInfo if name == "observationInfo" else env.ActionInfo)
    function_env = unwrap_function_env(env)
    if function_env is not None:
        return getattr(function_env, name)
    if isinstance(env, VectorEnv) and hasattr(env, name):
        return getattr(env, name)
    if not isinstance(env, (Env, VectorEnv)):
        raise error(
            SpecError,
            "env",
            "be an rlFunctionEnv, a bridge.Env or a bridge.VectorEnv",
            type(env).__name__,
            "Pass the environment object",
        )
    return None


def describe(specs: Any) -> List[str]:
    """One line per spec, for the check report."""
    return [repr(s) for s in (specs if isinstance(specs, list) else [specs])]

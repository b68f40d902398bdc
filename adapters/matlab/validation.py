"""``validateEnvironment``, ``getObservationInfo`` and ``getActionInfo``.

They take an :class:`rlFunctionEnv`, an :class:`rlFunctionVectorEnv`, or any ``bridge.Env`` /
``bridge.VectorEnv`` (whose spaces are then described as the MATLAB specs a user would see).
"""

from __future__ import annotations

from typing import Any, List

import numpy as np
from bridge.adapters.matlab.checks import ACTION_SEED, FUNCTION_WHERE, NEUTRAL_WHERE, check_value, validate_once
from bridge.adapters.matlab.lowering import fail
from bridge.adapters.matlab.datatypes import DATA_TYPES
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.function_env import unwrap_function_env
from bridge.adapters.matlab.specs import _int_bound, rlNumericSpec

from bridge import spaces
from bridge.env import Env
from bridge.errors import ConversionError, SpecError
from bridge.spaces import _describe_value
from bridge.vector import VectorEnv

__all__ = ["validateEnvironment", "getObservationInfo", "getActionInfo", "specs_from_space"]

_BOX_CLASS = {dtype: name for name, dtype in DATA_TYPES.items() if name != "logical"}


def validateEnvironment(env: Any) -> None:
    """Reset, step once with a sampled action, and check every output against the specs.

    Raises the house ContractError naming the output, what was expected and what came. For an
    rlFunctionEnv the env is left as just after the reset (its Info is restored), as MATLAB shows it.
    """
    if isinstance(env, VectorEnv):
        _validate_vector(env)
        return
    if not isinstance(env, Env):
        raise fail(
            "validateEnvironment env",
            "be an rlFunctionEnv, a bridge.Env or a bridge.VectorEnv",
            type(env).__name__,
            "Pass the environment object",
            SpecError,
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
            raise fail(
                f"vector step {name}",
                f"be a {np.dtype(dtype).name} array of shape ({n},)",
                _describe_value(value),
                "Return one value per instance",
            )
    if not isinstance(infos, dict):
        raise fail(
            "vector step infos", "be a dict", _describe_value(infos), "Return {} when there is nothing to report"
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
    function_env = unwrap_function_env(env)
    if function_env is not None:
        return getattr(function_env, name)
    if isinstance(env, VectorEnv) and hasattr(env, name):
        return getattr(env, name)
    if not isinstance(env, (Env, VectorEnv)):
        raise fail(
            "env",
            "be an rlFunctionEnv, a bridge.Env or a bridge.VectorEnv",
            type(env).__name__,
            "Pass the environment object",
            SpecError,
        )
    return None


def specs_from_space(space: spaces.Space, role: str, path: str = "") -> Any:
    """The MATLAB specs a neutral space reads as; ConversionError for what MATLAB cannot express."""
    if isinstance(space, spaces.Dict) and role == "observation" and not path:
        return [_leaf(s, role, f"[{k!r}]", name=k) for k, s in space.items()]
    if isinstance(space, spaces.Tuple) and not path:
        parts = list(space)
        if role == "action":
            if len(parts) == 2 and isinstance(parts[0], spaces.Discrete) and isinstance(parts[1], spaces.Box):
                return [_leaf(parts[0], role, "[0]"), _leaf(parts[1], role, "[1]")]
            raise fail(
                f"{role}{path}",
                "be one space, or Tuple(Discrete, Box) for a hybrid action",
                repr(space),
                "MATLAB takes one action channel, or one finite set plus one numeric channel",
                ConversionError,
            )
        return [_leaf(s, role, f"[{i}]") for i, s in enumerate(parts)]
    return _leaf(space, role, path)


def _leaf(space: spaces.Space, role: str, path: str, name: str = "") -> Any:
    subject = f"{role}{path}"
    if isinstance(space, spaces.Discrete):
        return rlFiniteSetSpec(list(range(space.start, space.start + space.n)), Name=name)
    if isinstance(space, spaces.MultiBinary):
        return rlNumericSpec(list(space.shape), DataType="logical", Name=name)
    if isinstance(space, spaces.Box):
        if space.dtype not in _BOX_CLASS:
            raise fail(
                subject,
                f"have a dtype MATLAB has a class for ({sorted(d.name for d in _BOX_CLASS)})",
                space.dtype.name,
                "Use float32 or float64",
                ConversionError,
            )
        _exact_limits(space, subject)
        dims = list(space.shape) or [1, 1]
        return rlNumericSpec(dims, _limit(space.low), _limit(space.high), _BOX_CLASS[space.dtype], Name=name)
    if isinstance(space, spaces.MultiDiscrete) and role == "observation":
        return rlNumericSpec(
            list(space.shape),
            space.start.astype(np.float64),
            (space.start + space.nvec - 1).astype(np.float64),
            "int64",
            Name=name,
        )
    raise fail(
        subject,
        f"be a space MATLAB can express as one {role} channel (Box, Discrete, MultiBinary)",
        repr(space),
        "Flatten nested spaces into channels, or use Discrete for a discrete action",
        ConversionError,
    )


def _exact_limits(space: spaces.Box, subject: str) -> None:
    """MATLAB limits are doubles: refuse integer bounds a double cannot hold (beyond 2**53)."""
    if space.dtype.kind not in "iu":
        return
    info = np.iinfo(space.dtype)
    for bound in (space.low, space.high):
        back = _int_bound(bound.astype(np.float64), info)
        if (back != bound).any():
            index = tuple(int(i) for i in np.argwhere(back != bound)[0])
            raise fail(
                f"{subject}{list(index)}" if index else subject,
                "have integer bounds a MATLAB double limit holds exactly (within +-2**53, or the class's full range)",
                repr(bound[index].item()),
                "Narrow the bounds, or use the class's full range (MATLAB's infinite limits)",
                ConversionError,
            )


def _limit(bound: np.ndarray) -> Any:
    flat = bound.reshape(-1)
    if flat.size and bool(np.all(flat == flat[0])):
        return float(flat[0])
    return bound.astype(np.float64)


def describe(specs: Any) -> List[str]:
    """One line per spec, for the check report."""
    return [repr(s) for s in (specs if isinstance(specs, list) else [specs])]

"""``rlSimulationOptions`` and ``sim``: run a policy in an environment and keep the experience."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np
from bridge.adapters.matlab.lowering import fail
from bridge.adapters.matlab.function_env import unwrap_function_env
from bridge.adapters.matlab.validation import getActionInfo, getObservationInfo

from bridge import spaces
from bridge.env import Env
from bridge.errors import SpecError
from bridge.spaces import _describe_value

__all__ = ["rlSimulationOptions", "sim", "Experience", "IS_DONE"]

# MATLAB's experience IsDone: 0 running, 1 terminal state, 2 ended without one (step limit)
IS_DONE = {"running": 0, "terminated": 1, "truncated": 2}


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise fail(f"rlSimulationOptions {name}", "be an integer >= 1", value, f"Set e.g. {name}=500", SpecError)
    return int(value)


class rlSimulationOptions:
    """Options for :func:`sim`: ``MaxSteps`` per simulation and ``NumSimulations``."""

    def __init__(self, MaxSteps: int = 500, NumSimulations: int = 1) -> None:
        self.MaxSteps = MaxSteps
        self.NumSimulations = NumSimulations

    @property
    def MaxSteps(self) -> int:
        return self._max_steps

    @MaxSteps.setter
    def MaxSteps(self, value: int) -> None:
        self._max_steps = _count(value, "MaxSteps")

    @property
    def NumSimulations(self) -> int:
        return self._num_simulations

    @NumSimulations.setter
    def NumSimulations(self, value: int) -> None:
        self._num_simulations = _count(value, "NumSimulations")

    def __repr__(self) -> str:
        return f"rlSimulationOptions(MaxSteps={self._max_steps}, NumSimulations={self._num_simulations})"


class Experience:
    """One simulation's record, as MATLAB's experience structure (channels keyed by name).

    Attributes:
        Observation: channel name -> array of the T+1 observations (the first is the reset's),
            in MATLAB values (finite-set channels hold the element values).
        Action: channel name -> array of the T actions, in MATLAB values.
        Reward: float64 array of the T rewards.
        IsDone: uint8 array of T flags: 0 running, 1 terminated, 2 ended by a step limit
            (``rlSimulationOptions.MaxSteps`` or a TimeLimit); termination wins when both hold.
    """

    def __init__(
        self, Observation: Dict[str, np.ndarray], Action: Dict[str, np.ndarray], Reward: np.ndarray, IsDone: np.ndarray
    ) -> None:
        self.Observation, self.Action, self.Reward, self.IsDone = Observation, Action, Reward, IsDone

    @property
    def NumSteps(self) -> int:
        return len(self.Reward)

    def __repr__(self) -> str:
        last = int(self.IsDone[-1]) if self.NumSteps else None
        return f"Experience(NumSteps={self.NumSteps}, TotalReward={float(self.Reward.sum())!r}, IsDone[-1]={last})"


def _channel_names(specs: Any, prefix: str) -> List[str]:
    specs = specs if isinstance(specs, list) else [specs]
    names = [s.Name or f"{prefix}{i + 1}" for i, s in enumerate(specs)]
    return names if len(set(names)) == len(names) else [f"{prefix}{i + 1}" for i in range(len(names))]


def _policy_fn(env: Env, policy: Any) -> Callable[[Any], Any]:
    """A function neutral observation -> neutral action."""
    function_env = unwrap_function_env(env)
    if hasattr(policy, "predict"):  # SB3-style: works in the neutral (exported) values
        space = env.action_space
        return lambda obs: _from_predict(space, policy.predict(obs, deterministic=True)[0])
    if not callable(policy):
        raise fail(
            "sim policy",
            "be a callable (observation -> action) or have SB3's predict()",
            type(policy).__name__,
            "Pass e.g. lambda obs: 10.0 or a trained SB3 model",
            SpecError,
        )
    if function_env is None:
        return policy
    return lambda obs: function_env.to_neutral_action(policy(function_env.to_matlab_observation(obs)))


def _from_predict(space: spaces.Space, action: Any) -> Any:
    if isinstance(space, spaces.Discrete):
        return np.int64(np.asarray(action).reshape(()))
    if isinstance(space, (spaces.Box, spaces.MultiBinary, spaces.MultiDiscrete)):
        # SB3 returns float32 / int64 arrays: float32 -> float64 is exact; integer values are checked by step
        return np.asarray(action).astype(space.dtype).reshape(space.shape)
    return action


def sim(
    env: Env, policy: Any, opts: Optional[rlSimulationOptions] = None, *, seed: Optional[int] = None
) -> List[Experience]:
    """Simulate ``policy`` in ``env``; one :class:`Experience` per simulation.

    Args:
        env: an rlFunctionEnv (possibly wrapped, e.g. in a TimeLimit) or any bridge.Env.
        policy: a callable from the MATLAB observation (element values; a list when there are
            several channels) to the MATLAB action, or anything with SB3's
            ``predict(obs, deterministic=True)``, which works in neutral values (indices).
        opts: :class:`rlSimulationOptions` (``MaxSteps=500, NumSimulations=1`` by default).
        seed: seeds the first reset; later simulations continue the env's Generator.
    """
    if not isinstance(env, Env):
        raise fail(
            "sim env",
            "be an rlFunctionEnv or a bridge.Env",
            _describe_value(env),
            "Simulate one environment (not a VectorEnv)",
            SpecError,
        )
    opts = opts if opts is not None else rlSimulationOptions()
    act = _policy_fn(env, policy)
    function_env = unwrap_function_env(env)
    to_matlab_obs = function_env.to_matlab_observation if function_env else (lambda o: o)
    to_matlab_action = function_env.to_matlab_action if function_env else (lambda a: a)
    obs_names = _channel_names(getObservationInfo(env), "obs")
    act_names = _channel_names(getActionInfo(env), "act")
    experiences = []
    for k in range(opts.NumSimulations):
        obs, _ = env.reset(seed=seed if k == 0 else None)
        observations, actions, rewards, flags = [to_matlab_obs(obs)], [], [], []
        for t in range(opts.MaxSteps):
            action = act(obs)
            obs, reward, terminated, truncated, _ = env.step(action)
            observations.append(to_matlab_obs(obs))
            actions.append(to_matlab_action(action))
            rewards.append(reward)
            at_limit = truncated or t == opts.MaxSteps - 1
            flags.append(
                IS_DONE["terminated"] if terminated else IS_DONE["truncated"] if at_limit else IS_DONE["running"]
            )
            if terminated or truncated:
                break
        experiences.append(
            Experience(
                _by_channel(observations, obs_names),
                _by_channel(actions, act_names),
                np.asarray(rewards, dtype=np.float64),
                np.asarray(flags, dtype=np.uint8),
            )
        )
    return experiences


def _by_channel(values: List[Any], names: List[str]) -> Dict[str, np.ndarray]:
    if len(names) == 1:
        return {names[0]: np.stack([np.asarray(v) for v in values])}
    return {name: np.stack([np.asarray(_channel(v, i, name)) for v in values]) for i, name in enumerate(names)}


def _channel(value: Any, i: int, name: str) -> Any:
    return value[name] if isinstance(value, dict) else value[i]

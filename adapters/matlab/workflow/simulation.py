"""``rlSimulationOptions`` and ``sim``: run a policy in an environment and keep the experience."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np
from bridge.adapters.matlab.export import MatlabEnv
from bridge.adapters.matlab.workflow.agent_options import _Options

from bridge import arguments, spaces
from bridge.env import Env
from bridge.errors import SpecError, error
from bridge.spaces import _describe_value

__all__ = ["rlSimulationOptions", "sim", "Experience", "IS_DONE"]

# MATLAB's experience IsDone: 0 running, 1 terminal state, 2 ended without one (step limit)
IS_DONE = {"running": 0, "terminated": 1, "truncated": 2}


class rlSimulationOptions(_Options):
    """Options for :func:`sim`: ``MaxSteps`` per simulation and ``NumSimulations``, checked on set;
    an unknown name is refused with the known ones listed (as every options object does)."""

    _title = "rlSimulationOptions"
    _defaults = {"MaxSteps": 500, "NumSimulations": 1}
    MaxSteps: int
    NumSimulations: int


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


def _policy_fn(export: MatlabEnv, policy: Any) -> Callable[[Any], Any]:
    """A function MATLAB observation -> MATLAB action."""
    if hasattr(policy, "predict"):  # SB3-style: works in neutral (exported) values
        space, to_neutral, to_matlab = (
            export.neutral.action_space,
            export.observation_lowering.decode,
            export.action_lowering.encode,
        )
        return lambda obs: to_matlab(_from_predict(space, policy.predict(to_neutral(obs), deterministic=True)[0]))
    if not callable(policy):
        raise error(
            SpecError,
            "sim policy",
            "be a callable (observation -> action) or have SB3's predict()",
            type(policy).__name__,
            "Pass e.g. lambda obs: 10.0 or a trained SB3 model",
        )
    return policy


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
        env: an rlFunctionEnv (possibly wrapped, e.g. in a TimeLimit) or any bridge.Env; it is
            driven through the MATLAB export (:class:`~bridge.adapters.matlab.export.MatlabEnv`).
        policy: a callable from the MATLAB observation (element values; a list when there are
            several channels) to the MATLAB action, or anything with SB3's
            ``predict(obs, deterministic=True)``, which works in neutral values (indices).
        opts: :class:`rlSimulationOptions` (``MaxSteps=500, NumSimulations=1`` by default).
        seed: seeds the first reset; later simulations continue the env's Generator.
    """
    if not isinstance(env, Env):
        raise error(
            SpecError,
            "sim env",
            "be an rlFunctionEnv or a bridge.Env",
            _describe_value(env),
            "Simulate one environment (not a VectorEnv)",
        )
    seed = arguments.seed(seed, "sim seed")
    opts = opts if opts is not None else rlSimulationOptions()
    export = MatlabEnv(env)
    act = _policy_fn(export, policy)
    obs_names = _channel_names(export.observationInfo, "obs")
    act_names = _channel_names(export.actionInfo, "act")
    experiences = []
    for k in range(opts.NumSimulations):
        obs = export.reset(seed=seed if k == 0 else None)
        observations, actions, rewards, flags = [obs], [], [], []
        for t in range(opts.MaxSteps):
            action = act(obs)
            obs, reward, is_done, _ = export.step(action)
            terminated, truncated = export.last_flags
            observations.append(obs)
            actions.append(action)
            rewards.append(reward)
            at_limit = truncated or t == opts.MaxSteps - 1
            flags.append(
                IS_DONE["terminated"] if terminated else IS_DONE["truncated"] if at_limit else IS_DONE["running"]
            )
            if is_done:
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

"""``rlFunctionVectorEnv``: NumEnv instances stepped by batched user functions, as one numpy batch.

The user's functions see the whole batch at once (instances on the LEADING axis, numpy's habit;
MATLAB puts them on the last dimension):

* ``setupFcn(NumEnv) -> EnvData`` once at creation (shared parameters, preallocated state);
* ``resetFcn(EnvData, ResetMask) -> (InitialObservation, EnvData)`` resets the instances where the
  bool ``ResetMask`` (NumEnv,) is True and returns observations for all NumEnv instances (rows
  outside the mask are ignored);
* ``stepFcn(Action, EnvData) -> (NextObservation, Reward, IsDone, EnvData)`` with Reward and
  IsDone of shape (NumEnv,).

A parameter named ``rng`` in resetFcn / stepFcn receives the batch's one Generator. The facade
calls each function once per step for the whole batch: no per-instance Python loop.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np
from bridge.adapters.matlab import functions, lowering
from bridge.adapters.matlab.function_env import (
    RESET_OUTPUTS,
    STEP_OUTPUTS,
    action_channels,
    action_space_of,
    channels_space,
    observation_channels,
    rlFunctionEnv,
)

from bridge import spaces
from bridge.errors import ContractError, SpecError, error
from bridge.vector import VectorEnv, _check_mode

__all__ = ["rlFunctionVectorEnv"]


class rlFunctionVectorEnv(VectorEnv):
    """A vectorized custom environment from batched step, reset and setup functions.

    Args:
        observationInfo, actionInfo: as for :class:`rlFunctionEnv` (specs of ONE instance).
        stepFcn, resetFcn, setupFcn: see the module docstring; callables or "module:function".
        NumEnv: the number of instances (1 by default, as in MATLAB).
        MaxStepsPerEpisode: truncate an instance's episode after this many steps (None: never).
        autoreset_mode: "same-step" (default; SB3's convention: the ending step returns the new
            episode's first observation, the final one in ``infos["final_obs"]`` under the mask
            ``infos["_final_obs"]``) or "next-step" (Gymnasium 1.x).
        check_actions: validate each batch of actions (cheap); False skips it.

    As in MATLAB, creation does not validate: call ``validateEnvironment(venv)``.
    """

    def __init__(
        self,
        observationInfo: Any,
        actionInfo: Any,
        stepFcn: Any,
        resetFcn: Any,
        setupFcn: Any = None,
        *,
        NumEnv: int = 1,
        MaxStepsPerEpisode: Optional[int] = None,
        autoreset_mode: str = "same-step",
        check_actions: bool = True,
    ) -> None:
        if isinstance(NumEnv, bool) or not isinstance(NumEnv, (int, np.integer)) or NumEnv < 1:
            raise error(SpecError, "rlFunctionVectorEnv NumEnv", "be an integer >= 1", NumEnv, "Pass e.g. NumEnv=64")
        ok = MaxStepsPerEpisode is None or (
            isinstance(MaxStepsPerEpisode, (int, np.integer))
            and not isinstance(MaxStepsPerEpisode, bool)
            and MaxStepsPerEpisode >= 1
        )
        if not ok:
            raise error(SpecError, "rlFunctionVectorEnv MaxStepsPerEpisode", "be None or an integer >= 1", MaxStepsPerEpisode, "Pass e.g. MaxStepsPerEpisode=500")
        self.num_envs = self.NumEnv = int(NumEnv)
        self.MaxStepsPerEpisode = None if MaxStepsPerEpisode is None else int(MaxStepsPerEpisode)
        self.autoreset_mode = _check_mode(autoreset_mode)
        self.check_actions = bool(check_actions)
        self._obs_specs, self._obs_keys = observation_channels(observationInfo)
        self._act_specs = action_channels(actionInfo)
        self.single_observation_space = channels_space(self._obs_specs, self._obs_keys)
        self.single_action_space = action_space_of(self._act_specs)
        self._batch_obs_space = spaces.batch_space(self.single_observation_space, self.num_envs)
        self._batch_act_space = spaces.batch_space(self.single_action_space, self.num_envs)
        # MATLAB batches -> neutral batches (observations), neutral -> MATLAB (actions)
        self._decode_obs = lowering.channels_decoder(self._obs_specs, self._obs_keys, batch=self.num_envs)
        self._encode_action = lowering.action_encoder(self._act_specs, batch=True)
        self._step_given, self._step_fn = stepFcn, functions.resolve_function(stepFcn, "rlFunctionVectorEnv StepFcn")
        self._reset_given, self._reset_fn = resetFcn, functions.resolve_function(resetFcn, "rlFunctionVectorEnv ResetFcn")
        self._step_rng, self._reset_rng = functions.accepts_rng(self._step_fn), functions.accepts_rng(self._reset_fn)
        self.SetupFcn = setupFcn
        self.EnvData: Any = (
            None
            if setupFcn is None
            else functions.resolve_function(setupFcn, "rlFunctionVectorEnv SetupFcn")(self.num_envs)
        )
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)

    @property
    def observation_space(self) -> spaces.Space:
        return self._batch_obs_space

    @property
    def action_space(self) -> spaces.Space:
        return self._batch_act_space

    @property
    def StepFcn(self) -> Any:
        return self._step_given

    @property
    def ResetFcn(self) -> Any:
        return self._reset_given

    observationInfo = rlFunctionEnv.observationInfo
    actionInfo = rlFunctionEnv.actionInfo

    # -- user calls ------------------------------------------------------------------------------
    def _call_reset(self, mask: np.ndarray) -> Any:
        fn = self._reset_fn
        out = fn(self.EnvData, mask, rng=self.np_random) if self._reset_rng else fn(self.EnvData, mask)
        observation, data = functions.outputs(out, "ResetFcn", RESET_OUTPUTS)
        neutral = self._decode_obs(observation, "ResetFcn output InitialObservation")
        self.EnvData = data
        return neutral

    def reset(
        self, *, seed: Union[None, int, Sequence[int]] = None, options: Optional[dict] = None
    ) -> Tuple[Any, dict]:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise error(SpecError, "rlFunctionVectorEnv reset seed", "be an int or None (one Generator drives the batch)", seed, "Pass e.g. seed=0")
        super().reset(seed=seed)
        self._steps[:] = 0
        self._needs_reset[:] = False
        return self._call_reset(np.ones(self.num_envs, dtype=bool)), {}

    def step(self, actions: Any) -> Tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        n = self.num_envs
        if self.check_actions:
            found = self._batch_act_space.mismatch(actions, "actions")
            if found is not None:
                raise error(ContractError, *found)
        value = self._encode_action(actions)
        fn = self._step_fn
        out = fn(value, self.EnvData, rng=self.np_random) if self._step_rng else fn(value, self.EnvData)
        observation, reward, is_done, data = functions.outputs(out, "StepFcn", STEP_OUTPUTS)
        obs = self._decode_obs(observation, "StepFcn output NextObservation")
        rewards = functions.to_rewards(reward, n)
        terminated = functions.to_dones(is_done, n)
        self.EnvData = data
        self._steps += 1
        truncated = (
            np.zeros(n, dtype=bool)
            if self.MaxStepsPerEpisode is None
            else (self._steps >= self.MaxStepsPerEpisode) & ~terminated
        )
        infos: dict = {}
        if self.autoreset_mode == "next-step":
            restart = self._needs_reset
            if restart.any():  # these instances only reset this step; their action is ignored
                obs = _merge(obs, self._call_reset(restart), restart)
                rewards[restart] = 0.0
                terminated[restart] = False
                truncated[restart] = False
                self._steps[restart] = 0
            self._needs_reset = terminated | truncated
        else:
            ended = terminated | truncated
            infos = {"final_obs": obs, "_final_obs": ended}
            if ended.any():
                obs = _merge(obs, self._call_reset(ended), ended)
                self._steps[ended] = 0
        return obs, rewards, terminated, truncated, infos

    def __repr__(self) -> str:
        return f"<rlFunctionVectorEnv NumEnv={self.num_envs} autoreset={self.autoreset_mode}>"


def _merge(current: Any, fresh: Any, mask: np.ndarray) -> Any:
    """Rows of ``fresh`` where ``mask`` holds, else ``current`` (dicts per key)."""
    if isinstance(current, dict):
        return {k: _merge(current[k], fresh[k], mask) for k in current}
    shaped = mask.reshape((-1,) + (1,) * (np.ndim(current) - 1))
    return np.where(shaped, fresh, current)

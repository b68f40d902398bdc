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

from typing import Any, List, Optional, Tuple

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

from bridge.errors import SpecError, error
from bridge.spaces import _describe_value
from bridge.vector import VectorEnv
from bridge.workers import DEFAULT_TIMEOUT

__all__ = ["rlFunctionVectorEnv"]


class rlFunctionVectorEnv(VectorEnv):
    """A vectorized custom environment from batched step, reset and setup functions.

    Args:
        observationInfo, actionInfo: as for :class:`rlFunctionEnv` (specs of ONE instance).
        stepFcn, resetFcn, setupFcn: see the module docstring; callables or "module:function". Or
            your single-env .m step and reset functions (as for rlFunctionEnv; no setupFcn): NumEnv
            instances of them run in one Octave process, one round trip per batch step.
        NumEnv: the number of instances (1 by default, as in MATLAB).
        MaxStepsPerEpisode: truncate an instance's episode after this many steps (None: never).
        autoreset_mode: "same-step" (default; SB3's convention: the ending step returns the new
            episode's first observation, the final one in ``infos["final_obs"]`` under the mask
            ``infos["_final_obs"]``) or "next-step" (Gymnasium 1.x).
        check_actions: validate each batch of actions (cheap); False skips it.
        workspace, timeout: for .m functions, as for rlFunctionEnv.

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
        workspace: Optional[dict] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
    ) -> None:
        self._host: Any = None
        if isinstance(NumEnv, bool) or not isinstance(NumEnv, (int, np.integer)) or NumEnv < 1:
            raise error(SpecError, "rlFunctionVectorEnv NumEnv", "be an integer >= 1", NumEnv, "Pass e.g. NumEnv=64")
        ok = MaxStepsPerEpisode is None or (
            isinstance(MaxStepsPerEpisode, (int, np.integer))
            and not isinstance(MaxStepsPerEpisode, bool)
            and MaxStepsPerEpisode >= 1
        )
        if not ok:
            raise error(
                SpecError,
                "rlFunctionVectorEnv MaxStepsPerEpisode",
                "be None or an integer >= 1",
                MaxStepsPerEpisode,
                "Pass e.g. MaxStepsPerEpisode=500",
            )
        self.num_envs = self.NumEnv = int(NumEnv)
        self.MaxStepsPerEpisode = self.max_episode_steps = (
            None if MaxStepsPerEpisode is None else int(MaxStepsPerEpisode)
        )
        self.autoreset_mode = autoreset_mode
        self.check_actions = bool(check_actions)
        self._obs_specs, self._obs_keys = observation_channels(observationInfo)
        self._act_specs = action_channels(actionInfo)
        self.single_observation_space = channels_space(self._obs_specs, self._obs_keys)
        self.single_action_space = action_space_of(self._act_specs)
        # MATLAB batches -> neutral batches (observations), neutral -> MATLAB (actions)
        self._decode_obs = lowering.channels_decoder(self._obs_specs, self._obs_keys, batch=self.num_envs)
        self._encode_action = lowering.action_encoder(self._act_specs, batch=True)
        self._step_given, self._step_fn = stepFcn, functions.resolve_function(stepFcn, "rlFunctionVectorEnv StepFcn")
        self._reset_given, self._reset_fn = (
            resetFcn,
            functions.resolve_function(resetFcn, "rlFunctionVectorEnv ResetFcn"),
        )
        self._step_rng, self._reset_rng = functions.accepts_rng(self._step_fn), functions.accepts_rng(self._reset_fn)
        if functions.is_matlab(self._step_fn) or functions.is_matlab(self._reset_fn):  # NumEnv instances in Octave
            if setupFcn is not None:
                fix = "Leave setupFcn out: each instance runs your single-env .m functions from its own LoggedSignals"
                raise error(
                    SpecError,
                    "rlFunctionVectorEnv setupFcn",
                    "be None with .m functions",
                    _describe_value(setupFcn),
                    fix,
                )
            self._host = functions.hosted(
                self._step_fn, self._reset_fn, self._obs_specs, self._act_specs, workspace, timeout, self.num_envs
            )
            self._step_fn, self._reset_fn, self._step_rng, self._reset_rng = (
                self._host.step,
                self._host.reset,
                False,
                True,
            )
        self.SetupFcn = setupFcn
        self.EnvData: Any = (
            None
            if setupFcn is None
            else functions.resolve_function(setupFcn, "rlFunctionVectorEnv SetupFcn")(self.num_envs)
        )

    @property
    def StepFcn(self) -> Any:
        return self._step_given

    @property
    def ResetFcn(self) -> Any:
        return self._reset_given

    observationInfo = rlFunctionEnv.observationInfo
    actionInfo = rlFunctionEnv.actionInfo

    # -- the batched user functions (the VectorEnv base owns autoreset, checks and the guard) -----
    def reset_envs(self, mask: np.ndarray, seeds: List[Optional[int]], options: Optional[dict]) -> Tuple[Any, dict]:
        fn = self._reset_fn
        out = fn(self.EnvData, mask, rng=self.np_random) if self._reset_rng else fn(self.EnvData, mask)
        if type(out) is not tuple or len(out) != 2:  # the common case without a call
            out = functions.outputs(out, "ResetFcn", RESET_OUTPUTS)
        observation, data = out
        neutral = self._decode_obs(observation, "ResetFcn output InitialObservation")
        self.EnvData = data
        return neutral, {}

    def step_envs(self, actions: Any, active: np.ndarray) -> Tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        n = self.num_envs
        value = self._encode_action(actions)
        fn = self._step_fn
        out = fn(value, self.EnvData, rng=self.np_random) if self._step_rng else fn(value, self.EnvData)
        # the common 4-tuple without a call, with the rewards' copy() (functions.to_rewards) and the
        # observations' (lowering): +3.8k instructions a batch, 0.93 % of rlFunctionVectorEnv(256)
        # (benchmarks/bench_matlab.py --instructions); under 1 %, kept: that row is above 5990964's
        if type(out) is not tuple or len(out) != 4:
            out = functions.outputs(out, "StepFcn", STEP_OUTPUTS)
        observation, reward, is_done, data = out
        obs = self._decode_obs(observation, "StepFcn output NextObservation")
        rewards = functions.to_rewards(reward, n)
        terminated = functions.to_dones(is_done, n)
        self.EnvData = data  # committed only once every output converted
        return obs, rewards, terminated, np.zeros(n, dtype=bool), {}

    def close_envs(self) -> None:
        if self._host is not None:  # .m functions: their Octave process
            self._host.close()

    def __repr__(self) -> str:
        return f"<rlFunctionVectorEnv NumEnv={self.num_envs} autoreset={self.autoreset_mode}>"

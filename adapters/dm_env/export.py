"""Export a neutral env to the dm_env API: ``to_dm_env`` (a ``dm_env.Environment``).

Episode ends follow dm_env's ``TimeStep``: a terminated step is LAST with discount 0, a truncated
(cut-off) step is LAST with discount 1, and a step that is both is terminated (termination wins,
as the episode-end table says). ``step()`` on a fresh env or after a LAST step resets and returns
the FIRST step, as dm_env's contract asks. dm_env's ``reset()`` takes no seed: the ``seed`` option
seeds the first reset, and ``reset(seed=...)`` (an extension) seeds that reset. ``info`` has no
place in a TimeStep; ``last_info`` holds the last step's. The export is declared on the Export base
(:mod:`bridge.adapters._shared.export`); specs come from :mod:`.lowering`.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
from bridge.adapters._shared.export import Export
from bridge.adapters.dm_env.lowering import dm_env, lower

__all__ = ["DmEnv", "to_dm_env"]

_FIRST, _MID, _LAST = dm_env.StepType.FIRST, dm_env.StepType.MID, dm_env.StepType.LAST
_TimeStep = dm_env.TimeStep
_REWARD = dm_env.specs.Array((), np.float64, name="reward")
_DISCOUNT = dm_env.specs.BoundedArray((), np.float64, 0.0, 1.0, name="discount")


class DmEnv(Export, dm_env.Environment):
    """A neutral :class:`~bridge.env.Env` behind the dm_env API (build it with :func:`to_dm_env`).

    ``last_flags`` holds the neutral ``(terminated, truncated)`` of the last step and
    ``last_info`` its info dict, for checkers and tests.
    """

    runtime = "dm_env"
    export_name = "to_dm_env"
    label = "dm_env env"
    lower = staticmethod(lower)

    def present(self) -> None:
        self._observation_spec = self.observation_lowering.space
        self._action_spec = self.action_lowering.space
        self._pending_seed: Optional[int] = self.options.get("seed")
        self._fresh = True  # the next step() starts an episode (a fresh env, or after LAST)
        self.last_flags: Tuple[bool, bool] = (False, False)
        self.last_info: dict = {}

    def decode_observation(self, obs: Any) -> Any:
        """A dm_env observation of this env -> the neutral observation."""
        return self.observation_lowering.decode(obs)

    def reset(self, *, seed: Optional[int] = None) -> dm_env.TimeStep:
        if seed is None:
            seed, self._pending_seed = self._pending_seed, None
        obs, self.last_info = super().reset(seed=seed)
        self._fresh = False
        self.last_flags = (False, False)
        return _TimeStep(_FIRST, None, None, obs)

    def step(self, action: Any) -> dm_env.TimeStep:
        if self._fresh:
            return self.reset()
        obs, reward, terminated, truncated, self.last_info = super().step(action)
        self.last_flags = (terminated, truncated)
        if terminated:
            self._fresh = True
            return _TimeStep(_LAST, reward, 0.0, obs)
        if truncated:
            self._fresh = True
            return _TimeStep(_LAST, reward, 1.0, obs)
        return _TimeStep(_MID, reward, 1.0, obs)

    def restore_state(self, snapshot: dict) -> None:
        super().restore_state(snapshot)
        self._fresh = False  # a snapshot is taken inside an episode: the next step continues it

    def observation_spec(self) -> Any:
        return self._observation_spec

    def action_spec(self) -> Any:
        return self._action_spec

    def reward_spec(self) -> Any:
        return _REWARD

    def discount_spec(self) -> Any:
        return _DISCOUNT


def to_dm_env(env: Any, **options: Any) -> DmEnv:
    """Export ``env`` (a bridge.Env, or anything the env resolver takes) to the dm_env API.

    Options (docs/options.md): ``check_actions`` (default True), ``strict`` (False),
    ``max_episode_steps`` (None), ``seed`` (None: the seed of the first reset).

    Raises:
        ConversionError: a space dm_env cannot hold; nothing is wrapped.
    """
    return DmEnv.build(env, options)

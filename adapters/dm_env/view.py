"""The "dm_env" conformance view: neutral actions into ``to_dm_env``, TimeSteps read back."""

from __future__ import annotations

from typing import Any, Optional

from bridge.adapters.dm_env.export import to_dm_env

from bridge.conformance.replay import StepOut, View
from bridge.env import Env


class DmEnvView(View):
    """Neutral action -> ``action_lowering.encode`` -> ``step`` -> the TimeStep's observation decoded.

    dm_env has one LAST with a discount: terminated is discount 0, truncated is discount > 0 (a
    both-flags step reads as terminated only).
    """

    name = "dm_env"
    both_flags = False

    def __init__(self, env: Env) -> None:
        self.export = to_dm_env(env)
        self._encode_action = self.export.action_lowering.encode
        self._decode_obs = self.export.observation_lowering.decode

    def reset(self, seed: Optional[int]) -> Any:
        return self._decode_obs(self.export.reset(seed=seed).observation)

    def step(self, action: Any) -> StepOut:
        step = self.export.step(self._encode_action(action))
        last = step.last()
        return self._decode_obs(step.observation), step.reward, last and step.discount == 0, last and step.discount > 0

    def clone_state(self) -> Any:
        return self.export.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.export.restore_state(snapshot)

    def close(self) -> None:
        self.export.close()

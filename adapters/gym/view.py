"""The "gym" conformance view: neutral actions into ``to_gym``, observations decoded by its lowering."""

from __future__ import annotations

from typing import Any, Optional

from bridge.adapters.gym.export import to_gym

from bridge.conformance.replay import StepOut, View
from bridge.env import Env


class GymView(View):
    """Neutral action -> the export's ``action_lowering.encode`` -> ``step`` -> its observation decode.

    gym 0.23 has one ``done``: terminated is ``info["is_terminal"]``, truncated is
    ``info["TimeLimit.truncated"]`` (a both-flags step reads as terminated only).
    """

    name = "gym"
    both_flags = False

    def __init__(self, env: Env) -> None:
        self.export = to_gym(env)
        self._encode_action = self.export.action_lowering.encode
        self._decode_obs = self.export.observation_lowering.decode

    def reset(self, seed: Optional[int]) -> Any:
        return self._decode_obs(self.export.reset(seed=seed))

    def step(self, action: Any) -> StepOut:
        obs, reward, _, info = self.export.step(self._encode_action(action))
        return self._decode_obs(obs), reward, info["is_terminal"], info["TimeLimit.truncated"]

    def clone_state(self) -> Any:
        return self.export.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.export.restore_state(snapshot)

    def close(self) -> None:
        self.export.close()

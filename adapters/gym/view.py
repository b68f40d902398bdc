"""The "gym" conformance view: neutral actions straight into ``to_gym``, observations decoded back."""

from __future__ import annotations

from typing import Any, Optional

from bridge.adapters.gym.export import to_gym

from bridge.conformance.replay import StepOut, View
from bridge.env import Env


class GymView(View):
    """Neutral actions straight into ``to_gym`` (same values); observations decoded back.

    gym 0.23 has one ``done``: terminated is ``info["is_terminal"]``, truncated is
    ``info["TimeLimit.truncated"]`` (a both-flags step reads as terminated only).
    """

    name = "gym"
    both_flags = False

    def __init__(self, env: Env) -> None:
        self.export = to_gym(env)

    def reset(self, seed: Optional[int]) -> Any:
        return self.export.decode_observation(self.export.reset(seed=seed))

    def step(self, action: Any) -> StepOut:
        obs, reward, _, info = self.export.step(action)
        return self.export.decode_observation(obs), reward, info["is_terminal"], info["TimeLimit.truncated"]

    def clone_state(self) -> Any:
        if self.export.env.determinism == "none":
            raise NotImplementedError("this env declares no snapshots")  # replay skips the detour
        return self.export.env.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.export.env.restore_state(snapshot)

    def close(self) -> None:
        self.export.close()


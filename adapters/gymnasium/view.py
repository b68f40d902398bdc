"""The "gymnasium" conformance view: drive ``to_gymnasium`` with neutral actions, decode back."""

from __future__ import annotations

from typing import Any, Optional

from bridge.adapters.gymnasium.export import to_gymnasium

from bridge.conformance.replay import StepOut, View
from bridge.env import Env


class GymnasiumView(View):
    """Neutral action -> ``action_lowering.encode`` -> export.step -> ``observation_lowering.decode``."""

    name = "gymnasium"
    both_flags = True  # Gymnasium's 5-tuple says terminated and truncated separately

    def __init__(self, env: Env) -> None:
        self.export = to_gymnasium(env)
        self._encode_action = self.export.action_lowering.encode
        self._decode_obs = self.export.observation_lowering.decode

    def expected(self, obs: Any) -> Any:
        return self.export.observation_lowering.expected(obs)

    def reset(self, seed: Optional[int]) -> Any:
        return self._decode_obs(self.export.reset(seed=seed)[0])

    def step(self, action: Any) -> StepOut:
        obs, reward, terminated, truncated, _ = self.export.step(self._encode_action(action))
        return self._decode_obs(obs), reward, terminated, truncated

    def clone_state(self) -> Any:
        return self.export.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.export.restore_state(snapshot)

    def close(self) -> None:
        self.export.close()

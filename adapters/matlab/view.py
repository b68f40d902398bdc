"""The "matlab" conformance view: any neutral env driven through the MATLAB export, as MATLAB code
would drive it: neutral action -> the MATLAB value of the specs -> ``step`` -> the MATLAB observation
decoded back by the same lowering. MATLAB has one flag, IsDone; the export keeps the neutral flags
(``last_flags``), and a step that is both terminated and truncated reads as terminated
(``both_flags = False``).
"""

from __future__ import annotations

from typing import Any, Optional

from bridge.adapters.matlab.export import MatlabEnv

from bridge.conformance.replay import StepOut, View
from bridge.env import Env


class MatlabView(View):
    """Neutral env -> :class:`~bridge.adapters.matlab.export.MatlabEnv`, values through its lowerings."""

    name = "matlab"
    both_flags = False

    def __init__(self, env: Env) -> None:
        self.export = MatlabEnv(env)
        self._to_matlab = self.export.action_lowering.encode
        self._from_matlab = self.export.observation_lowering.decode

    def reset(self, seed: Optional[int]) -> Any:
        return self._from_matlab(self.export.reset(seed=seed))

    def step(self, action: Any) -> StepOut:
        obs, reward, _, _ = self.export.step(self._to_matlab(action))
        terminated, truncated = self.export.last_flags
        return self._from_matlab(obs), reward, terminated, truncated and not terminated

    def clone_state(self) -> Any:
        return self.export.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.export.restore_state(snapshot)

    def close(self) -> None:
        self.export.close()

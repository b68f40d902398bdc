"""The one conformance view of an export: neutral actions in through the export's own lowering,
the runtime's step read back to neutral values by the same lowering.

A runtime's view is this class with two declarations: ``export`` (its ``to_*`` function) and how
its step and reset read (:meth:`ExportView.read_step`, :meth:`ExportView.read_reset`), plus
``name`` and ``both_flags`` (whether the runtime says terminated and truncated at once).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from bridge.conformance.replay import StepOut, View
from bridge.env import Env

__all__ = ["ExportView"]


class ExportView(View):
    """Neutral action -> ``action_lowering.encode`` -> ``step`` -> read -> ``observation_lowering.decode``."""

    export_function: Callable[..., Any]

    def __init__(self, env: Env) -> None:
        self.export = type(self).export_function(env)
        self._encode_action = self.export.action_lowering.encode
        self._decode_obs = self.export.observation_lowering.decode

    def read_reset(self, out: Any) -> Any:
        """The runtime observation in what the export's ``reset`` returned (Gymnasium's: ``out[0]``)."""
        return out[0]

    def read_step(self, out: Any) -> Tuple[Any, float, bool, bool]:
        """``(runtime observation, reward, terminated, truncated)`` from what the export's ``step`` returned."""
        return out[0], out[1], out[2], out[3]

    def expected(self, obs: Any) -> Any:
        return self.export.observation_lowering.expected(obs)

    def reset(self, seed: Optional[int]) -> Any:
        return self._decode_obs(self.read_reset(self.export.reset(seed=seed)))

    def step(self, action: Any) -> StepOut:
        obs, reward, terminated, truncated = self.read_step(self.export.step(self._encode_action(action)))
        return self._decode_obs(obs), reward, terminated, truncated

    def clone_state(self) -> Any:
        return self.export.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.export.restore_state(snapshot)

    def close(self) -> None:
        self.export.close()

"""The "gym" conformance view: neutral actions into ``to_gym``, observations decoded by its lowering."""

from __future__ import annotations

from typing import Any, Tuple

from bridge.adapters._shared.view import ExportView
from bridge.adapters.gym.export import to_gym


class GymView(ExportView):
    """gym 0.23 has one ``done``: terminated is ``info["is_terminal"]``, truncated is
    ``info["TimeLimit.truncated"]`` (a both-flags step reads as terminated only)."""

    name = "gym"
    both_flags = False
    export_function = staticmethod(to_gym)

    def read_reset(self, out: Any) -> Any:
        return out

    def read_step(self, out: Any) -> Tuple[Any, float, bool, bool]:
        obs, reward, _, info = out
        return obs, reward, info["is_terminal"], info["TimeLimit.truncated"]

"""The "dm_env" conformance view: neutral actions into ``to_dm_env``, TimeSteps read back."""

from __future__ import annotations

from typing import Any, Tuple

from bridge.adapters._shared.view import ExportView
from bridge.adapters.dm_env.export import to_dm_env


class DmEnvView(ExportView):
    """dm_env has one LAST with a discount: terminated is discount 0, truncated is discount > 0 (a
    both-flags step reads as terminated only)."""

    name = "dm_env"
    both_flags = False
    export_function = staticmethod(to_dm_env)

    def read_reset(self, out: Any) -> Any:
        return out.observation

    def read_step(self, out: Any) -> Tuple[Any, float, bool, bool]:
        last = out.last()
        return out.observation, out.reward, last and out.discount == 0, last and out.discount > 0

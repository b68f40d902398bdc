"""The "matlab" conformance view: any neutral env driven through the MATLAB export, as MATLAB code
would drive it: neutral action -> the MATLAB value of the specs -> ``step`` -> the MATLAB observation
decoded back by the same lowering. MATLAB has one flag, IsDone; the export keeps the neutral flags
(``last_flags``), and a step that is both terminated and truncated reads as terminated
(``both_flags = False``).
"""

from __future__ import annotations

from typing import Any, Tuple

from bridge.adapters._shared.view import ExportView
from bridge.adapters.matlab.export import to_matlab


class MatlabView(ExportView):
    """Neutral env -> :class:`~bridge.adapters.matlab.export.MatlabEnv`, values through its lowerings."""

    name = "matlab"
    both_flags = False
    export_function = staticmethod(to_matlab)

    def read_reset(self, out: Any) -> Any:
        return out

    def read_step(self, out: Any) -> Tuple[Any, float, bool, bool]:
        terminated, truncated = self.export.last_flags
        return out[0], out[1], terminated, truncated and not terminated

"""The "gymnasium" conformance view: drive ``to_gymnasium`` with neutral actions, decode back."""

from __future__ import annotations

from bridge.adapters._shared.view import ExportView
from bridge.adapters.gymnasium.export import to_gymnasium


class GymnasiumView(ExportView):
    """The export's 5-tuple read as it is (Gymnasium says terminated and truncated separately)."""

    name = "gymnasium"
    both_flags = True
    export_function = staticmethod(to_gymnasium)

"""Conformance: record tapes in neutral form and prove every export replays them identically.

``record`` a :class:`Tape`, ``Tape.save``/``Tape.load`` it (no pickle), ``verify`` it through every
view available in this interpreter. :mod:`bridge.conformance.suite` is a pytest mixin for users.
"""

from __future__ import annotations

from bridge.conformance.recording import record
from bridge.conformance.replay import (
    Agreement,
    Divergence,
    Failure,
    NeutralView,
    Refusal,
    Unavailable,
    Verdict,
    View,
    available_views,
    make_view,
    replay,
    verify,
)
from bridge.conformance.tape import Entry, Tape

__all__ = [
    "Tape",
    "Entry",
    "record",
    "View",
    "NeutralView",
    "Verdict",
    "Agreement",
    "Divergence",
    "Failure",
    "Refusal",
    "Unavailable",
    "make_view",
    "available_views",
    "replay",
    "verify",
]

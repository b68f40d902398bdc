"""The numbers a public entry takes from Python callers: seeds and counts, one rule and one message each.

``record(env, steps=2.5)`` used to reach ``range`` (``TypeError``), ``seed=-1`` numpy
(``ValueError``), a MATLAB agent's ``seed="0"`` a dtype cast; every entry that takes a seed or a
count checks it here first, before anything is built, and names itself:

    conformance.record seed must be a non-negative int, got -1. Pass e.g. seed=0.
    conformance.record steps must be an int >= 1, got 2.5. Pass a whole number, e.g. steps=200.

(``bridge.config`` checks the same kinds of values when they come from a ``--config`` text.)
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from bridge.errors import SpecError, message

__all__ = ["seed", "count"]


def _whole(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def seed(value: Any, subject: str, *, optional: bool = True, high: Optional[int] = None, name: str = "seed") -> Any:
    """``value`` as an int (or None when ``optional``): a non-negative whole number, at most ``high``.

    Args:
        subject: how the message names it, e.g. ``"reset seed"``.
        high: the largest seed the consumer takes (numpy's legacy ``np.random.seed``: ``2**32 - 1``).
        name: the keyword in the fix (``Pass e.g. seed=0``).
    """
    if value is None and optional:
        return None
    if not _whole(value) or value < 0 or (high is not None and value > high):
        expectation = "be a non-negative int" + (f" <= {high}" if high is not None else "")
        expectation += " or None" if optional else ""
        raise SpecError(message(subject, expectation, repr(value), f"Pass e.g. {name}=0"))
    return int(value)


def count(value: Any, subject: str, *, low: int = 0, example: str = "") -> int:
    """``value`` as an int >= ``low``; a float (even ``2.0``), a bool or a string is refused."""
    if not _whole(value) or value < low:
        fix = "Pass a whole number" + (f", e.g. {example}" if example else "")
        raise SpecError(message(subject, f"be an int >= {low}", repr(value), fix))
    return int(value)

"""Whether a space's arrays could ever be allocated here, asked before any is made.

``Box(0, 1, (10**12,))`` used to reach numpy's ``MemoryError`` (3.64 TiB) or, below physical
memory but above a process limit, the OOM killer; the size is known from the shape and dtype.
Every space estimates its bytes (``Space._memory``): a Box what building its bounds takes,
MultiBinary and MultiDiscrete a value and its checks, and Dict and Tuple the sum of their children,
checked as one (a Tuple of 100 boxes that each fit may not fit together).
"""

from __future__ import annotations

import math
import os
from typing import Optional, Sequence, Tuple

import numpy as np

from bridge.errors import SpecError, message

__all__ = ["box_bytes", "value_bytes", "check_memory", "check_together", "memory_limit"]

_CHECKED_FROM = 64 * 2**20  # smaller boxes are built without asking the system
# bytes per element while a float Box is built, besides low, high and their finite masks: the
# bounds as written in float64 (2 x 8), their rounding and comparisons (about as much again)
_FLOAT_BUILDING = 32
# bytes per element of a MultiBinary/MultiDiscrete besides one value: its own arrays (MultiDiscrete's
# nvec, start, last), and the masks and int64 draws of contains() and sample()
_VALUE_CHECKS = {"MultiBinary": 3 + 8, "MultiDiscrete": 3 * 8 + 3 + 8}
_FIT = "Use a smaller shape; keep bulk data that is not an observation out of the space"


def box_bytes(shape: Tuple[int, ...], dtype: np.dtype) -> int:
    """What building a Box of ``shape`` and ``dtype`` takes: bounds, masks, the float work."""
    return math.prod(shape) * (2 * dtype.itemsize + 2 + (_FLOAT_BUILDING if dtype.kind == "f" else 0))


def value_bytes(kind: str, shape: Tuple[int, ...], dtype: np.dtype) -> int:
    """What a MultiBinary or MultiDiscrete (``kind``) of ``shape`` takes: its arrays, a value, its checks."""
    return math.prod(shape) * (dtype.itemsize + _VALUE_CHECKS[kind])


def check_memory(kind: str, shape: Tuple[int, ...], dtype: np.dtype, nbytes: int, what: str) -> None:
    """A SpecError naming the size when the space's ``nbytes`` (``what`` takes them, e.g. "building
    its bounds takes") could never be allocated here: more than physical memory, or than a lower
    address-space limit (RLIMIT_AS); asked before any array is made."""
    limit, source = _over(nbytes)
    if limit is not None:
        size = math.prod(shape)
        got = f"{shape}, {size:,} {dtype.name} values ({what} about {_gib(nbytes)})"
        raise SpecError(message(f"{kind} shape", f"fit in memory (at most {_gib(limit)}: {source})", got, _FIT))


def check_together(kind: str, estimates: Sequence[int]) -> None:
    """The same check for a Dict or Tuple (``kind``): its children's ``estimates`` summed."""
    nbytes = sum(estimates)
    limit, source = _over(nbytes)
    if limit is not None:
        expectation = f"fit in memory together (at most {_gib(limit)}: {source})"
        got = f"{len(estimates)} spaces taking about {_gib(nbytes)} (their bounds, values and checks)"
        fix = "Use fewer or smaller spaces; keep bulk data that is not an observation out of the space"
        raise SpecError(message(f"{kind} spaces", expectation, got, fix))


def _over(nbytes: int) -> Tuple[Optional[int], str]:
    """The memory limit and its source when ``nbytes`` exceeds it, else ``(None, "")``."""
    if nbytes <= _CHECKED_FROM:
        return None, ""
    limit, source = memory_limit()
    return (limit, source) if limit is not None and nbytes > limit else (None, "")


def memory_limit() -> Tuple[Optional[int], str]:
    """The most memory this process can have, and what sets it: physical memory or RLIMIT_AS."""
    limit: Optional[int] = None
    source = ""
    try:
        limit, source = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "this machine's physical memory"
    except (AttributeError, ValueError, OSError):  # not on every platform
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and (limit is None or soft < limit):
            limit, source = soft, "this process's address-space limit, RLIMIT_AS"
    except (ImportError, ValueError, OSError):
        pass
    return limit, source


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.1f} GiB"

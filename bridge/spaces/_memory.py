"""Whether a space's arrays could ever be allocated here, asked before any is made.

``Box(0, 1, (10**12,))`` used to reach numpy's ``MemoryError`` (3.64 TiB) or, below physical
memory but above a process limit, the OOM killer; the size is known from the shape and dtype.
"""

from __future__ import annotations

import math
import os
from typing import Optional, Tuple

import numpy as np

from bridge.errors import SpecError, message

__all__ = ["check_memory", "memory_limit"]

_CHECKED_FROM = 64 * 2**20  # smaller boxes are built without asking the system
# bytes per element while a float Box is built, besides low, high and their finite masks: the
# bounds as written in float64 (2 x 8), their rounding and comparisons (about as much again)
_FLOAT_BUILDING = 32


def check_memory(kind: str, shape: Tuple[int, ...], dtype: np.dtype) -> None:
    """A SpecError naming the size when building the box could never be allocated here: more than
    physical memory, or than a lower address-space limit (RLIMIT_AS), before any array is made."""
    size = math.prod(shape)
    nbytes = size * (2 * dtype.itemsize + 2 + (_FLOAT_BUILDING if dtype.kind == "f" else 0))
    if nbytes <= _CHECKED_FROM:
        return
    limit, source = memory_limit()
    if limit is not None and nbytes > limit:
        expectation = f"fit in memory (at most {_gib(limit)}: {source})"
        got = f"{shape}, {size:,} {dtype.name} values (building its bounds takes about {_gib(nbytes)})"
        fix = "Use a smaller shape; keep bulk data that is not an observation out of the space"
        raise SpecError(message(f"{kind} shape", expectation, got, fix))


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

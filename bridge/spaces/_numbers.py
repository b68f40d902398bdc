"""Numbers exactly as the user wrote them, for checking against what a dtype can hold.

Python compares ``int`` with ``float`` exactly, so every bound check below runs on Python numbers
(or on numpy arrays of the same dtype) and never through a float64 round trip, which cannot tell
``2**63`` from ``2**63 - 1``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
Number = Union[int, float]


def user_array(value: Any) -> np.ndarray:
    """``value`` as an array that has lost no digit.

    Numeric ndarrays and numpy scalars stay as they are; Python numbers and (nested) lists become
    object arrays of the very numbers written (``np.asarray([-1, 2**63])`` would be float64).
    """
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    return np.array(value, dtype=object)


def python_number(x: Any) -> Optional[Number]:
    """``x`` as a Python int (bools count as 0/1) or float; None when it is not a real number."""
    if isinstance(x, (bool, np.bool_, int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    return None


def first(raw: np.ndarray, bad: Callable[[Any], Optional[str]]) -> Optional[Tuple[Tuple[int, ...], Any, str]]:
    """The first element of ``raw`` (C order) that ``bad`` names a problem for, as ``(index, value, problem)``."""
    for index in np.ndindex(raw.shape):
        value = raw[index]
        problem = bad(value)
        if problem is not None:
            return index, value, problem
    return None


def int_problem(x: Any, low: int, high: int) -> Optional[str]:
    """Why ``x`` is no integer in ``[low, high]``: "number", "nan", "range", "whole" or None."""
    n = python_number(x)
    if n is None:
        return "number"
    if isinstance(n, float):
        if n != n:
            return "nan"
        if not low <= n <= high:  # exact: Python compares int and float without rounding
            return "range"
        return None if n.is_integer() else "whole"
    return None if low <= n <= high else "range"


def float_problem(x: Any, dtype: np.dtype, wrong_infinity: float) -> Optional[str]:
    """Why ``x`` is no bound of a ``dtype`` Box: "number", "nan", "infinity" (``wrong_infinity``:
    +inf for a low, -inf for a high), "overflow" (a finite value that would become an infinity)
    or None. Values inside the range round to the nearest float."""
    n = python_number(x)
    if n is None:
        return "number"
    if isinstance(n, float) and (n != n):
        return "nan"
    if isinstance(n, float) and math.isinf(n):
        return "infinity" if n == wrong_infinity else None
    try:
        wide = float(n)
    except OverflowError:  # an int past float64's range
        return "overflow"
    with np.errstate(over="ignore"):
        return "overflow" if math.isinf(wide) or np.isinf(dtype.type(wide)) else None


def any_int_problem(raw: np.ndarray, low: int, high: int) -> bool:
    """Vectorized: does some element of a numeric ``raw`` fail :func:`int_problem`?"""
    if raw.size == 0 or raw.dtype.kind == "b":
        return False
    if raw.dtype.kind == "f" and not (np.isfinite(raw).all() and (raw == np.floor(raw)).all()):
        return True
    return int(raw.min()) < low or int(raw.max()) > high  # int() of an integral float is exact


def any_float_problem(raw: np.ndarray, dtype: np.dtype, wrong_infinity: float) -> bool:
    """Vectorized: does some element of a numeric ``raw`` fail :func:`float_problem`?"""
    if raw.size == 0:
        return False
    if raw.dtype.kind == "f" and (np.isnan(raw).any() or (raw == wrong_infinity).any()):
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        cast = raw.astype(dtype)
    return bool((np.isinf(cast) & np.isfinite(raw)).any())


def shown(x: Any) -> str:
    """A value for a message, the same text under numpy 1.19 and 2.x."""
    n = python_number(x)
    return repr(n) if n is not None else repr(x)


def where(subject: str, raw: np.ndarray, index: Tuple[int, ...]) -> str:
    """``subject`` plus the element index when the user gave an array (``Box high[2]``)."""
    return f"{subject}{list(index)}" if raw.ndim else subject

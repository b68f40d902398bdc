"""Distances between floats in units in the last place (ulps), and what they add up to per field.

Two floats of one dtype are ``n`` ulps apart when ``n - 1`` representable values lie between them:
0 means bit for bit, 1 means neighbours. The distance counts on the ordered bit patterns, so it is
exact at every magnitude (no subtraction in floating point) and ``-0.0`` is one ulp from ``0.0``;
two NaNs are 0 apart, a NaN or an infinity against anything else is infinitely far. Used by the
cross-era comparison (:mod:`bridge.conformance.across`), where numpy 1.19 and numpy 2 may round
the last bit of the same computation differently.

A field is measured at its own scale (:func:`ulps_at_scale`): a value that passes near zero by
cancellation (an angular speed changing sign) carries the absolute error of its larger neighbours,
which is thousands of ulps *of that small value* but one or two of the field. So the distance of
two differing values counts in ulps at the largest magnitude the field element takes on the tape
(at least 1, at most the exact count): the same as :func:`ulps` at full scale, robust near zero.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

__all__ = ["ulps", "ulps_at_scale", "FieldDifference"]

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise distance in ulps of two float arrays of one dtype and shape, as float64
    (``inf`` where one side is NaN or infinite and the other is not the same)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    unsigned = _UINT[a.dtype.itemsize]
    top = unsigned(1) << unsigned(8 * a.dtype.itemsize - 1)
    ka, kb = _ordered(a.view(unsigned), top), _ordered(b.view(unsigned), top)
    distance = (np.maximum(ka, kb) - np.minimum(ka, kb)).astype(np.float64)  # unsigned: no overflow
    both_nan = np.isnan(a) & np.isnan(b)
    odd = (~np.isfinite(a) | ~np.isfinite(b)) & (distance != 0) & ~both_nan
    distance[both_nan] = 0.0
    distance[odd] = math.inf
    return distance


def ulps_at_scale(a: np.ndarray, b: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """:func:`ulps`, counted at the magnitude ``max(|a|, |b|, scale)``: 0 only for equal bits, at
    least 1 otherwise, never more than the exact count; ``inf`` stays ``inf``."""
    exact = ulps(a, b)
    differ = (exact > 0) & np.isfinite(exact)
    if not differ.any():
        return exact
    with np.errstate(invalid="ignore", over="ignore"):
        top = np.maximum(np.maximum(np.abs(a), np.abs(b)), np.abs(scale).astype(a.dtype))
        counted = np.abs(a.astype(np.float64) - b.astype(np.float64)) / np.spacing(top).astype(np.float64)
    scaled = np.minimum(exact, np.maximum(1.0, np.ceil(counted)))
    return np.where(differ, scaled, exact)


def _ordered(bits: np.ndarray, top: np.generic) -> np.ndarray:
    """Map IEEE bit patterns to unsigned keys in the order of the values they encode."""
    negative = (bits & top) != 0
    return np.where(negative, ~bits, bits | top)


class FieldDifference:
    """The largest difference of one float field (an observation leaf, the reward) over a tape."""

    def __init__(self, field: str) -> None:
        self.field = field
        self.steps = 0  # steps compared
        self.differing = 0  # steps where the field was not bit for bit
        self.max_ulps = 0.0
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.first: Optional[str] = None  # where it first differed, e.g. "step 16"
        self.worst: Optional[str] = None  # where the largest ulp distance was

    def add(self, where: str, expected: np.ndarray, got: np.ndarray, scale: Optional[np.ndarray] = None) -> None:
        """Account for one comparison of ``got`` (this era) against ``expected`` (the tape), in ulps
        at ``scale`` (the field's largest magnitudes, :func:`ulps_at_scale`) when given."""
        self.steps += 1
        distance = ulps(expected, got) if scale is None else ulps_at_scale(expected, got, scale)
        if not distance.size or not distance.max() > 0:
            return
        self.differing += 1
        self.first = self.first or where
        largest = float(distance.max())
        if largest > self.max_ulps:
            self.max_ulps, self.worst = largest, where
        with np.errstate(invalid="ignore", over="ignore"):
            e, g = expected.astype(np.float64), got.astype(np.float64)
            absolute = np.abs(e - g)
            scale = np.maximum(np.abs(e), np.abs(g))
            relative = np.where(scale > 0, absolute / np.where(scale > 0, scale, 1.0), 0.0)
        self.max_abs = max(self.max_abs, float(np.nan_to_num(absolute, nan=math.inf).max()))
        self.max_rel = max(self.max_rel, float(np.nan_to_num(relative, nan=math.inf).max()))

    @property
    def ulps(self) -> float:
        return self.max_ulps

    def __str__(self) -> str:
        if not self.differing:
            return f"{self.field}: bit for bit in all {self.steps} comparisons"
        shown = "inf" if math.isinf(self.max_ulps) else f"{int(self.max_ulps)}"
        return (
            f"{self.field}: {shown} ulp at most (at {self.worst}; abs {self.max_abs:.3g}, rel {self.max_rel:.3g}), "
            f"first at {self.first}, in {self.differing} of {self.steps} comparisons"
        )

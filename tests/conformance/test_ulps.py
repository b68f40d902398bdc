"""Distances in ulps: exact at every magnitude, for float16/32/64, signed zeros, NaN and infinities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bridge.conformance.ulps import FieldDifference, ulps


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_neighbours_are_one_ulp_apart_at_every_magnitude(dtype):
    info = np.finfo(dtype)
    values = np.array([info.tiny, 1.0, -1.0, 1e3, info.max / 2, -1e-3], dtype)
    up = np.nextafter(values, dtype(np.inf))
    assert ulps(values, up).tolist() == [1.0] * len(values)
    assert ulps(values, np.nextafter(up, dtype(np.inf))).tolist() == [2.0] * len(values)
    assert ulps(values, values).tolist() == [0.0] * len(values)


def test_signed_zeros_nan_and_infinities():
    a = np.array([0.0, np.nan, np.inf, np.inf, 1.0, -5e-324])
    b = np.array([-0.0, np.nan, np.inf, np.finfo(np.float64).max, np.nan, 5e-324])
    assert ulps(a, b).tolist() == [1.0, 0.0, 0.0, math.inf, math.inf, 3.0]


def test_a_field_keeps_its_largest_difference_and_where_it_first_appeared():
    field = FieldDifference("reward")
    one = np.array(1.0)
    field.add("step 0", one, one)
    field.add("step 1", one, np.nextafter(one, 2.0))
    field.add("step 2", np.array(2.0), np.array(2.0) + 4 * np.spacing(2.0))
    assert (field.max_ulps, field.first, field.worst, field.differing, field.steps) == (4.0, "step 1", "step 2", 2, 3)
    assert str(field) == (
        "reward: 4 ulp at most (at step 2; abs 1.78e-15, rel 8.88e-16), first at step 1, in 2 of 3 comparisons"
    )


def test_at_the_fields_scale_a_value_near_zero_counts_the_ulps_of_its_larger_neighbours():
    from bridge.conformance.ulps import ulps_at_scale

    small = np.array([0.04, 3.0, 0.04])
    off = small + np.array([2048 * np.spacing(0.04), 2 * np.spacing(3.0), 0.0])
    assert ulps(small, off).tolist() == [2048.0, 2.0, 0.0]  # 1.42e-14 is 2,048 ulps of 0.04
    assert ulps_at_scale(small, off, np.array([10.0, 3.0, 10.0])).tolist() == [8.0, 2.0, 0.0]  # 8 of 10.0
    tiny = np.array([1e-300])
    assert ulps_at_scale(tiny, np.nextafter(tiny, 1.0), np.array([1.0])).tolist() == [1.0]  # differing bits: >= 1

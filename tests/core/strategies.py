"""Hypothesis strategies for neutral spaces (shared by the core and the fuzz tests)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from bridge import spaces

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32]
shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)


@st.composite
def boxes(draw: st.DrawFn) -> spaces.Box:
    shape = draw(shapes)
    dtype = draw(st.sampled_from(FLOAT_DTYPES + INT_DTYPES))
    if np.dtype(dtype).kind == "f":
        low = draw(st.sampled_from([-np.inf, -10.0, -1.0, 0.0]))
        high = draw(st.sampled_from([np.inf, 0.5, 1.0, 10.0]))
        return spaces.Box(low, max(high, low) if np.isfinite(low) else high, shape, dtype)
    info = np.iinfo(dtype)
    low = draw(st.integers(max(info.min, -100), min(info.max, 100)))
    high = draw(st.integers(low, min(info.max, low + 200)))
    return spaces.Box(low, high, shape, dtype)


leaves = st.one_of(
    boxes(),
    st.builds(spaces.Discrete, st.integers(1, 20), st.integers(-5, 5)),
    st.builds(
        lambda nvec, offset: spaces.MultiDiscrete(np.array(nvec), np.full(np.shape(nvec), offset)),
        st.one_of(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.just([[2, 3], [4, 5]])),
        st.integers(-3, 3),
    ),
    st.builds(spaces.MultiBinary, st.one_of(st.integers(1, 6), shapes)),
    st.builds(spaces.Image, st.integers(1, 8), st.integers(1, 8), st.sampled_from([1, 3, 4])),
)

keys = st.text("abcdefghij_", min_size=1, max_size=6)
space_trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3).map(spaces.Tuple),
        st.dictionaries(keys, children, min_size=1, max_size=3).map(spaces.Dict),
    ),
    max_leaves=6,
)

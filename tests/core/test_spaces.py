"""Spaces: hypothesis properties (sample in space, exact to_dict round trip, contains rejects wrong
dtype, shape and bounds) and construction errors asserted whole."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import space_trees
from support import raises_exactly

from bridge import spaces
from bridge.errors import ContractError, SpecError


@given(space_trees, st.integers(0, 2**32 - 1))
@settings(max_examples=150, deadline=None)
def test_sample_lies_in_space(space, seed):
    value = space.sample(np.random.default_rng(seed))
    assert space.mismatch(value) is None
    assert space.contains(value)


@given(space_trees)
@settings(max_examples=150, deadline=None)
def test_to_dict_round_trips_exactly_through_json(space):
    text = json.dumps(space.to_dict(), allow_nan=False)
    again = spaces.from_dict(json.loads(text))
    assert again == space
    assert type(again) is type(space)
    assert again.to_dict() == space.to_dict()


def _leaves(space, value):
    if isinstance(space, spaces.Dict):
        for k, s in space.items():
            yield from _leaves(s, value[k])
    elif isinstance(space, spaces.Tuple):
        for s, v in zip(space, value):
            yield from _leaves(s, v)
    else:
        yield space, value


@given(space_trees, st.integers(0, 2**32 - 1))
@settings(max_examples=150, deadline=None)
def test_contains_rejects_wrong_dtype_shape_and_bounds(space, seed):
    rng = np.random.default_rng(seed)
    for leaf, value in _leaves(space, space.sample(rng)):
        arr = np.asarray(value)
        wrong_dtype = np.float64 if arr.dtype != np.float64 else np.float32
        assert not leaf.contains(arr.astype(wrong_dtype)) or isinstance(leaf, spaces.Discrete)
        assert not leaf.contains(np.expand_dims(arr, 0))
        if isinstance(leaf, spaces.Discrete):
            assert not leaf.contains(float(value))
            assert not leaf.contains(leaf.start + leaf.n)
            assert not leaf.contains(leaf.start - 1)
        elif isinstance(leaf, spaces.MultiDiscrete):
            assert not leaf.contains(leaf.start + leaf.nvec)
        elif isinstance(leaf, spaces.MultiBinary):
            assert not leaf.contains(np.full(leaf.shape, 2, dtype=np.int8))
        elif isinstance(leaf, spaces.Box) and leaf.is_bounded("above") and leaf.dtype.kind == "f":
            above = np.nextafter(leaf.high, np.inf).astype(leaf.dtype)
            assert not leaf.contains(above)


def test_box_rejects_nan_and_reports_the_element():
    box = spaces.Box(-1.0, 1.0, (3,))
    value = np.array([0.0, np.nan, 0.0], dtype=np.float32)
    assert not box.contains(value)
    with raises_exactly(
        ContractError,
        "action[1] must lie in [-1.0, 1.0], got nan. Clip it into the bounds or widen the space (NaN is never inside).",
    ):
        box.validate(value, "action")


def test_box_refuses_wrong_dtype_with_the_cast_to_use():
    with raises_exactly(
        ContractError, "obs must have dtype float32, got dtype float64. Cast it with .astype(np.float32)."
    ):
        spaces.Box(0, 1, (2,)).validate(np.zeros(2), "obs")


def test_dict_names_the_path_inside():
    space = spaces.Dict(pos=spaces.Tuple([spaces.Discrete(2), spaces.Box(0, 1, (2,))]))
    bad = {"pos": (np.int64(1), np.array([0.5, 2.0], dtype=np.float32))}
    with raises_exactly(
        ContractError,
        "observation['pos'][1][1] must lie in [0.0, 1.0], got 2.0. Clip it into the bounds or widen the space (NaN is never inside).",
    ):
        space.validate(bad, "observation")


def test_dict_keeps_the_order_given():
    space = spaces.Dict([("z", spaces.Discrete(2)), ("a", spaces.Discrete(3))])
    assert list(space.keys()) == ["z", "a"]
    assert list(spaces.from_dict(space.to_dict()).keys()) == ["z", "a"]


@pytest.mark.parametrize(
    "build, text",
    [
        (lambda: spaces.Box(1.0, 0.0, (2,)), "Box low[0] must be <= high[0] (0.0), got 1.0. Swap or fix the bounds."),
        (
            lambda: spaces.Box(0, 1, (2,), dtype=bool),
            "Box dtype must be a float or integer dtype, got bool. Use MultiBinary for booleans.",
        ),
        (
            lambda: spaces.Box(0, np.inf, (2,), dtype=np.int32),
            "Box high must be finite and within [-2147483648, 2147483647] for dtype int32, got inf. Use np.iinfo(np.int32).min/.max for an unbounded integer Box.",
        ),
        (lambda: spaces.Box(np.nan, 1.0, (2,)), "Box low must not contain NaN, got nan. Use -np.inf/np.inf."),
        (lambda: spaces.Box(np.zeros(3), 1.0, (2,)), "Box low must have shape (2,), got shape (3,). Match shape."),
        (
            lambda: spaces.Discrete(0),
            "Discrete n must be an integer >= 1, got 0. Pass a plain int, e.g. Discrete(n=1).",
        ),
        (lambda: spaces.Discrete(3, start=1.5), "Discrete start must be an integer, got 1.5. Pass e.g. start=0."),
        (
            lambda: spaces.MultiDiscrete([3, 0]),
            "MultiDiscrete nvec must be a non-empty integer array with every entry >= 1, got [3, 0]. Pass e.g. MultiDiscrete([3, 4]).",
        ),
        (
            lambda: spaces.MultiDiscrete([3, 4], start=[1]),
            "MultiDiscrete start must be an integer array of shape (2,), got [1]. Pass one start per entry of nvec, or None for zeros.",
        ),
        (
            lambda: spaces.MultiBinary(0),
            "MultiBinary n must be an integer >= 1, got 0. Pass a plain int, e.g. MultiBinary(n=1).",
        ),
        (
            lambda: spaces.Image(64, 0),
            "Image width must be an integer >= 1, got 0. Pass a plain int, e.g. Image(width=1).",
        ),
        (
            lambda: spaces.Dict({1: spaces.Discrete(2)}),
            "Dict key must be a str, got 1. Name every entry with a string.",
        ),
        (
            lambda: spaces.Tuple([spaces.Discrete(2), 3]),
            "Tuple[1] must be a bridge.spaces.Space, got 3. Build it from bridge.spaces (Box, Discrete, ...).",
        ),
        (
            lambda: spaces.from_dict({"type": "Nope"}),
            "space dict['type'] must be one of ['Box', 'Dict', 'Discrete', 'Image', 'MultiBinary', 'MultiDiscrete', 'Tuple'], got 'Nope'. Pass the output of Space.to_dict().",
        ),
    ],
)
def test_bad_construction_raises_spec_error(build, text):
    with raises_exactly(SpecError, text):
        build()


def test_discrete_with_start_samples_and_contains():
    space = spaces.Discrete(3, start=-1)
    values = {int(space.sample(np.random.default_rng(i))) for i in range(50)}
    assert values == {-1, 0, 1}
    assert space.contains(-1) and space.contains(np.int32(1)) and not space.contains(2)
    assert not space.contains(True)
    assert repr(space) == "Discrete(3, start=-1)"


def test_image_is_uint8_hwc_and_declares_its_layout():
    image = spaces.Image(32, 48, 1)
    assert (image.shape, image.dtype, image.layout) == ((32, 48, 1), np.uint8, "HWC")
    assert image != spaces.Box(0, 255, (32, 48, 1), np.uint8)
    assert repr(image) == "Image(32, 48, 1)"


def test_unbounded_box_samples_are_finite():
    box = spaces.Box(-np.inf, np.inf, (100,))
    assert np.isfinite(box.sample(np.random.default_rng(0))).all()
    half = spaces.Box(np.array([0.0, -np.inf]), np.array([np.inf, 0.0]))
    value = half.sample(np.random.default_rng(1))
    assert value[0] >= 0 and value[1] <= 0


def test_batch_stack_and_iterate_round_trip():
    space = spaces.Dict(a=spaces.Discrete(3, start=2), b=spaces.Tuple([spaces.Box(0, 1, (2,))]))
    values = [space.sample(np.random.default_rng(i)) for i in range(4)]
    batch = spaces.stack(space, values)
    assert spaces.batch_space(space, 4).contains(batch)
    for i, value in enumerate(values):
        again = spaces.iterate(space, batch, i)
        assert int(again["a"]) == int(value["a"]) and np.array_equal(again["b"][0], value["b"][0])

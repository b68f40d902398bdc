"""rlNumericSpec / rlFiniteSetSpec: MATLAB property names, validation on set, neutral spaces."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bridge.adapters.matlab import DATA_TYPES, rlFiniteSetSpec, rlNumericSpec, specs_from_space
from support import raises_exactly

from bridge import spaces
from bridge.errors import ContractError, ConversionError, SpecError


def test_numeric_spec_defaults_are_matlabs():
    spec = rlNumericSpec([4, 1])
    assert spec.Dimension == [4, 1]
    assert spec.LowerLimit == -math.inf and spec.UpperLimit == math.inf
    assert (spec.DataType, spec.Name, spec.Description) == ("double", "", "")
    assert spec.to_space() == spaces.Box(-np.inf, np.inf, (4, 1), np.float64)


def test_properties_are_settable_after_creation_like_matlab():
    spec = rlNumericSpec([1, 1])
    spec.Name = "CartPole Action"
    spec.Description = "force"
    spec.UpperLimit = 10
    spec.LowerLimit = -10
    spec.DataType = "single"
    assert (spec.Name, spec.Description, spec.LowerLimit, spec.UpperLimit) == ("CartPole Action", "force", -10.0, 10.0)
    assert spec.to_space() == spaces.Box(-10, 10, (1, 1), np.float32)


@pytest.mark.parametrize("name", [n for n in DATA_TYPES if n != "logical"])
def test_every_numeric_class_maps_to_its_numpy_dtype(name):
    space = rlNumericSpec([2, 3], DataType=name).to_space()
    assert isinstance(space, spaces.Box) and space.dtype == DATA_TYPES[name] and space.shape == (2, 3)
    if space.dtype.kind in "iu":  # MATLAB's infinite default limits become the class's range
        info = np.iinfo(space.dtype)
        assert space.low.min() == info.min and space.high.max() == info.max


def test_logical_is_multibinary():
    assert rlNumericSpec([2, 2], DataType="logical").to_space() == spaces.MultiBinary([2, 2])


def test_array_limits_and_an_int_dimension():
    spec = rlNumericSpec(3, LowerLimit=[-1, -2, -3], UpperLimit=5)
    assert spec.Dimension == [3, 1]  # an int n is MATLAB's column [n 1]
    space = spec.to_space()
    assert (
        space.shape == (3, 1)
        and space.low.ravel().tolist() == [-1, -2, -3]
        and space.high.ravel().tolist() == [5, 5, 5]
    )


def test_spec_errors_name_the_property():
    with raises_exactly(
        SpecError,
        "rlNumericSpec Dimension must be a list of positive integers, got [0, 1]. Pass e.g. [4, 1] for a column of 4.",
    ):
        rlNumericSpec([0, 1])
    with raises_exactly(
        SpecError,
        "rlNumericSpec DataType must be one of ['double', 'single', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', "
        "'uint64', 'logical'], got float. Use \"double\" for float64 and \"single\" for float32.",
    ):
        rlNumericSpec([1, 1], DataType="float")
    with raises_exactly(
        SpecError,
        "rlNumericSpec LowerLimit must be a scalar or have size [2 1] (the Dimension), got size [3 1]. Pass one limit for every element, or a scalar for all.",
    ):
        rlNumericSpec([2, 1], LowerLimit=[1, 2, 3])
    with raises_exactly(
        SpecError,
        "rlNumericSpec LowerLimit must be <= UpperLimit (1.0), got 5.0. Set the limits in order, or swap them.",
    ):
        rlNumericSpec([1, 1], LowerLimit=5, UpperLimit=1)
    spec = rlNumericSpec([1, 1])
    with raises_exactly(SpecError, 'rlNumericSpec Name must be a string, got 3. Set e.g. spec.Name = "cart position".'):
        spec.Name = 3
    assert spec.Name == ""  # a refused set leaves the old value


def test_finite_set_of_scalars():
    spec = rlFiniteSetSpec([-10, 10])
    assert spec.Elements == [-10.0, 10.0] and spec.DataType == "double" and spec.Dimension == [1, 1]
    assert spec.to_space() == spaces.Discrete(2)
    assert spec.index(10) == 1 and spec.element(0) == -10.0
    assert spec.indices(np.array([10.0, -10.0, 10.0])).tolist() == [1, 0, 1]


def test_finite_set_of_arrays_and_typed_elements():
    spec = rlFiniteSetSpec([[1, 2], [3, 4], [5, 6]])
    assert spec.Dimension == [2, 1] and spec.to_space() == spaces.Discrete(3)
    assert spec.index(np.array([[3], [4]])) == 1
    assert spec.element(2).tolist() == [5.0, 6.0]
    assert rlFiniteSetSpec(np.array([1, 2, 3], dtype=np.int32)).DataType == "int32"


def test_finite_set_errors():
    with raises_exactly(
        SpecError, "rlFiniteSetSpec Elements must be distinct, got [1, 1]. Remove the repeated element."
    ):
        rlFiniteSetSpec([1, 1])
    with raises_exactly(  # equal by value though their bytes differ
        SpecError, "rlFiniteSetSpec Elements must be distinct, got [0.0, -0.0]. Remove the repeated element."
    ):
        rlFiniteSetSpec([0.0, -0.0])
    with raises_exactly(
        SpecError,
        "rlFiniteSetSpec Elements must be numbers, or numeric arrays all of one size, got [[1, 2], [1]]. Give every element the same size.",
    ):
        rlFiniteSetSpec([[1, 2], [1]])
    with raises_exactly(
        ContractError,
        "value must be one of the rlFiniteSetSpec Elements [-10.0, 10.0], got 5.0. Use one of the elements (the set is fixed at creation).",
    ):
        rlFiniteSetSpec([-10, 10]).index(5.0)


def test_specs_from_space_round_trip_the_neutral_space():
    for space in (
        spaces.Box(-1, 1, (3,), np.float32),
        spaces.Box(0, 255, (2, 2), np.uint8),
        spaces.Discrete(3, start=1),
        spaces.MultiBinary(4),
    ):
        spec = specs_from_space(space, "observation")
        back = spec.to_space()
        if isinstance(space, spaces.Discrete):
            assert back == spaces.Discrete(3) and spec.Elements == [1.0, 2.0, 3.0]
        else:
            assert back == space


def test_specs_from_space_refuses_what_matlab_cannot_express():
    with raises_exactly(
        ConversionError,
        "action must be one space, or Tuple(Discrete, Box) for a hybrid action, got Tuple(Discrete(2), Discrete(3)). "
        "MATLAB takes one action channel, or one finite set plus one numeric channel.",
    ):
        specs_from_space(spaces.Tuple([spaces.Discrete(2), spaces.Discrete(3)]), "action")
    nested = spaces.Dict(pos=spaces.Box(-1, 1, (2,)), inner=spaces.Dict(v=spaces.Discrete(2)))
    with raises_exactly(
        ConversionError,
        "observation['inner'] must be a space MATLAB can express as one observation channel (Box, Discrete, MultiBinary), "
        "got Dict('v': Discrete(2)). Flatten nested spaces into channels, or use Discrete for a discrete action.",
    ):
        specs_from_space(nested, "observation")

"""bridge/values.py, the one rule for incoming values (issue 35), in both eras: taken exactly or
refused with the whole message; the common case returns the very object it was given."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly

from bridge import spaces, values
from bridge.errors import ContractError

FIX = "Fix the env, or wrap it, so that it returns exactly the values its spaces and API declare."


@pytest.mark.parametrize(
    "call, value, text",
    [
        (values.flag, "False", "x must be a bool (True or False), got 'False' (str)"),
        (values.flag, 0, "x must be a bool (True or False), got 0 (int)"),
        (values.flag, np.array([True]), "x must be a bool (True or False), got array([ True]) (ndarray)"),
        (values.real, "0.25", "x must be a real number (an int or a float), got '0.25' (str)"),
        (values.real, np.bool_(True), "x must be a real number (an int or a float), got True (numpy bool)"),
        (values.real, 2**53 + 1, "x must be a real number a float holds exactly, got 9007199254740993 (int)"),
        (values.integer, 2.0, "x must be an integer (an int or a numpy integer), got 2.0 (float)"),
        (values.integer, np.uint64(2**63), "x must be an integer int64 holds, got 9223372036854775808 (numpy uint64)"),
        (values.integer, np.float32(1), "x must be an integer (an int or a numpy integer), got 1.0 (numpy float32)"),
        (values.integer, "x" * 80, f"x must be an integer (an int or a numpy integer), got '{'x' * 56}... (str)"),
    ],
)
def test_scalars_that_are_not_what_they_say_are_refused(call, value, text):
    with raises_exactly(ContractError, f"{text}. {FIX}"):
        call(value, "x")


def test_scalars_that_are_what_they_say_pass_exactly():
    assert values.flag(np.bool_(False), "x") is False and values.flag(True, "x") is True
    assert values.real(np.float32(0.5), "x") == 0.5 and type(values.real(3, "x")) is float
    assert type(values.real(np.array(1.5), "x")) is float
    one = np.int64(7)
    assert values.integer(one, "x") is one and type(values.integer(np.uint8(3), "x")) is np.int64


@pytest.mark.parametrize(
    "space, value, text",
    [
        (
            spaces.Box(0, 10, (2,), np.int32),
            np.array([1, 2**40]),
            "must hold int32 values exactly (integers in -2147483648..2147483647), got 1099511627776 (int64) at [1]",
        ),
        (
            spaces.Box(-1, 1, (1,), np.float32),
            np.array([1e300]),
            "must hold finite float32 values (magnitude at most 3.4028234663852886e+38), got 1e+300 (float64) at [0]",
        ),
        (spaces.MultiDiscrete([3, 3]), np.array([1.5, 2.7]), "must hold integers, got an array of dtype float64"),
        (spaces.Dict({"a": spaces.Discrete(3)}), {"a": 1}, None),
        (
            spaces.Dict({"a": spaces.Discrete(3)}),
            {"a": "1"},
            "['a'] must be an integer (an int or a numpy integer), got '1' (str)",
        ),
        (spaces.Tuple([spaces.Discrete(3)]), (1, 2), " must be a tuple of 1 values, got (1, 2) (tuple)"),
    ],
)
def test_a_decoder_names_the_entry_and_the_path(space, value, text):
    decode = values.decoder(space, "observation")
    if text is None:
        assert decode(value, "env's step()") == {"a": np.int64(1)}
        return
    sep = "" if text.startswith(("[", " ")) else " "
    with raises_exactly(ContractError, f"env's step() observation{sep}{text}. {FIX}"):
        decode(value, "env's step()")


def test_a_value_of_the_exact_dtype_is_returned_as_it_is():
    box = spaces.Box(-1.0, 1.0, (3,), np.float32)
    obs = np.zeros(3, np.float32)
    assert values.decoder(box, "observation")(obs, "at") is obs
    got = values.decoder(box, "observation")(np.array([0.5, -1.0, 0.25]), "at")
    assert got.dtype == np.float32 and got.tolist() == [0.5, -1.0, 0.25]


def test_an_int_past_the_largest_float_is_refused_as_a_reward():
    shown = repr(10**400)[:57]
    with raises_exactly(ContractError, f"x must be a real number a float holds exactly, got {shown}... (int). {FIX}"):
        values.real(10**400, "x")


@pytest.mark.parametrize(
    "space, value, text",
    [
        (spaces.Box(0, 1, (3,), np.float32), np.zeros(5, np.float32), "must have the shape (3,), got shape (5,)"),
        (spaces.Box(0, 1, (2,)), [[2**60 + 1, 0.5]], "must have the shape (2,), got shape (1, 2)"),
        (spaces.MultiDiscrete([3, 3]), 1, "must have the shape (2,), got shape ()"),
        (
            spaces.Box(0, 1, (2,), np.float64),
            [2**53 + 1, 0.5],
            "must hold numbers float64 holds exactly (a list mixing ints and floats is read as float64), "
            "got 9007199254740993 (int) at [0]",
        ),
        (
            spaces.Box(0, 1, (2, 1), np.float32),
            [[0.5], [np.int64(2**60 + 1)]],
            "must hold numbers float64 holds exactly (a list mixing ints and floats is read as float64), "
            "got 1152921504606846977 (int64) at [1, 0]",
        ),
        (spaces.Box(0, 1, (2,)), [[1], [1, 2]], "must hold numbers, got [[1], [1, 2]] (list)"),
    ],
)
def test_an_array_of_another_shape_or_a_rounded_int_is_refused(space, value, text):
    with raises_exactly(ContractError, f"env's step() observation {text}. {FIX}"):
        values.decoder(space, "observation")(value, "env's step()")


def test_a_list_of_the_right_shape_and_exact_numbers_is_taken():
    got = values.decoder(spaces.Box(0, 4, (2,), np.float64), "observation")([2**53, 0.5], "at")
    assert got.dtype == np.float64 and got.tolist() == [2.0**53, 0.5]

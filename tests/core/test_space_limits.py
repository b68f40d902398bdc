"""Spaces at the limits of their dtypes: a constructor either builds exactly the space written or
refuses, naming the bound and the value the user wrote; ``sample`` / ``contains`` stay exact at the
dtype's edges; deep trees compare and serialize without recursion; ``from_dict`` and ``sample``
refuse bad input with SpecErrors. Every example of issue 12's "Why" list is here, whole message."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import raises_exactly

from bridge import spaces
from bridge.errors import SpecError

I64_MAX, I64_MIN, U64_MAX = 2**63 - 1, -(2**63), 2**64 - 1
I64_RANGE = "[-9223372036854775808, 9223372036854775807]"
UNBOUNDED_INT = "Use np.iinfo(np.int64).min/.max for an unbounded integer Box."


# -- the examples of the issue, each refused with the whole message -----------------------------
@pytest.mark.parametrize(
    "build, text",
    [
        (
            lambda: spaces.Box(-(2**63), 2**63, dtype=np.int64),
            f"Box high must be finite and within {I64_RANGE} for dtype int64, got 9223372036854775808. {UNBOUNDED_INT}",
        ),
        (  # the bound the user wrote (high), with the user's value: not a low that high wrapped below
            lambda: spaces.Box(-1, 2**63, dtype=np.int64),
            f"Box high must be finite and within {I64_RANGE} for dtype int64, got 9223372036854775808. {UNBOUNDED_INT}",
        ),
        (
            lambda: spaces.Box(0, float(2**64), dtype=np.uint64),
            "Box high must be finite and within [0, 18446744073709551615] for dtype uint64, got 1.8446744073709552e+19. Use np.iinfo(np.uint64).min/.max for an unbounded integer Box.",
        ),
        (
            lambda: spaces.MultiDiscrete(np.array([2**64 - 1], np.uint64)),
            "MultiDiscrete nvec[0] must be at most 9223372036854775807 (int64), got 18446744073709551615. Use smaller entries: MultiDiscrete values are int64.",
        ),
        (
            lambda: spaces.Discrete(10, start=2**63 - 3),
            "Discrete start + n - 1 must be at most 9223372036854775807 (int64), got 9223372036854775814. Lower start or n: Discrete values are int64.",
        ),
        (
            lambda: spaces.Box(-1e40, 1e40, dtype=np.float32),
            "Box low must be an infinity or a finite value float32 can hold (magnitude at most 3.4028234663852886e+38), got -1e+40. Use np.inf/-np.inf for an unbounded side, or np.finfo(np.float32).max/.min.",
        ),
        (
            lambda: spaces.Box(0, 1, shape=(2.5,)),
            "Box shape must be a tuple of at most 32 non-negative ints, got (2.5,). Pass e.g. shape=(4,).",
        ),
    ],
    ids=[
        "int64-2**63",
        "int64-high-named",
        "uint64-float-2**64",
        "md-uint64-max",
        "discrete-start",
        "float32-1e40",
        "shape-2.5",
    ],
)
def test_the_issue_examples_are_refused_with_the_whole_message(build, text):
    with raises_exactly(SpecError, text):
        build()


def test_multidiscrete_at_the_top_of_int64_accepts_its_own_samples():
    space = spaces.MultiDiscrete([2**62], start=[2**62])  # last value 2**63 - 1: exactly int64 max
    rng = np.random.default_rng(0)
    for _ in range(50):
        value = space.sample(rng)
        assert space.contains(value), value
    assert space.contains(np.array([I64_MAX])) and space.contains(np.array([2**62]))
    assert not space.contains(np.array([2**62 - 1])) and not space.contains(np.array([I64_MIN]))
    assert space.mismatch(np.array([I64_MIN]), "a") == (
        "a[0]",
        "lie in [4611686018427387904, 9223372036854775807]",
        "-9223372036854775808",
        "Pick values inside nvec",
    )
    with raises_exactly(
        SpecError,
        "MultiDiscrete start[0] + nvec[0] - 1 must be at most 9223372036854775807 (int64), got 9223372036854775808. Lower start or nvec: MultiDiscrete values are int64.",
    ):
        spaces.MultiDiscrete([2**62 + 1], start=[2**62])


def test_discrete_at_the_top_of_int64_samples_exactly():
    space = spaces.Discrete(3, start=2**63 - 3)
    rng = np.random.default_rng(0)
    drawn = {int(space.sample(rng)) for _ in range(60)}
    assert drawn == {I64_MAX - 2, I64_MAX - 1, I64_MAX}
    assert type(space.sample(rng)) is np.int64
    assert space.contains(I64_MAX) and space.contains(np.uint64(I64_MAX)) and not space.contains(2**63)
    bottom = spaces.Discrete(2, start=I64_MIN)
    assert {int(bottom.sample(np.random.default_rng(s))) for s in range(20)} == {I64_MIN, I64_MIN + 1}
    with raises_exactly(
        SpecError,
        "Discrete start must be within [-9223372036854775808, 9223372036854775807] (int64), got -9223372036854775809. Pass a start that fits int64.",
    ):
        spaces.Discrete(1, start=I64_MIN - 1)


def test_discrete_n_past_int64_is_refused_even_when_start_would_fit():
    with raises_exactly(
        SpecError,
        "Discrete n must be at most 9223372036854775807 (int64), got 18446744073709551616. Use a Box of dtype int64 for wider ranges.",
    ):
        spaces.Discrete(2**64, start=I64_MIN)  # found by tests/reliability/test_fuzz_space_limits.py


def test_discrete_sampling_is_unchanged_for_spaces_that_were_already_valid():
    # the golden trajectories depend on it: start + integers(n), same draw, same value
    for n, start in [(4, 0), (3, -1), (10**12, 5), (2**62, -(2**62))]:
        rng = np.random.default_rng(7)
        assert int(spaces.Discrete(n, start).sample(rng)) == start + int(np.random.default_rng(7).integers(n))


# -- bounds: the element the user wrote, exact at the edges -------------------------------------
@pytest.mark.parametrize(
    "build, text",
    [
        (
            lambda: spaces.Box(0, np.array([1, 300]), dtype=np.uint8),
            "Box high[1] must be finite and within [0, 255] for dtype uint8, got 300. Use np.iinfo(np.uint8).min/.max for an unbounded integer Box.",
        ),
        (
            lambda: spaces.Box(-1, 5, dtype=np.uint64),
            "Box low must be finite and within [0, 18446744073709551615] for dtype uint64, got -1. Use np.iinfo(np.uint64).min/.max for an unbounded integer Box.",
        ),
        (
            lambda: spaces.Box([0, -1], [1, 1], dtype=np.uint32),
            "Box low[1] must be finite and within [0, 4294967295] for dtype uint32, got -1. Use np.iinfo(np.uint32).min/.max for an unbounded integer Box.",
        ),
        (  # a list mixing -1 and 2**63 is float64 to np.asarray: read exactly instead
            lambda: spaces.Box([-1, 0], [2**63, 1], dtype=np.int64),
            f"Box high[0] must be finite and within {I64_RANGE} for dtype int64, got 9223372036854775808. {UNBOUNDED_INT}",
        ),
        (
            lambda: spaces.Box(0.5, 3, dtype=np.int32),
            "Box low must be a whole number for dtype int32, got 0.5. Round it, or use a float dtype.",
        ),
        (
            lambda: spaces.Box(0, 70000.0, dtype=np.float16),
            "Box high must be an infinity or a finite value float16 can hold (magnitude at most 65504.0), got 70000.0. Use np.inf/-np.inf for an unbounded side, or np.finfo(np.float16).max/.min.",
        ),
        (
            lambda: spaces.Box(0, 10**400, dtype=np.float64),
            "Box high must be an infinity or a finite value float64 can hold (magnitude at most 1.7976931348623157e+308), got "
            + repr(10**400)
            + ". Use np.inf/-np.inf for an unbounded side, or np.finfo(np.float64).max/.min.",
        ),
        (
            lambda: spaces.Box([0, "a"], 1),
            "Box low[1] must be numeric, got 'a'. Pass numbers or numpy arrays.",
        ),
        (
            lambda: spaces.Box(np.inf, np.inf),
            "Box low must be finite or -np.inf, got inf. Use -np.inf for an unbounded side.",
        ),
        (
            lambda: spaces.Box(0.0, np.array([1.0, -np.inf])),
            "Box high[1] must be finite or np.inf, got -inf. Use np.inf for an unbounded side.",
        ),
        (
            lambda: spaces.Box(np.array([0.0, np.nan]), 1.0),
            "Box low[1] must not contain NaN, got nan. Use -np.inf/np.inf.",
        ),
        (
            lambda: spaces.Box(0, 1, shape=(True,)),
            "Box shape must be a tuple of at most 32 non-negative ints, got (True,). Pass e.g. shape=(4,).",
        ),
        (
            lambda: spaces.Box(0, 1, shape=(2.0,)),
            "Box shape must be a tuple of at most 32 non-negative ints, got (2.0,). Pass e.g. shape=(4,).",
        ),
        (
            lambda: spaces.Box(0, 1, shape=(-1,)),
            "Box shape must be a tuple of at most 32 non-negative ints, got (-1,). Pass e.g. shape=(4,).",
        ),
        (
            lambda: spaces.Box(0, 1, shape=(1,) * 33),
            f"Box shape must be a tuple of at most 32 non-negative ints, got {(1,) * 33}. Pass e.g. shape=(4,).",
        ),
    ],
)
def test_bounds_are_checked_exactly_against_the_dtype(build, text):
    with raises_exactly(SpecError, text):
        build()


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="this platform's longdouble is float64")
def test_a_longdouble_box_is_refused():
    with raises_exactly(
        SpecError,
        f"Box dtype must be float16, float32, float64 or an integer dtype, got {np.dtype(np.longdouble).name}. Use np.float64.",
    ):
        spaces.Box(0, 1, dtype=np.longdouble)


def test_the_largest_finite_float32_and_the_infinities_are_kept():
    top = float(np.finfo(np.float32).max)
    box = spaces.Box(-top, top, (3,), np.float32)
    assert box.is_bounded("both") and box.high[0] == np.finfo(np.float32).max
    rng = np.random.default_rng(0)
    for _ in range(20):
        value = box.sample(rng)
        assert np.isfinite(value).all() and box.contains(value)
    assert not box.contains(np.full(3, np.inf, np.float32))
    half = spaces.Box(0.0, np.inf, (2,), np.float32)
    assert half.contains(np.array([0.0, np.inf], np.float32)) and not half.is_bounded("above")
    # 0.1 is not a float32: rounded inward (down), never to the nearest float32 above 0.1
    assert spaces.Box(0.0, 0.1, (1,), np.float32).high[0] == np.nextafter(np.float32(0.1), np.float32(0))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int8, np.uint8])
def test_full_range_integer_boxes_sample_and_contain_exactly(dtype):
    info = np.iinfo(dtype)
    box = spaces.Box(int(info.min), int(info.max), (4,), dtype)
    assert int(box.low[0]) == int(info.min) and int(box.high[0]) == int(info.max)
    rng = np.random.default_rng(1)
    for _ in range(30):
        assert box.contains(box.sample(rng))
    corner = np.array([info.min, info.max, info.min, info.max], dtype=dtype)
    assert box.contains(corner)
    top = spaces.Box(int(info.max) - 1, int(info.max), (), dtype)
    drawn = {int(top.sample(np.random.default_rng(s))) for s in range(30)}
    assert drawn == {int(info.max) - 1, int(info.max)}
    assert not spaces.Box(int(info.min), int(info.max) - 1, (1,), dtype).contains(np.array([info.max], dtype))


def test_a_box_round_trips_its_exact_bounds_through_json():
    for box in [
        spaces.Box(I64_MIN, I64_MAX, (2,), np.int64),
        spaces.Box(0, U64_MAX, (2,), np.uint64),
        spaces.Box(np.array([U64_MAX - 1, 0], np.uint64), np.array([U64_MAX, 5], np.uint64)),
        spaces.Box(-float(np.finfo(np.float32).max), np.inf, (2,), np.float32),
    ]:
        again = spaces.from_dict(json.loads(json.dumps(box.to_dict())))
        assert again == box and again.low.tobytes() == box.low.tobytes()


# -- deep trees --------------------------------------------------------------------------------
def _chain(depth: int, leaf: spaces.Space, kind: str = "Tuple") -> spaces.Space:
    space = leaf
    for i in range(depth):
        space = spaces.Tuple([space]) if kind == "Tuple" else spaces.Dict({f"k{i % 3}": space})
    return space


@pytest.mark.parametrize("kind", ["Tuple", "Dict"])
def test_a_space_nested_200_deep_compares_and_serializes_without_recursion(kind):
    a, b = _chain(200, spaces.Discrete(3), kind), _chain(200, spaces.Discrete(3), kind)
    assert a == b and not (a != b)
    assert a != _chain(200, spaces.Discrete(4), kind) and a != _chain(199, spaces.Discrete(3), kind)
    data = a.to_dict()
    assert spaces.from_dict(data) == a
    value = a.sample(np.random.default_rng(0))
    assert a.contains(value)


def test_nesting_past_the_documented_limit_is_refused():
    deepest = _chain(spaces.MAX_DEPTH, spaces.Discrete(2))
    with raises_exactly(
        SpecError,
        "Tuple nesting must be at most 256 Dict/Tuple levels, got 257 levels. Flatten the space: nest fewer Dict/Tuple levels.",
    ):
        spaces.Tuple([deepest])
    data: dict = {"type": "Discrete", "n": 2}
    for _ in range(spaces.MAX_DEPTH + 1):
        data = {"type": "Tuple", "spaces": [data]}
    where = "space dict" + "['spaces'][0]" * spaces.MAX_DEPTH
    with raises_exactly(
        SpecError,
        f"{where} must nest at most 256 Dict/Tuple levels, got a Dict/Tuple at level 257. Pass the output of Space.to_dict().",
    ):
        spaces.from_dict(data)


def test_a_cycle_made_after_construction_is_refused_not_looped():
    outer = spaces.Dict(a=spaces.Discrete(2))
    outer.spaces["a"] = outer  # nobody should, but == and to_dict must still end
    text = "Dict nesting must be at most 256 Dict/Tuple levels, got a deeper tree (changed after construction, or a cycle). Build spaces once and do not edit their .spaces."
    with raises_exactly(SpecError, text):
        outer.to_dict()
    with raises_exactly(SpecError, text):
        outer == outer  # noqa: B015, PLR0124


# -- from_dict and sample: bad input is a SpecError naming where --------------------------------
FIX = "Pass the output of Space.to_dict()."


@pytest.mark.parametrize(
    "data, text",
    [
        ({"type": "Box"}, f"space dict['shape'] must be a list of non-negative ints, got nothing. {FIX}"),
        (
            "Box",
            f"space dict['type'] must be one of ['Box', 'Dict', 'Discrete', 'Image', 'MultiBinary', 'MultiDiscrete', 'Tuple'], got 'Box'. {FIX}",
        ),
        (
            {"type": ["Box"]},
            f"space dict['type'] must be one of ['Box', 'Dict', 'Discrete', 'Image', 'MultiBinary', 'MultiDiscrete', 'Tuple'], got ['Box']. {FIX}",
        ),
        (
            {"type": "Box", "shape": [2], "dtype": "float32", "low": [0.0], "high": 1.0},
            f"space dict['low'] must be a number, 'inf', '-inf' or a list of 2 of them, got [0.0]. {FIX}",
        ),
        (
            {"type": "Box", "shape": [2], "dtype": 7, "low": 0, "high": 1},
            f"space dict['dtype'] must be a numpy dtype name such as 'float32', got 7. {FIX}",
        ),
        (
            {"type": "Box", "shape": [2], "dtype": "object", "low": 0, "high": 1},
            "Box dtype must be a float or integer dtype, got object. Pass e.g. np.float32.",
        ),
        (
            {"type": "Box", "shape": [100_000, 100_000], "dtype": "float64", "low": 0, "high": 1},
            "space dict must allocate at most 67108864 bytes of bounds in one tree, got 160000000000 more bytes. Use a smaller space.",
        ),
        ({"type": "Discrete", "n": "3"}, f"space dict['n'] must be an int >= 1, got '3'. {FIX}"),
        (
            {"type": "Discrete", "n": 0},
            "Discrete n must be an integer >= 1, got 0. Pass a plain int, e.g. Discrete(n=1).",
        ),
        (
            {"type": "MultiDiscrete", "nvec": [[1, 2], [3]], "start": [[0, 0], [0]]},
            "MultiDiscrete nvec must be a non-empty integer array with every entry >= 1, got array([list([1, 2]), list([3])], dtype=object). Pass e.g. MultiDiscrete([3, 4]).",
        ),
        ({"type": "MultiBinary", "n": []}, f"space dict['n'] must be a non-empty list of ints >= 1, got []. {FIX}"),
        ({"type": "Image", "height": 2, "width": 2}, f"space dict['channels'] must be an int >= 1, got nothing. {FIX}"),
        (
            {"type": "Tuple", "spaces": {"a": 1}},
            f"space dict['spaces'] must be a list of space dicts, got {{'a': 1}}. {FIX}",
        ),
        (
            {"type": "Dict", "spaces": [["a", {"type": "Discrete", "n": 2}], ["a", {"type": "Discrete", "n": 3}]]},
            f"space dict['spaces'] must be a list of [key, space dict] pairs with distinct keys, got [['a', {{'type': 'Discrete', 'n': 2}}], ['a', {{'type': 'Discrete', 'n': 3}}]]. {FIX}",
        ),
        (
            {"type": "Tuple", "spaces": [{"type": "Discrete", "n": 2}, {"type": "Box", "shape": "2"}]},
            f"space dict['spaces'][1]['shape'] must be a list of non-negative ints, got '2'. {FIX}",
        ),
        (
            {
                "type": "Dict",
                "spaces": [["pos", {"type": "Box", "shape": [1], "dtype": "float32", "low": -1e40, "high": 0}]],
            },
            "Box low must be an infinity or a finite value float32 can hold (magnitude at most 3.4028234663852886e+38), got -1e+40. Use np.inf/-np.inf for an unbounded side, or np.finfo(np.float32).max/.min.",
        ),
    ],
)
def test_from_dict_refuses_bad_input_with_a_spec_error(data, text):
    with raises_exactly(SpecError, text):
        spaces.from_dict(data)


def _deep(levels, inner):
    value = 1
    for _ in range(levels):
        value = inner(value)
    return value


@pytest.mark.parametrize(
    "data, text",
    [
        (
            {"type": "Discrete", "n": _deep(1020, lambda v: {"a": v}), "start": 0},
            f"space dict['n'] must be an int >= 1, got {{'a': {{'a': {{'a': {{'a': {{'a': {{'a': {{'a': {{'a': {{'a': {{'a': ... (nested 1020 levels). {FIX}",
        ),
        (
            {"type": "Box", "low": _deep(1020, lambda v: [v]), "high": 1, "shape": [1], "dtype": "float32"},
            f"space dict['low'] must be a number, 'inf', '-inf' or a list of 1 of them, got {'[' * 60}... (nested 1020 levels). {FIX}",
        ),
        (
            {"type": "Tuple", "spaces": [_deep(1020, lambda v: [v])]},
            f"space dict['spaces'][0]['type'] must be one of ['Box', 'Dict', 'Discrete', 'Image', 'MultiBinary', 'MultiDiscrete', 'Tuple'], got {'[' * 60}... (nested 1020 levels). {FIX}",
        ),
    ],
    ids=["dict-1020-deep", "list-1020-deep", "child-1020-deep"],
)
def test_from_dict_names_a_value_too_deep_for_repr_without_recursion(data, text):
    # a manifest may nest up to Limits.max_json_depth (1,024); repr recursed once a level (RecursionError)
    with raises_exactly(SpecError, text):
        spaces.from_dict(data)


@pytest.mark.parametrize(
    "space, owner",
    [
        (spaces.Discrete(3), "Discrete"),
        (spaces.Box(0, 1, (2,)), "Box"),
        (spaces.MultiDiscrete([2, 3]), "MultiDiscrete"),
        (spaces.MultiBinary(3), "MultiBinary"),
        (spaces.Dict(a=spaces.Discrete(2)), "Dict"),
        (spaces.Tuple([spaces.Discrete(2)]), "Tuple"),
    ],
)
def test_sample_refuses_a_random_state(space, owner):
    with raises_exactly(
        SpecError,
        f"{owner}.sample rng must be a numpy Generator or None, got RandomState. Pass np.random.default_rng(seed), or env.np_random (RandomState draws other numbers).",
    ):
        space.sample(np.random.RandomState(0))


# -- bounds the dtype cannot hold: rounded inward (announced past the dtype's precision) or refused --
ROUNDED = [  # (low, high, dtype, low built, high built, announced)
    (
        1e-8,
        1.0,
        np.float16,
        2.0**-24,
        1.0,
        "Box low[0] 1e-08 is not a float16 value; rounded inward to 5.960464477539063e-08 (never widened). Pass a bound float16 can hold to silence this.",
    ),
    (
        1e-50,
        1.0,
        np.float32,
        2.0**-149,
        1.0,
        "Box low[0] 1e-50 is not a float32 value; rounded inward to 1.401298464324817e-45 (never widened). Pass a bound float32 can hold to silence this.",
    ),
    (
        -1.0,
        -1e-50,
        np.float32,
        -1.0,
        -(2.0**-149),
        "Box high[0] -1e-50 is not a float32 value; rounded inward to -1.401298464324817e-45 (never widened). Pass a bound float32 can hold to silence this.",
    ),
    (  # float32's nearest (1.0) is inward, but the box narrower than float32 resolves there became one point
        0.99999999,
        1.0,
        np.float32,
        1.0,
        1.0,
        "Box low[0] 0.99999999 is not a float32 value; rounded inward to 1.0 (never widened). Pass a bound float32 can hold to silence this.",
    ),
    (  # the same in float16
        0.9999,
        1.0,
        np.float16,
        1.0,
        1.0,
        "Box low[0] 0.9999 is not a float16 value; rounded inward to 1.0 (never widened). Pass a bound float16 can hold to silence this.",
    ),
    (
        1.0,
        1.00000001,
        np.float32,
        1.0,
        1.0,
        "Box high[0] 1.00000001 is not a float32 value; rounded inward to 1.0 (never widened). Pass a bound float32 can hold to silence this.",
    ),
    (-0.1, 0.1, np.float32, -0.099999994, 0.099999994, None),  # nearest would widen both: one step inward
    (0.1, 0.2, np.float16, 0.10003662109375, 0.199951171875, None),
    (-60000.0, 0.5, np.float16, -60000.0, 0.5, None),  # exact
    (-np.inf, np.inf, np.float32, -np.inf, np.inf, None),
]
REFUSED = [
    (1.0000000001, 1.0, np.float32, "Box low[0] must be <= high[0] (1.0), got 1.0000000001. Swap or fix the bounds."),
    (
        0.3,
        0.3,
        np.float32,
        "Box low[0] must leave a float32 value <= high[0] (0.3) (rounded inward they are 0.30000001192092896 > 0.29999998211860657), got 0.3. Widen the bounds, or use a wider float dtype.",
    ),
    (
        1e-8,
        2e-8,
        np.float16,
        "Box low[0] must leave a float16 value <= high[0] (2e-08) (rounded inward they are 5.960464477539063e-08 > 0.0), got 1e-08. Widen the bounds, or use a wider float dtype.",
    ),
    (
        1.00000000001,
        1.0000000000099,
        np.float64,
        "Box low[0] must be <= high[0] (1.0000000000099), got 1.00000000001. Swap or fix the bounds.",
    ),
]


@pytest.mark.parametrize("low, high, dtype, built_low, built_high, announced", ROUNDED)
def test_a_float_bound_is_never_widened_and_a_large_move_is_announced(
    low, high, dtype, built_low, built_high, announced
):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        box = spaces.Box(low, high, (1,), dtype)
    assert [str(w.message) for w in caught] == ([announced] if announced else [])
    assert (box.low[0], box.high[0]) == (dtype(built_low), dtype(built_high))
    assert float(box.low[0]) >= low and float(box.high[0]) <= high
    assert not box.contains(np.zeros(1, dtype)) or low <= 0.0 <= high


@pytest.mark.parametrize("low, high, dtype, text", REFUSED)
def test_a_float_box_with_no_value_between_its_bounds_is_refused(low, high, dtype, text):
    with raises_exactly(SpecError, text):
        spaces.Box(low, high, (1,), dtype)


# -- a space too large to allocate is refused, naming its size, before anything is allocated --------
FIT = "Use a smaller shape; keep bulk data that is not an observation out of the space."
_TOO_LARGE = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, resource.getrlimit(resource.RLIMIT_AS)[1]))
from bridge import spaces
out = []
for build in (lambda: spaces.Image(100000, 100000, 3), lambda: spaces.Box(0, 1, (2**31,)),
              lambda: spaces.Box(0, 1, (10**12,)), lambda: spaces.Box(0, 255, (2**25,), "uint8")):
    try:
        build()
        out.append("built")
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
print(json.dumps(out))
"""


def test_a_space_too_large_for_the_address_space_limit_is_refused_naming_its_size():
    import os
    import subprocess
    import sys

    pytest.importorskip("resource")  # POSIX: the limit is set in the child
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _TOO_LARGE], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    limit = "at most 2.0 GiB: this process's address-space limit, RLIMIT_AS"
    assert json.loads(done.stdout) == [
        f"SpecError: Image shape must fit in memory ({limit}), got (100000, 100000, 3), 30,000,000,000 uint8 "
        f"values (building its bounds takes about 111.8 GiB). {FIT}",
        f"SpecError: Box shape must fit in memory ({limit}), got (2147483648,), 2,147,483,648 float32 values "
        f"(building its bounds takes about 84.0 GiB). {FIT}",
        f"SpecError: Box shape must fit in memory ({limit}), got (1000000000000,), 1,000,000,000,000 float32 "
        f"values (building its bounds takes about 39,115.5 GiB). {FIT}",
        "built",  # 128 MiB of uint8 bounds and masks fit under 2 GiB
    ]


def test_a_space_larger_than_this_machine_is_refused_without_a_limit():
    from bridge.spaces._memory import memory_limit

    limit, source = memory_limit()
    if limit is None:
        pytest.skip("this platform reports no memory size")
    with raises_exactly(
        SpecError,
        f"Box shape must fit in memory (at most {limit / 2**30:,.1f} GiB: {source}), got (1000000000000,), "
        f"1,000,000,000,000 float32 values (building its bounds takes about 39,115.5 GiB). {FIT}",
    ):
        spaces.Box(0, 1, (10**12,))


# -- composites sum their children into one check; MultiBinary and MultiDiscrete check their shape ---
_TOGETHER = """
import json, resource
import numpy as np
resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, resource.getrlimit(resource.RLIMIT_AS)[1]))
from bridge import spaces
box = lambda: spaces.Box(0, 1, (2**22,))  # each fits: building its bounds takes about 168 MiB
out = []
for build in (lambda: spaces.Tuple([box() for _ in range(13)]),
              lambda: spaces.Dict(a=box(), b=spaces.Tuple([box() for _ in range(12)])),
              lambda: spaces.Dict(a=box(), b=box()), lambda: spaces.MultiBinary(10**12),
              lambda: spaces.MultiBinary([10**5, 10**6]), lambda: spaces.MultiDiscrete(np.full(2**26, 2, np.int8)),
              lambda: spaces.MultiBinary(2**20).sample(np.random.default_rng(0)).shape):
    try:
        built = build()  # a space, or the shape of a drawn value
        out.append(repr(built) if isinstance(built, tuple) else type(built).__name__)
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
print(json.dumps(out))
"""


def test_spaces_too_large_together_or_as_multi_binary_are_refused_naming_their_size():
    import os
    import subprocess
    import sys

    pytest.importorskip("resource")  # POSIX: the limit is set in the child
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _TOGETHER], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    limit = "at most 2.0 GiB: this process's address-space limit, RLIMIT_AS"
    fewer = "Use fewer or smaller spaces; keep bulk data that is not an observation out of the space."
    assert json.loads(done.stdout) == [
        f"SpecError: Tuple spaces must fit in memory together ({limit}), got 13 spaces taking about 2.1 GiB "
        f"(their bounds, values and checks). {fewer}",
        f"SpecError: Dict spaces must fit in memory together ({limit}), got 2 spaces taking about 2.1 GiB "
        f"(their bounds, values and checks). {fewer}",
        "Dict",  # 2 x 168 MiB fit under 2 GiB
        f"SpecError: MultiBinary shape must fit in memory ({limit}), got (1000000000000,), 1,000,000,000,000 int8 "
        f"values (a value and its checks take about 11,175.9 GiB). {FIT}",
        f"SpecError: MultiBinary shape must fit in memory ({limit}), got (100000, 1000000), 100,000,000,000 int8 "
        f"values (a value and its checks take about 1,117.6 GiB). {FIT}",
        f"SpecError: MultiDiscrete shape must fit in memory ({limit}), got (67108864,), 67,108,864 int64 values "
        f"(its arrays, a value and its checks take about 2.7 GiB). {FIT}",
        "(1048576,)",  # 1 MiB of 0s and 1s is built and drawn
    ]

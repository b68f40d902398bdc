"""Fuzzed space constructors at the limits of their dtypes (core only: no adapter is imported).

For every generated argument set, the constructor EITHER builds exactly the space written (bounds
equal to the user's numbers, as Python ints / floats compare them), whose samples it contains,
whose corners it contains and whose neighbours past the corners it refuses, and which round-trips
exactly through ``to_dict`` -> JSON -> ``from_dict``; OR it refuses with a SpecError whose whole
message an oracle here predicts (bound, element, value, dtype). Numbers are drawn around every
dtype's edges: its min and max, one past them, 2**63 and 2**64 and their neighbours, floats such
as ``float(2**64)`` and 1e40. ``from_dict`` is also fed arbitrary JSON-like data and must return a
space or raise a SpecError, nothing else (and mutated ``to_dict()`` output likewise). Example counts: the hypothesis profile
(tests/reliability/conftest.py; ``HYPOTHESIS_PROFILE=fuzz`` runs 10,000 per test).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from core.strategies import space_trees
from hypothesis import event, given
from hypothesis import strategies as st
from support import raises_exactly

from bridge import spaces
from bridge.errors import SpecError

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
SEEDS = st.integers(0, 2**32 - 1)


def edges(dtype) -> st.SearchStrategy:
    """Python ints at and around a dtype's limits, int64's and uint64's, and small ones."""
    info = np.iinfo(dtype)
    points = {int(info.min), int(info.max), 0, I64_MIN, I64_MAX, 2**63, 2**64 - 1, 2**64, -1}
    near = [p + d for p in points for d in (-2, -1, 0, 1, 2)]
    return st.one_of(
        st.sampled_from(sorted(near)), st.integers(int(info.min), int(info.max)), st.integers(-(2**70), 2**70)
    )


def int_bound(dtype) -> st.SearchStrategy:
    """What a user may write for an integer Box bound: ints, floats (whole or not), numpy scalars."""
    return st.one_of(
        edges(dtype),
        edges(dtype).map(float),
        st.sampled_from([0.5, -1.5, float(2**63), float(2**64), 1e40, -1e40]),
        st.one_of(
            st.sampled_from([I64_MIN, I64_MIN + 1, -1, 0, I64_MAX - 1, I64_MAX]), st.integers(I64_MIN, I64_MAX)
        ).map(np.int64),
    )


def _python(value):
    return value.item() if isinstance(value, np.generic) else value


def int_oracle(name, value, dtype):
    """The message of the first problem with one integer bound, or None when it fits."""
    info, v = np.iinfo(dtype), _python(value)
    subject = f"Box {name}"
    if isinstance(v, float) and not (info.min <= v <= info.max):
        pass
    elif isinstance(v, float) and not v.is_integer():
        return f"{subject} must be a whole number for dtype {np.dtype(dtype).name}, got {v!r}. Round it, or use a float dtype."
    elif info.min <= v <= info.max:
        return None
    return (
        f"{subject} must be finite and within [{info.min}, {info.max}] for dtype {np.dtype(dtype).name}, got {v!r}. "
        f"Use np.iinfo(np.{np.dtype(dtype).name}).min/.max for an unbounded integer Box."
    )


@given(dtype=st.sampled_from(INT_DTYPES), data=st.data(), seed=SEEDS)
def test_integer_box_bounds_are_exact_or_refused_by_the_oracle(dtype, data, seed):
    low, high = data.draw(int_bound(dtype), "low"), data.draw(int_bound(dtype), "high")
    expected = int_oracle("low", low, dtype) or int_oracle("high", high, dtype)
    lo, hi = _python(low), _python(high)
    if expected is None:
        lo, hi = int(lo), int(hi)  # whole and in range: exactly these integers
    if expected is None and lo > hi:
        expected = f"Box low[0] must be <= high[0] ({hi}), got {lo}. Swap or fix the bounds."
    if expected is not None:
        event("refused")
        with raises_exactly(SpecError, expected):
            spaces.Box(low, high, (2,), dtype)
        return
    event("built")
    box = spaces.Box(low, high, (2,), dtype)
    assert int(box.low[0]) == lo and int(box.high[1]) == hi  # exact: no float round trip
    value = box.sample(np.random.default_rng(seed))
    assert box.contains(value) and value.dtype == np.dtype(dtype)
    assert box.contains(np.array([lo, hi], dtype)) and box.contains(np.array([hi, lo], dtype))
    info = np.iinfo(dtype)
    if lo > info.min:
        assert not box.contains(np.array([lo - 1, lo], dtype))
    if hi < info.max:
        assert not box.contains(np.array([hi, hi + 1], dtype))
    assert spaces.from_dict(json.loads(json.dumps(box.to_dict()))) == box


def float_values() -> st.SearchStrategy:
    specials = [
        0.0,
        -0.0,
        1e40,
        -1e40,
        65504.0,
        65520.0,
        1e300,
        -1e308,
        float(np.finfo(np.float32).max),
        3.4028235677973366e38,  # just past float32's rounding threshold
        math.inf,
        -math.inf,
        math.nan,
        2**64,
        10**400,
    ]
    return st.one_of(st.sampled_from(specials), st.floats(allow_nan=False, width=64), st.integers(-(2**70), 2**70))


def float_oracle(name, value, dtype):
    dtype = np.dtype(dtype)
    subject = f"Box {name}"
    if isinstance(value, float) and value != value:
        return f"{subject} must not contain NaN, got nan. Use -np.inf/np.inf."
    if isinstance(value, float) and math.isinf(value):
        if value == (math.inf if name == "low" else -math.inf):
            side = "-np.inf" if name == "low" else "np.inf"
            return f"{subject} must be finite or {side}, got {value!r}. Use {side} for an unbounded side."
        return None
    try:
        wide = float(value)
    except OverflowError:
        wide = math.inf
    with np.errstate(over="ignore"):
        fits = math.isfinite(wide) and math.isfinite(float(dtype.type(wide)))
    if fits:
        return None
    return (
        f"{subject} must be an infinity or a finite value {dtype.name} can hold (magnitude at most "
        f"{float(np.finfo(dtype).max)!r}), got {value!r}. Use np.inf/-np.inf for an unbounded side, or "
        f"np.finfo(np.{dtype.name}).max/.min."
    )


def inward(name, value, dtype):
    """The oracle's rounding of a bound: numpy's nearest, then one step inward if that widened it."""
    written = float(value)
    with np.errstate(over="ignore"):
        near = np.dtype(dtype).type(written)
    if (float(near) < written) if name == "low" else (float(near) > written):  # float64, not NEP 50 float16
        near = np.nextafter(near, np.dtype(dtype).type(math.inf if name == "low" else -math.inf))
    return written, near


@given(dtype=st.sampled_from(FLOAT_DTYPES), low=float_values(), high=float_values(), seed=SEEDS)
def test_float_box_bounds_round_inward_or_are_refused_by_the_oracle(dtype, low, high, seed):
    expected = float_oracle("low", low, dtype) or float_oracle("high", high, dtype)
    if expected is None:
        (wlo, lo), (whi, hi) = inward("low", low, dtype), inward("high", high, dtype)
        if wlo > whi:  # as written, before any rounding (1.0000000001 > 1.0 although float32 says equal)
            expected = f"Box low[0] must be <= high[0] ({whi!r}), got {wlo!r}. Swap or fix the bounds."
        elif lo > hi:
            expected = (
                f"Box low[0] must leave a {np.dtype(dtype).name} value <= high[0] ({whi!r}) (rounded inward they "
                f"are {lo.item()!r} > {hi.item()!r}), got {wlo!r}. Widen the bounds, or use a wider float dtype."
            )
    if expected is not None:
        event("refused")
        with raises_exactly(SpecError, expected):
            spaces.Box(low, high, (2,), dtype)
        return
    event("built")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        box = spaces.Box(low, high, (2,), dtype)
    assert box.low[0].tobytes() == lo.tobytes() and box.high[0].tobytes() == hi.tobytes()  # inward rounding
    assert float(box.low[0]) >= wlo and float(box.high[0]) <= whi  # never widened
    eps, width = float(np.finfo(dtype).eps), whi - wlo
    moved = [abs(float(b) - w) > eps * min(abs(w), width) for b, w in ((lo, wlo), (hi, whi)) if math.isfinite(w)]
    # a move beyond the dtype's precision of the bound, or of the box's width, is announced, only that
    assert len(caught) == sum(moved)
    assert box.is_bounded("both") == (math.isfinite(lo) and math.isfinite(hi))
    value = box.sample(np.random.default_rng(seed))
    assert box.contains(value) and np.isfinite(value).all()
    assert spaces.from_dict(json.loads(json.dumps(box.to_dict(), allow_nan=False))) == box


def discrete_oracle(n, start):
    if not n >= 1:
        return f"Discrete n must be an integer >= 1, got {n}. Pass a plain int, e.g. Discrete(n=1)."
    if n > I64_MAX:
        return f"Discrete n must be at most {I64_MAX} (int64), got {n}. Use a Box of dtype int64 for wider ranges."
    if not I64_MIN <= start <= I64_MAX:
        return (
            f"Discrete start must be within [{I64_MIN}, {I64_MAX}] (int64), got {start}. Pass a start that fits int64."
        )
    if start + n - 1 > I64_MAX:
        return f"Discrete start + n - 1 must be at most {I64_MAX} (int64), got {start + n - 1}. Lower start or n: Discrete values are int64."
    return None


COUNTS = st.one_of(st.sampled_from([1, 2, 3, 2**31, 2**32, 2**62, I64_MAX, 2**63, 2**64]), st.integers(-2, 2**65))
STARTS = st.one_of(
    st.sampled_from([0, -1, I64_MIN, I64_MIN - 1, I64_MAX, I64_MAX - 2, 2**63, 2**62]), st.integers(-(2**64), 2**64)
)


@given(n=COUNTS, start=STARTS, seed=SEEDS)
def test_discrete_is_exact_at_int64_s_edges_or_refused_by_the_oracle(n, start, seed):
    expected = discrete_oracle(n, start)
    if expected is not None:
        event("refused")
        with raises_exactly(SpecError, expected):
            spaces.Discrete(n, start)
        return
    event("built")
    space = spaces.Discrete(n, start)
    value = space.sample(np.random.default_rng(seed))
    assert type(value) is np.int64 and start <= int(value) <= start + n - 1
    assert space.contains(start) and space.contains(start + n - 1) and space.contains(np.int64(start))
    assert not space.contains(start + n) and not space.contains(start - 1)
    assert spaces.from_dict(json.loads(json.dumps(space.to_dict()))) == space


def md_oracle(nvec, start):
    for i, n in enumerate(nvec):
        if n < 1:
            return f"MultiDiscrete nvec must be a non-empty integer array with every entry >= 1, got {nvec!r}. Pass e.g. MultiDiscrete([3, 4])."
        if n > I64_MAX:
            return f"MultiDiscrete nvec[{i}] must be at most {I64_MAX} (int64), got {n}. Use smaller entries: MultiDiscrete values are int64."
    for i, s in enumerate(start):
        if not I64_MIN <= s <= I64_MAX:
            return f"MultiDiscrete start[{i}] must be within [{I64_MIN}, {I64_MAX}] (int64), got {s}. Pass starts that fit int64."
    for i, (n, s) in enumerate(zip(nvec, start)):
        if s + n - 1 > I64_MAX:
            return f"MultiDiscrete start[{i}] + nvec[{i}] - 1 must be at most {I64_MAX} (int64), got {s + n - 1}. Lower start or nvec: MultiDiscrete values are int64."
    return None


@given(pairs=st.lists(st.tuples(COUNTS, STARTS), min_size=1, max_size=4), as_uint=st.booleans(), seed=SEEDS)
def test_multidiscrete_is_exact_at_int64_s_edges_or_refused_by_the_oracle(pairs, as_uint, seed):
    nvec, start = [n for n, _ in pairs], [s for _, s in pairs]
    given_nvec = nvec
    if as_uint and all(0 <= n <= 2**64 - 1 for n in nvec):  # an uint64 array, as in the issue
        given_nvec = np.array(nvec, np.uint64)
    expected = md_oracle(nvec, start)
    if expected is not None and isinstance(given_nvec, np.ndarray):
        expected = expected.replace(f"got {nvec!r}.", f"got {given_nvec!r}.")
    if expected is not None:
        event("refused")
        with raises_exactly(SpecError, expected):
            spaces.MultiDiscrete(given_nvec, start)
        return
    event("built")
    space = spaces.MultiDiscrete(given_nvec, start)
    for _ in range(3):
        assert space.contains(space.sample(np.random.default_rng(seed)))
    first = np.array(start, np.int64)
    last = np.array([s + n - 1 for n, s in zip(nvec, start)], np.int64)
    assert space.contains(first) and space.contains(last)
    for i, top in enumerate(last.tolist()):
        if top < I64_MAX:
            past = last.copy()
            past[i] = top + 1
            assert not space.contains(past)
    assert spaces.from_dict(json.loads(json.dumps(space.to_dict()))) == space


@given(depth=st.integers(0, 300), kind=st.sampled_from(["Tuple", "Dict"]))
def test_nesting_up_to_the_limit_compares_and_serializes_and_past_it_is_refused(depth, kind):
    def build(leaf):
        space = leaf
        for i in range(depth):
            space = spaces.Tuple([space]) if kind == "Tuple" else spaces.Dict({f"k{i}": space})
        return space

    if depth > spaces.MAX_DEPTH:
        event("refused")
        with raises_exactly(
            SpecError,
            f"{kind} nesting must be at most 256 Dict/Tuple levels, got 257 levels. Flatten the space: nest fewer Dict/Tuple levels.",
        ):
            build(spaces.Discrete(2))
        return
    event("built")
    a = build(spaces.Discrete(2))
    assert a == build(spaces.Discrete(2)) and a != build(spaces.Discrete(3))
    assert spaces.from_dict(json.loads(json.dumps(a.to_dict()))) == a


JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=6)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
SPACE_KEYS = ["type", "n", "start", "nvec", "shape", "dtype", "low", "high", "spaces", "height", "width", "channels"]
TYPES = ["Box", "Discrete", "MultiDiscrete", "MultiBinary", "Image", "Dict", "Tuple"]


@st.composite
def space_dicts(draw):
    """Dicts that look like space dicts: a known type and space keys with arbitrary values."""
    data = {"type": draw(st.sampled_from(TYPES + ["Nope"]))}
    for key in draw(st.lists(st.sampled_from(SPACE_KEYS[1:]), unique=True)):
        data[key] = draw(
            st.one_of(
                JSONISH,
                st.sampled_from([[2], [2, 3], "float32", "uint64", "inf", 3, 0, -1, 2**64, []]),
                st.lists(st.sampled_from(["inf", "-inf", 0, 1.5, 2**63]), max_size=4),
            )
        )
    return data


@st.composite
def mutated_space_dicts(draw):
    """``to_dict()`` of a generated tree with one value somewhere replaced, or none."""
    data = draw(space_trees).to_dict()
    nodes = [data]
    for node in nodes:  # every dict and list inside, breadth first
        children = node.values() if isinstance(node, dict) else node
        nodes.extend(c for c in children if isinstance(c, (dict, list)))
    target = draw(st.sampled_from(nodes))
    if target and draw(st.booleans()):
        key = draw(st.sampled_from(list(target) if isinstance(target, dict) else range(len(target))))
        target[key] = draw(
            st.one_of(JSONISH, st.sampled_from([2**63, 2**64, -1, 1e40, "inf", "nan", "uint64", [], {}]))
        )
    return data


@given(data=st.one_of(space_dicts(), JSONISH, mutated_space_dicts()))
def test_from_dict_returns_a_space_or_raises_a_spec_error(data):
    try:
        space = spaces.from_dict(data)
    except SpecError as e:
        event("refused")
        text = str(e)
        assert " must " in text and ", got " in text and text.endswith(".") and not text.endswith("..")
        # the statement's own period and the fix: never a double period where they meet
        junction = max(i for i in range(len(text) - 2) if text[i : i + 2] == ". " and text[i + 2].isupper())
        assert text[junction - 1] != ".", text
        return
    event("built")
    assert spaces.from_dict(space.to_dict()) == space


@pytest.mark.parametrize(
    "rng", [np.random.RandomState(0), 0, "seed", np.random.PCG64(0)], ids=["RandomState", "int", "str", "BitGenerator"]
)
def test_sample_refuses_anything_but_a_generator(rng):
    with raises_exactly(
        SpecError,
        f"Box.sample rng must be a numpy Generator or None, got {type(rng).__name__}. Pass np.random.default_rng(seed), or env.np_random (RandomState draws other numbers).",
    ):
        spaces.Box(0, 1, (2,)).sample(rng)

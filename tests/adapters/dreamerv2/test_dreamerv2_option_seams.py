"""DreamerV2 options honoured or refused, sizes bounded before allocation (issue 35, item 12):
``timeout`` was accepted with parallel None or "thread" and ignored (a step took 2 s past 0.2);
``size=(20000, 20000)`` was a MemoryError and ``(10**9, 10**9)`` a raw PIL ValueError;
``action_bounds=(-1e300, 1e300)`` became float32 infinities, which NormalizeAction passes through
unscaled. Whole messages; a refusal builds nothing."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require
from toy_envs.scripted import ActionRecorder

require("gym")
require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import to_dreamerv2  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.errors import ConversionError, SpecError  # noqa: E402
from bridge.examples import GridWorld, PointMass  # noqa: E402


class Unbounded(bridge.Env):
    """A float32 Box action with infinite bounds (needs action_bounds for DreamerV2)."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Box(-np.inf, np.inf, (2,), np.float32)
    built = 0

    def __init__(self):
        Unbounded.built += 1

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, False, {}


class Huge(Unbounded):
    action_space = spaces.Box(-1e300, 1e300, (2,), np.float64)


TIMEOUT = (
    "to_dreamerv2 timeout must go with parallel='process' (the only watched worker), got timeout={} with "
    "parallel={}. Pass parallel='process' to bound each call, or drop timeout."
)
SIZE = (
    "to_dreamerv2 size must be at most 4096 pixels a side (an image of that size is allocated), got {}. "
    "Pass e.g. (64, 64), the size DreamerV2's world model is built for."
)
RANGE = (
    "{} must have a range float32 holds (DreamerV2's NormalizeAction scales in float32: high - low at most "
    "3.4028234663852886e+38), got [{}]. Pass action_bounds=(low, high) with the finite range the policy should cover."
)
REFUSED = [
    ("timeout-none", GridWorld, {"timeout": 0.2}, SpecError, TIMEOUT.format(0.2, None)),
    ("timeout-thread", GridWorld, {"timeout": 0.2, "parallel": "thread"}, SpecError, TIMEOUT.format(0.2, "'thread'")),
    ("timeout-large", GridWorld, {"timeout": 600}, SpecError, TIMEOUT.format(600, None)),
    ("size-20000", PointMass, {"size": (20000, 20000)}, SpecError, SIZE.format((20000, 20000))),
    ("size-1e9", PointMass, {"size": (10**9, 10**9)}, SpecError, SIZE.format((10**9, 10**9))),
    ("size-one-side", PointMass, {"size": [64, 4097]}, SpecError, SIZE.format([64, 4097])),
    (
        "size-floats",
        PointMass,
        {"size": (1e9, 1e9)},
        SpecError,
        "to_dreamerv2 size must be (height, width), two ints >= 1, got (1000000000.0, 1000000000.0). Pass e.g. (64, 64).",
    ),
    (
        "bounds-1e300",
        Unbounded,
        {"action_bounds": (-1e300, 1e300)},
        SpecError,
        RANGE.format("action_bounds[0]", "-1e+300, 1e+300"),
    ),
    (
        "bounds-span",
        Unbounded,
        {"action_bounds": (-3e38, 3e38)},
        SpecError,
        RANGE.format("action_bounds[0]", "-3e+38, 3e+38"),
    ),
    ("declared-1e300", Huge, {}, ConversionError, RANGE.format("action[0]", "-1e+300, 1e+300")),
]


@pytest.mark.parametrize("make, options, kind, text", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_an_option_that_would_be_ignored_or_blow_up_is_refused_first(make, options, kind, text):
    with raises_exactly(kind, text):
        to_dreamerv2(make(), **options)


@pytest.mark.parametrize(
    "make, options",
    [
        (GridWorld, {"timeout": None}),  # no limit: what happens in-process anyway
        (GridWorld, {"timeout": 60.0}),  # the default
        (PointMass, {"size": (4096, 64)}),
        (Unbounded, {"action_bounds": (-1e38, 1e38)}),
    ],
    ids=["timeout-none", "timeout-default", "size-at-the-bound", "bounds-in-float32"],
)
def test_options_that_are_honoured_build(make, options):
    chain = to_dreamerv2(make(), **options)
    try:
        chain.reset()
    finally:
        chain.close()


def test_wide_bounds_in_float32_are_scaled_not_passed_through():
    recorder = ActionRecorder(-np.inf, np.inf)
    chain = to_dreamerv2(recorder, action_bounds=(-1e38, 1e38))
    try:
        chain.reset()
        for a in (-1.0, 0.5, 1.0):
            chain.step({"action": np.array([a], np.float32)})
    finally:
        chain.close()
    got = [float(x[0]) for x in recorder.actions]
    assert got == pytest.approx([-1e38, 0.5e38, 1e38], rel=1e-6)  # scaled: never -1.0, 0.5, 1.0 unscaled

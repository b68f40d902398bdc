"""Family 9 (issue 28): a value valid for the runtime reaches the env as that value, or is refused.

DreamerV2's NormalizeAction maps [-1, 1] onto [low, high] in float32; the Dreamer-ready env moves
only a value past a bound (that rounding's overshoot) onto the bound, never a value inside (it
used to snap everything within ~1e-6 of +-1: -0.999999 on Box(0, 1000) became 0, not 5e-4). A
float64 action for gym 0.23's float32 Box with infinite bounds is refused when the cast would make
it inf (1e300 reached the env as inf).
"""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require
from toy_envs.scripted import ActionRecorder

require("gym")
require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import to_dreamerv2  # noqa: E402
from bridge.adapters.gym import to_gym  # noqa: E402

from bridge.errors import ContractError  # noqa: E402

NEAR_BOUNDS = [-1.0, -0.999999, -0.9999, -0.99, 0.0, 0.5, 0.99, 0.9999, 0.999999, 1.0, 1.0000001, -1.0000001]


@pytest.mark.parametrize("box", [(0.0, 1000.0), (-1.0, 1.0), (-1e-6, 1e-6), (100.0, 100.5)])
def test_the_chain_passes_policy_actions_near_the_bounds_without_snapping(box):
    low, high = box
    recorder = ActionRecorder(low, high)
    chain = to_dreamerv2(recorder)
    chain.reset()
    for a in NEAR_BOUNDS:
        chain.step({"action": np.array([a], np.float32)})
    got = np.array([float(x[0]) for x in recorder.actions])
    # what NormalizeAction computes in float32, clipped onto the bounds only past them
    sent = np.array(NEAR_BOUNDS, np.float32)
    mapped = ((sent + 1) / 2 * (np.float32(high) - np.float32(low)) + np.float32(low)).astype(np.float64)
    expected = np.clip(mapped, np.float32(low), np.float32(high))
    assert got.tolist() == pytest.approx(expected.tolist(), rel=1e-6, abs=0)
    inside = (mapped > np.float32(low)) & (mapped < np.float32(high))
    assert (got[inside] > np.float32(low)).all() and (got[inside] < np.float32(high)).all()  # never onto a bound


TOO_LARGE = [1e300, -1e300, 1e39, -3.5e38, 1.7976931348623157e308, 1e308, 4e38, -1e50, 3.402823467e38 * 2, 1e200]


@pytest.mark.parametrize("value", TOO_LARGE)
def test_a_float64_action_that_float32_cannot_hold_is_refused_not_made_inf(value):
    env = to_gym(ActionRecorder(-np.inf, np.inf))
    env.reset()
    with raises_exactly(
        ContractError,
        f"action[0] must be a finite float32 value (magnitude at most 3.4028234663852886e+38), got {value!r}. "
        "Scale it into float32's range.",
    ):
        env.step(np.array([value], np.float64))
    assert env.neutral.actions == []


# float64 values float32 holds exactly (the one rule of both eras: exact casts pass, rounding ones are refused)
HELD = [float(np.float32(3.4e38)), float(np.float32(-3.4e38)), 0.0, np.inf, -np.inf, float(np.float32(1e-45))]


@pytest.mark.parametrize("value", HELD)
def test_a_float64_action_float32_holds_passes(value):
    env = to_gym(ActionRecorder(-np.inf, np.inf))
    env.reset()
    env.step(np.array([value], np.float64))
    assert env.neutral.actions[-1].dtype == np.float32

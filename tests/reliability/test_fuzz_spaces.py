"""Fuzzed neutral space trees through every export of the running era: lossless or refuse.

For each generated tree, each export and each direction (observation, action): EITHER the export
refuses with a ConversionError in the house sentence naming a path inside the space, OR every value
(both corners and samples) is encoded into the target space (the target runtime's own ``contains``)
and decoded back bit-identical (type, dtype, shape, bytes). Actions are also drawn with the
runtime's own sampler and must decode into the neutral space. Example counts: the hypothesis
profile (tests/reliability/conftest.py; ``HYPOTHESIS_PROFILE=fuzz`` for 10,000 per test).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from fuzz_support import (
    ROLES,
    assert_identical,
    assert_refusal,
    check_values,
    depth,
    era_exports,
    kinds,
    tree_env,
    trees,
)
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from support import ERA, raises_exactly, require

import bridge
from bridge import spaces as ns
from bridge.errors import ConversionError
from bridge.registry import registry

if ERA in ("modern", "legacy"):
    RUN_ERA = ERA
elif importlib.util.find_spec("gymnasium"):
    RUN_ERA = "modern"
else:
    RUN_ERA = "legacy"
if RUN_ERA == "modern":
    gymnasium = require("gymnasium")
    require("stable_baselines3")
else:
    gym = require("gym")

EXPORTS = era_exports(RUN_ERA)
SEEDS = st.integers(0, 2**32 - 1)


def float64_box_action(space: ns.Space) -> bool:
    """A float64 Box as DreamerV2's agent would act on it (alone or as ``Dict(action=...)``)."""
    if isinstance(space, ns.Dict) and list(space.keys()) == ["action"]:
        space = space["action"]
    return type(space) is ns.Box and space.dtype == np.float64


def lower_or_refuse(name: str, space: ns.Space, role: str):
    """The export's lowering, or None after checking its refusal."""
    try:
        lowered = EXPORTS[name](space, role)
    except ConversionError as e:
        assert_refusal(e, role, space)
        event(f"{name} {role}: refused")
        return None
    event(f"{name} {role}: survived")
    return lowered


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(EXPORTS))
@given(space=trees(), seed=SEEDS)
def test_refuses_or_round_trips(name: str, role: str, space: ns.Space, seed: int) -> None:
    event(f"depth {depth(space)}")
    for kind in sorted(set(kinds(space))):
        event(f"leaf {kind}")
    # a known loss, pinned by test_dreamerv2_float64_box_action_is_float32 (xfail, strict) instead
    assume(not (name == "dreamerv2" and role == "action" and float64_box_action(space)))
    lowered = lower_or_refuse(name, space, role)
    if lowered is None:
        return
    check_values(lowered, space, seed)
    batch = getattr(lowered, "batch", None)
    if batch is not None:  # the vector path: the same values stacked on a leading axis
        values = [space.sample(np.random.default_rng(seed + i)) for i in range(3)]
        stacked = ns.stack(space, values)
        encode_batch, decode_batch = batch
        lowered.compare(decode_batch(encode_batch(stacked)), stacked)
    samples = getattr(lowered, "runtime_samples", None)
    if role == "action" and samples is not None:  # what the runtime's own sampler sends must be valid
        for target_value in samples(seed):
            neutral = lowered.decode(target_value)
            assert space.contains(neutral), f"{name}: runtime action {target_value!r} -> {neutral!r}, not in {space!r}"


# -- whole exports around a few generated trees: a refusal leaves nothing half-built ------------
def export_env(name: str, env):
    """Build the real export ``name`` around ``env`` (an instance, or a registered id)."""
    if name.startswith("gymnasium"):
        from bridge.adapters.gymnasium import to_gymnasium

        return to_gymnasium(env, image_layout=name.split("-")[1])
    if name.startswith("sb3"):
        from bridge.adapters.sb3 import to_sb3

        return to_sb3(env, float64_as_float32=name == "sb3")
    if name == "gym":
        from bridge.adapters.gym import to_gym

        return to_gym(env)
    if name == "dreamerv2":
        from bridge.adapters.dreamerv2 import to_dreamer_ready

        return to_dreamer_ready(env)
    from bridge.adapters.matlab import getActionInfo, getObservationInfo, rlFunctionEnv

    # the facade takes an env, not an id: what this helper builds, it closes on a refusal
    neutral = bridge.make(env) if isinstance(env, str) else env
    try:
        specs = getObservationInfo(neutral), getActionInfo(neutral)
        return rlFunctionEnv(*specs, lambda a, i: None, lambda: None, validate=False)
    except ConversionError:
        if neutral is not env:
            neutral.close()
        raise


# whole exports cost more than lowerings: a few trees per run, more under the fuzz profile
WHOLE_EXPORT_EXAMPLES = 8 if settings.default.max_examples < 1000 else 500


@pytest.mark.parametrize("name", sorted(EXPORTS))
@settings(max_examples=WHOLE_EXPORT_EXAMPLES)
@given(observation=trees(2), action=trees(1), seed=SEEDS)
def test_whole_export_builds_fully_or_not_at_all(name: str, observation: ns.Space, action: ns.Space, seed: int) -> None:
    env_class = tree_env(observation, action)
    bridge.register("fuzz/Tree-v0", env_class)
    try:
        export = export_env(name, "fuzz/Tree-v0")
    except ConversionError as e:
        role = "observation" if str(e).startswith("observation") else "action"
        assert_refusal(e, role, observation if role == "observation" else action)
        # built here from an id and refused: every neutral env it made is closed again
        assert all(env.closed for env in env_class.open_envs), f"{name} left a neutral env open after: {e}"
        event(f"{name}: refused")
        return
    finally:
        del registry["fuzz/Tree-v0"]
    event(f"{name}: built")
    mine = env_class()
    export_env(name, mine)  # a caller's own env: exported, not closed
    assert not mine.closed
    close = getattr(export, "close", None)
    if close is not None:
        close()


# -- regressions for what the fuzzer found (each fixed in the file named) -------------------------
def test_scalar_integer_box_samples_in_both_eras() -> None:
    """bridge/spaces/box.py: numpy 1.19 raised TypeError for Box(..., shape=(), int dtype).sample."""
    for dtype in (np.int8, np.int64, np.uint64):
        space = ns.Box(0, 5, (), dtype)
        assert space.contains(space.sample(np.random.default_rng(0)))


def test_matlab_facade_round_trips_starts_tuples_scalars_and_hybrids() -> None:
    """adapters/matlab/view.py: a Discrete start, a Tuple observation, a scalar Box and a hybrid
    action crashed or came back shifted/reshaped through getObservationInfo -> rlFunctionEnv."""
    from fuzz_support import matlab_export

    cases = [
        (ns.Discrete(3, start=2), "observation"),
        (ns.Tuple([ns.Discrete(2, start=-1), ns.Box(0.0, 1.0, (2,), np.float32)]), "observation"),
        (ns.Box(-np.inf, np.inf, (), np.float32), "observation"),
        (ns.Tuple([ns.Discrete(3, start=1), ns.Box(-1.0, 1.0, (2,), np.float64)]), "action"),
    ]
    for space, role in cases:
        check_values(matlab_export(space, role), space, seed=0)


def test_matlab_refuses_integer_bounds_a_double_cannot_hold() -> None:
    """adapters/matlab/validation.py: int64 bounds past 2**53 became other limits (MATLAB limits are
    doubles), so the facade refused the env's own valid observations."""
    from bridge.adapters.matlab import getObservationInfo

    env = tree_env(ns.Dict(pos=ns.Box(0, 2**60 + 1, (2,), np.int64)), ns.Discrete(2))()
    with raises_exactly(
        ConversionError,
        "observation['pos'][0] must have integer bounds a MATLAB double limit holds exactly (within +-2**53, "
        "or the class's full range), got 1152921504606846977. Narrow the bounds, or use the class's full "
        "range (MATLAB's infinite limits).",
    ):
        getObservationInfo(env)
    full = ns.Box(np.iinfo(np.int64).min, np.iinfo(np.int64).max, (2,), np.int64)  # exact as -inf/inf
    assert getObservationInfo(tree_env(full, ns.Discrete(2))()).to_space() == full


@pytest.mark.skipif(RUN_ERA != "modern", reason="SB3 runs in the modern era")
def test_sb3_float32_presentation_keeps_finite_values_finite() -> None:
    """adapters/_lowering.py: to_sb3's float32 presentation turned a float64 value past float32's
    range into inf; it now saturates at float32's largest finite value (an infinity stays one)."""
    from bridge.adapters.sb3 import to_sb3

    export = to_sb3(tree_env(ns.Box(-np.inf, np.inf, (4,), np.float64), ns.Discrete(2))())
    largest = np.finfo(np.float32).max
    with np.errstate(over="ignore"):
        out = export.observation_lowering.encode(np.array([1e300, -1e300, np.inf, 0.5]))
    assert_identical(out, np.array([largest, -largest, np.inf, 0.5], np.float32))
    assert export.observation_space.contains(out)


@pytest.mark.skipif(RUN_ERA != "legacy", reason="DreamerV2 runs in the legacy era")
def test_dreamerv2_action_lowering_regressions() -> None:
    """adapters/dreamerv2_actions.py: a scalar Box with infinite bounds was not refused (argwhere
    of a 0-d array is empty); Discrete actions reached the env as int or np.int64 depending on
    start; ``Dict(action=...)`` could not encode its own actions."""
    from bridge.adapters.dreamerv2.actions import ActionLowering

    with raises_exactly(
        ConversionError,
        "action must have finite bounds for DreamerV2's NormalizeAction (it passes unbounded dims through "
        "unscaled), got [-inf, inf]. Pass action_bounds=(low, high) with the finite range the policy should "
        "cover, or declare finite bounds.",
    ):
        ActionLowering(ns.Box(-np.inf, np.inf, (), np.float32))
    for start in (0, 3):
        lowering = ActionLowering(ns.Discrete(4, start))
        for index in (1, np.int64(1), np.uint8(1), np.array(1)):
            got = lowering.decode(index)
            assert type(got) is np.int64 and got == start + 1
    wrapped = ActionLowering(ns.Dict(action=ns.Discrete(3, start=1)))
    assert wrapped.encode({"action": np.int64(2)}) == 1
    assert_identical(wrapped.decode(wrapped.encode({"action": np.int64(2)})), {"action": np.int64(2)})


@pytest.mark.skipif(RUN_ERA != "legacy", reason="DreamerV2 runs in the legacy era")
@pytest.mark.xfail(
    strict=True,
    reason="DreamerV2's action space is float32 (NormalizeAction computes in float32): a float64 Box "
    "action that is not a float32 value cannot be expressed, and encode rounds it. Kept on purpose: "
    "every action DreamerV2 sends is float32 and decodes exactly, and refusing float64 actions would "
    "shut out MATLAB 'double' continuous actions (README, Known limits).",
)
def test_dreamerv2_float64_box_action_round_trips() -> None:
    from bridge.adapters.dreamerv2.actions import ActionLowering

    lowering = ActionLowering(ns.Box(-1.0, 1.0, (2,), np.float64))
    value = np.array([0.1, -0.3])
    assert_identical(lowering.decode(lowering.encode(value)), value)


@pytest.mark.skipif(RUN_ERA != "legacy", reason="gym 0.23 and DreamerV2 run in the legacy era")
def test_refused_legacy_export_from_an_id_closes_what_it_built() -> None:
    """adapters/gym.py, adapters/dreamerv2_env.py: to_gym(id) and to_dreamer_ready(id) left the
    neutral env they had built open when the export was refused."""
    from bridge.adapters.dreamerv2 import to_dreamer_ready
    from bridge.adapters.gym import to_gym

    env_class = tree_env(ns.MultiDiscrete([2, 3], start=[1, 1]), ns.Box(-np.inf, np.inf, (2,), np.float32))
    bridge.register("fuzz/Refused-v0", env_class)
    try:
        for export in (to_gym, to_dreamer_ready):
            with pytest.raises(ConversionError):
                export("fuzz/Refused-v0")
        assert len(env_class.open_envs) == 2 and all(env.closed for env in env_class.open_envs)
    finally:
        del registry["fuzz/Refused-v0"]

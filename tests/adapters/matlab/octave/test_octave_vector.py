"""rlFunctionVectorEnv over single-env .m functions: NumEnv instances in one Octave process."""

from __future__ import annotations

import numpy as np
from bridge.adapters.matlab import (
    addpath,
    rlFiniteSetSpec,
    rlFunctionVectorEnv,
    rlNumericSpec,
    rmpath,
    validateEnvironment,
)
from bridge.adapters.matlab.octave import ports
from support import raises_exactly

from bridge.errors import ContractError, SpecError

OBS, ACT = rlNumericSpec([2, 1]), rlFiniteSetSpec([-1.0, 1.0])
PROBE = "@(Action,LoggedSignals) probe_step(Action,LoggedSignals,Mode)"


def cartpoles(n: int) -> rlFunctionVectorEnv:
    obsInfo, actInfo = ports.cartpole_specs()
    return rlFunctionVectorEnv(obsInfo, actInfo, "cartpole_step", "cartpole_reset", NumEnv=n, MaxStepsPerEpisode=50)


def test_each_instance_steps_as_the_python_port_does_from_its_state():
    addpath(ports.EXAMPLES)
    venv = cartpoles(5)
    try:
        obs, _ = venv.reset(seed=4)
        assert obs.shape == (5, 4, 1) and len({float(o[2, 0]) for o in obs}) == 5  # five different draws
        actions = np.array([0, 1, 1, 0, 1])
        after, rewards, terminated, truncated, _ = venv.step(actions)
        for k in range(5):
            force = ports.cartpole_specs()[1].element(actions[k])
            want, reward, done, _ = ports.cartpole_step(force, {"State": obs[k]})
            np.testing.assert_array_max_ulp(after[k], want, maxulp=ports.CROSS_ULPS)
            assert (rewards[k], terminated[k], truncated[k]) == (reward, done, False)
    finally:
        venv.close()
        rmpath(ports.EXAMPLES)


def test_a_seeded_reset_is_reproducible_and_a_masked_one_resets_only_its_rows():
    addpath(ports.EXAMPLES)
    first, second = cartpoles(3), cartpoles(3)
    try:
        a, _ = first.reset(seed=9)
        b, _ = second.reset(seed=9)
        assert a.tobytes() == b.tobytes()
        first.step(np.array([1, 1, 1]))
        moved, *_ = first.step(np.array([1, 1, 1]))
        again, _ = first.reset(options={"reset_mask": np.array([False, True, False])})
        assert again[0].tobytes() == moved[0].tobytes() and again[2].tobytes() == moved[2].tobytes()
        assert again[1, 1, 0] == 0.0 and again[1].tobytes() != moved[1].tobytes()  # a fresh cart at rest
    finally:
        first.close()
        second.close()
        rmpath(ports.EXAMPLES)


def test_two_channels_and_validate_environment():
    addpath(ports.EXAMPLES)
    obsInfo, actInfo = ports.reach_specs()
    venv = rlFunctionVectorEnv(obsInfo, actInfo, "reach_step", "reach_reset", NumEnv=4)
    try:
        validateEnvironment(venv)
        obs, _ = venv.reset(seed=1)
        assert {k: v.shape for k, v in obs.items()} == {"State": (4, 2, 1), "Goal": (4, 1, 1)}
    finally:
        venv.close()
        rmpath(ports.EXAMPLES)


def test_an_error_in_one_instance_names_the_m_file(mfiles):
    venv = rlFunctionVectorEnv(OBS, ACT, PROBE, "probe_reset", NumEnv=3, workspace={"Mode": "raise"})
    text = (
        "rlFunctionVectorEnv step() at step 1 must run without raising, got OctaveError: Error in probe_step "
        f"(line 12 of {mfiles}/probe_step.m): the probe failed at count 1. Fix the env; the original exception "
        "and its traceback are chained as __cause__."
    )
    try:
        venv.reset(seed=0)
        with raises_exactly(ContractError, text):
            venv.step(np.array([1, 0, 1]))
    finally:
        venv.close()


def test_an_off_size_observation_is_the_batched_facades_refusal(mfiles):
    venv = rlFunctionVectorEnv(OBS, ACT, PROBE, "probe_reset", NumEnv=3, workspace={"Mode": "row"})
    text = (
        "StepFcn output NextObservation must have size [3 x [2 1]] (NumEnv x Dimension), got size [3, 1, 2]. "
        "Return 2 values per instance shaped [2 1] (the spec's Dimension)."
    )
    try:
        venv.reset(seed=0)
        with raises_exactly(ContractError, text):
            venv.step(np.array([1, 0, 1]))
    finally:
        venv.close()


def test_a_setup_function_is_refused_with_m_functions(mfiles):
    text = (
        "rlFunctionVectorEnv setupFcn must be None with .m functions, got 'vec_setup'. Leave setupFcn out: each "
        "instance runs your single-env .m functions from its own LoggedSignals."
    )
    with raises_exactly(SpecError, text):
        rlFunctionVectorEnv(OBS, ACT, "counter_step", "probe_reset", "vec_setup", NumEnv=2)

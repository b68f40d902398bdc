"""rlFunctionVectorEnv: N cart-poles as one numpy batch, step for step equal to N scalar envs."""

from __future__ import annotations

import numpy as np
import pytest
from bridge.adapters.matlab import examples as cp
from bridge.adapters.matlab import (
    getActionInfo,
    getObservationInfo,
    rlFiniteSetSpec,
    rlFunctionVectorEnv,
    rlNumericSpec,
    validateEnvironment,
)
from support import raises_exactly

from bridge import spaces
from bridge.errors import ContractError, SpecError

N = 8


def counted(fn, calls):
    def wrapper(*args, **kwargs):
        calls.append(np.shape(args[0]))
        return fn(*args, **kwargs)

    return wrapper


def test_validate_and_spaces():
    venv = cp.make_vector_cartpole(N)
    validateEnvironment(venv)
    assert venv.single_observation_space == spaces.Box(-np.inf, np.inf, (4, 1), np.float64)
    assert venv.action_space == spaces.MultiDiscrete(np.full(N, 2))
    assert (
        getObservationInfo(venv) == cp.cartpole_observation_info() and getActionInfo(venv) == cp.cartpole_action_info()
    )


def test_one_batched_call_per_step():
    calls = []
    venv = rlFunctionVectorEnv(
        cp.cartpole_observation_info(),
        cp.cartpole_action_info(),
        counted(cp.vec_cartpole_step, calls),
        cp.vec_cartpole_reset,
        cp.vec_cartpole_setup,
        NumEnv=N,
    )
    venv.reset(seed=0)
    for _ in range(20):
        venv.step(np.ones(N, dtype=np.int64))
    assert calls == [(N,)] * 20  # the whole batch of forces in one call per step


@pytest.mark.parametrize("mode", ["same-step", "next-step"])
def test_matches_scalar_envs_step_for_step(mode):
    """Each instance is compared with a scalar rlFunctionEnv that restarts from the same state."""
    venv = cp.make_vector_cartpole(N, MaxStepsPerEpisode=40, autoreset_mode=mode)
    scalars = [cp.make_cartpole("discrete", MaxStepsPerEpisode=40) for _ in range(N)]
    obs, _ = venv.reset(seed=0)

    def sync(i):  # restart scalar i from the vector's state of instance i
        scalars[i].reset()
        scalars[i].unwrapped.Info = {"State": venv.EnvData["State"][i].copy()}

    for i in range(N):
        sync(i)
    rng = np.random.default_rng(1)
    pending = np.zeros(N, dtype=bool)  # next-step: this step only resets these
    ends = 0
    for _ in range(120):
        actions = rng.integers(0, 2, size=N)
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        for i in range(N):
            if pending[i]:
                assert (rewards[i], terminated[i], truncated[i]) == (0.0, False, False)
                sync(i)
                continue
            o, r, t, tr, _ = scalars[i].step(int(actions[i]))
            assert (rewards[i], terminated[i], truncated[i]) == (r, t, tr)
            final = infos["final_obs"][i] if mode == "same-step" and (t or tr) else obs[i]
            assert np.array_equal(final, o)
            if (t or tr) and mode == "same-step":
                assert infos["_final_obs"][i]
                sync(i)
            ends += int(t or tr)
        pending = (terminated | truncated) if mode == "next-step" else pending
    assert ends >= N  # every instance ended (and restarted) at least once


def test_batched_refusals_name_the_output():
    def step(Action, EnvData):
        NextState, Reward, IsDone, data = cp.vec_cartpole_step(Action, EnvData)
        return NextState, Reward[:3], IsDone, data

    venv = rlFunctionVectorEnv(
        cp.cartpole_observation_info(),
        cp.cartpole_action_info(),
        step,
        cp.vec_cartpole_reset,
        cp.vec_cartpole_setup,
        NumEnv=4,
    )
    venv.reset(seed=0)
    with raises_exactly(
        ContractError,
        "StepFcn output Reward must be 4 real numbers (one per instance), got array([1., 1., 1.], shape=(3,), dtype=float64). Return an array of shape (NumEnv,).",
    ):
        validateEnvironment(venv)
    with raises_exactly(  # a refused output ends the batch's episodes: reset() first
        ContractError,
        "rlFunctionVectorEnv step() must come after reset() once a step failed, got step() after an error in "
        "step() at step 1. Call reset() first.",
    ):
        venv.step(np.array([0, 1, 0, 1]))
    venv.reset(seed=0)
    with raises_exactly(
        ContractError,
        "actions[1] must lie in [0, 1], got 2. Pick values inside nvec.",
    ):
        venv.step(np.array([0, 2, 0, 1]))
    with raises_exactly(SpecError, "rlFunctionVectorEnv NumEnv must be an integer >= 1, got 0. Pass e.g. NumEnv=64."):
        cp.make_vector_cartpole(0)


def test_wrong_batched_observation_size():
    def reset(EnvData, ResetMask):
        return np.zeros((2, 4, 1)), EnvData

    venv = rlFunctionVectorEnv(
        cp.cartpole_observation_info(),
        cp.cartpole_action_info(),
        cp.vec_cartpole_step,
        reset,
        cp.vec_cartpole_setup,
        NumEnv=3,
    )
    with raises_exactly(
        ContractError,
        "ResetFcn output InitialObservation must have size [3 x [4 1]] (NumEnv x Dimension), got size [2, 4, 1]. "
        "Return 4 values per instance shaped [4 1] (the spec's Dimension).",
    ):
        venv.reset()


def test_finite_set_observations_and_numeric_actions_in_a_batch():
    """A batched counter whose observation is a finite-set channel (element values -> indices)."""
    levels = rlFiniteSetSpec([0, 10, 20])

    def setup(NumEnv):
        return {"level": np.zeros(NumEnv)}

    def reset(EnvData, ResetMask):
        level = np.where(ResetMask, 0.0, EnvData["level"])
        return level, {"level": level}

    def step(Action, EnvData):
        level = np.minimum(EnvData["level"] + 10.0 * (Action.reshape(-1) > 0), 20.0)
        return level, level / 10.0, level >= 20.0, {"level": level}

    venv = rlFunctionVectorEnv(levels, rlNumericSpec([1, 1], LowerLimit=-1, UpperLimit=1), step, reset, setup, NumEnv=3)
    validateEnvironment(venv)
    obs, _ = venv.reset(seed=0)
    assert obs.tolist() == [0, 0, 0] and obs.dtype == np.int64
    push = np.array([[[1.0]], [[-1.0]], [[1.0]]])
    obs, rewards, terminated, _, infos = venv.step(push)
    assert obs.tolist() == [1, 0, 1] and rewards.tolist() == [1.0, 0.0, 1.0]
    obs, rewards, terminated, _, infos = venv.step(push)
    assert terminated.tolist() == [True, False, True] and infos["final_obs"].tolist() == [2, 0, 2]
    assert obs.tolist() == [0, 0, 0]  # same-step autoreset

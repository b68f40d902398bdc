"""The episode-end table (docs/episode-ends.md), one test per cell, each read through the runtime's
own code path: Gymnasium's 5-tuple, SB3's DummyVecEnv and the batched VecEnv, gym 0.23's 4-tuple,
DreamerV2's GymWrapper chain, and the MATLAB facade's IsDone and ``sim`` experience codes.
A cell whose runtime is not in this era is skipped (the other era's tox env runs it)."""

from __future__ import annotations

import numpy as np
import pytest
from support import require
from toy_envs.scripted import EndsOnStepTwo

import bridge

CASES = {"terminated": (True, False), "truncated": (False, True), "both": (True, True)}


@pytest.mark.parametrize("case", CASES)
def test_gymnasium_five_tuple(case):
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    env = to_gymnasium(EndsOnStepTwo(CASES[case]))
    env.reset(seed=0)
    env.step(0)
    _, _, terminated, truncated, _ = env.step(0)
    assert (terminated, truncated) == CASES[case]  # both pass through unchanged


SB3_EXPECTED = {"terminated": False, "truncated": True, "both": False}  # TimeLimit.truncated; termination wins


@pytest.mark.parametrize("case", CASES)
def test_sb3_dummy_vec_env(case):
    require("stable_baselines3")
    from bridge.adapters.sb3 import to_sb3
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: to_sb3(EndsOnStepTwo(CASES[case]))])
    vec.reset()
    vec.step(np.array([0]))
    obs, _, dones, infos = vec.step(np.array([0]))
    assert dones[0] and infos[0]["TimeLimit.truncated"] is SB3_EXPECTED[case]
    assert infos[0]["terminal_observation"].tolist() == [2.0] and obs[0].tolist() == [0.0]


@pytest.mark.parametrize("case", CASES)
def test_sb3_batched_vec_env(case):
    require("stable_baselines3")
    from bridge.adapters.sb3 import make_vec_env

    vec = make_vec_env(bridge.vectorize(lambda: EndsOnStepTwo(CASES[case]), 2, autoreset_mode="same-step"), n_envs=2)
    vec.reset()
    vec.step(np.array([0, 0]))
    obs, _, dones, infos = vec.step(np.array([0, 1]))
    for info in infos:
        assert info["TimeLimit.truncated"] is SB3_EXPECTED[case]
        assert info["terminal_observation"].tolist() == [2.0] and info["episode"]["l"] == 2
    assert dones.tolist() == [True, True] and obs.tolist() == [[0.0], [0.0]]


GYM_EXPECTED = {"terminated": (True, False, True), "truncated": (True, True, False), "both": (True, False, True)}


@pytest.mark.parametrize("case", CASES)
def test_gym_023_four_tuple(case):
    require("gym")
    from bridge.adapters.gym import to_gym

    env = to_gym(EndsOnStepTwo(CASES[case]))
    env.reset(seed=0)
    env.step(0)
    _, _, done, info = env.step(0)
    assert (done, info["TimeLimit.truncated"], info["is_terminal"]) == GYM_EXPECTED[case]


DREAMER_EXPECTED = {
    "terminated": (True, True),
    "truncated": (True, False),
    "both": (True, True),
}  # is_last, is_terminal


@pytest.mark.parametrize("case", CASES)
def test_dreamerv2_gym_wrapper_chain(case):
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import to_dreamerv2

    chain = to_dreamerv2(EndsOnStepTwo(CASES[case]))  # GymWrapper -> ResizeImage -> OneHotAction -> TimeLimit
    chain.reset()
    one_hot = {"action": np.array([1.0, 0.0], np.float32)}
    chain.step(one_hot)
    last = chain.step(one_hot)
    assert (last["is_last"], last["is_terminal"]) == DREAMER_EXPECTED[case]


MATLAB_EXPECTED = {"terminated": (True, 1), "truncated": (False, 2), "both": (True, 1)}  # IsDone, sim code


@pytest.mark.parametrize("case", CASES)
def test_matlab_is_done_and_sim_experience(case):
    from bridge.adapters.matlab import rlSimulationOptions, sim
    from bridge.adapters.matlab.view import MatlabView

    view = MatlabView(bridge.TimeLimit(EndsOnStepTwo(CASES[case]), 50))  # the facade, one flag
    view.reset(0)
    view.step(np.int64(0))
    _, _, is_done, _ = view.step(np.int64(0))
    assert is_done is MATLAB_EXPECTED[case][0]
    experience = sim(EndsOnStepTwo(CASES[case]), lambda obs: np.int64(0), rlSimulationOptions(MaxSteps=10))[0]
    assert int(np.asarray(experience.IsDone)[-1]) == MATLAB_EXPECTED[case][1]

"""The MATLAB workflow around training refuses in MATLAB's terms before work starts (issue 28
family 3, modern era): a NaN observation to getAction, folders that are files, a missing or foreign
file to load, an option combination SB3 rejects."""

from __future__ import annotations

import os

import numpy as np
import pytest
from support import raises_exactly, require

require("stable_baselines3")

from bridge.adapters.matlab import examples as cp  # noqa: E402
from bridge.adapters.matlab import (  # noqa: E402
    getAction,
    load,
    rlAgentInitializationOptions,
    rlDQNAgent,
    rlPPOAgent,
    rlPPOAgentOptions,
    rlTrainingOptions,
    save,
    train,
)

from bridge.errors import SpecError  # noqa: E402

OBS, FINITE = cp.cartpole_observation_info(), cp.cartpole_action_info("discrete")
SMALL = rlAgentInitializationOptions(NumHiddenUnit=8)


@pytest.fixture(scope="module")
def agent():
    return rlDQNAgent(OBS, FINITE, SMALL, seed=0)


@pytest.mark.parametrize("bad", [0, 3], ids=["first", "last"])
def test_get_action_refuses_a_nan_observation(agent, bad):
    column = np.zeros((4, 1))
    column[bad, 0] = np.nan
    with raises_exactly(
        SpecError,
        "getAction observation must hold no NaN (the network would answer an arbitrary action), got NaN at index "
        f"[{bad}, 0] of a value of size [4 1]. Pass the observation the environment returned, with every element a "
        "number.",
    ):
        getAction(agent, [column])


def _directory_refusal(name, path, problem):
    return (
        f"rlTrainingOptions {name} must name a folder train can write (it is checked before the first episode), "
        f"got {path!r} ({problem}). Set {name} to a folder path, or remove the file."
    )


@pytest.mark.parametrize("name", ["ProgressDirectory", "SaveAgentDirectory"])
@pytest.mark.parametrize("under", [False, True], ids=["is-a-file", "under-a-file"])
def test_train_refuses_a_folder_option_that_is_a_file_before_any_episode(agent, tmp_path, name, under):
    blocker = tmp_path / "taken"
    blocker.write_text("mine")
    path = str(blocker / "sub") if under else str(blocker)
    problem = f"under {str(blocker)!r}, a file" if under else "a file"
    plots = "training-progress" if name == "ProgressDirectory" else "none"
    opts = rlTrainingOptions(MaxEpisodes=2, MaxStepsPerEpisode=5, Plots=plots, SaveAgentCriteria="EpisodeCount")
    setattr(opts, name, path)
    steps = agent.model.num_timesteps
    with raises_exactly(SpecError, _directory_refusal(name, path, problem)):
        train(agent, cp.make_cartpole("discrete", None), opts, seed=0)
    assert agent.model.num_timesteps == steps and blocker.read_text() == "mine"  # nothing trained, nothing written


def test_load_names_the_file_it_was_given(agent, tmp_path):
    missing = str(tmp_path / "nope.zip")
    with raises_exactly(
        SpecError,
        f"load file must be an existing file written by save(filename, agent), got {missing!r} (no such file). "
        "Pass the path save returned (it ends in .zip).",
    ):
        load(missing)
    with raises_exactly(
        SpecError,
        f"load file must be an existing file written by save(filename, agent), got {str(tmp_path)!r} (a folder). "
        "Pass the path save returned (it ends in .zip).",
    ):
        load(str(tmp_path))
    foreign = tmp_path / "notes.zip"
    foreign.write_text("not a zip")
    with pytest.raises(SpecError, match=r"^load file must be an agent written by save\(filename, agent\), got "):
        load(str(foreign))
    written = save(str(tmp_path / "agent"), agent)
    assert written == str(tmp_path / "agent.zip") and os.path.isfile(written)
    assert load(str(tmp_path / "agent")).kind == "rlDQNAgent"  # as save named it, MATLAB-style without .zip


def test_an_option_combination_sb3_rejects_is_refused_in_matlab_terms():
    opts = rlPPOAgentOptions(ExperienceHorizon=1, MiniBatchSize=1, NormalizedAdvantageMethod="current")
    with pytest.raises(SpecError) as caught:
        rlPPOAgent(OBS, FINITE, SMALL, opts)
    text = str(caught.value)
    assert text.startswith("rlPPOAgent options must be a combination SB3's PPO accepts, got AssertionError: ")
    assert text.endswith("Change the rlPPOAgentOptions or rlAgentInitializationOptions values SB3 names.")


# issue 40, items 6 and 7: seeds and the env are typed before anything is built, in MATLAB's terms
SEED_FIX = "Pass e.g. seed=0."


@pytest.mark.parametrize(
    "seed, shown",
    [("0", "'0'"), (-1, "-1"), (1.5, "1.5"), (True, "True"), (2**32, "4294967296")],
    ids=["string", "negative", "fraction", "bool", "past-numpy"],
)
def test_a_seed_that_is_not_a_seed_is_named_as_the_seed(agent, seed, shown):
    expectation = f"must be a non-negative int <= 4294967295 or None, got {shown}. {SEED_FIX}"
    with raises_exactly(SpecError, f"rlDQNAgent seed {expectation}"):
        rlDQNAgent(OBS, FINITE, SMALL, seed=seed)
    env = cp.make_cartpole("discrete")
    with raises_exactly(SpecError, f"train seed {expectation}"):
        train(agent, env, rlTrainingOptions(MaxEpisodes=1), seed=seed)


def test_train_refuses_an_env_id_in_matlab_terms(agent):
    with raises_exactly(
        SpecError,
        "train env must be an rlFunctionEnv, an rlFunctionVectorEnv or a bridge.Env, got 'envbridge/CartPole-v0'. "
        "Build it first, e.g. env = bridge.make('envbridge/CartPole-v0'), and pass env.",
    ):
        train(agent, "envbridge/CartPole-v0", rlTrainingOptions(MaxEpisodes=1))

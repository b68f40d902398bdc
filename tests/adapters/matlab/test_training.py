"""train's Episode Manager (modern era): every stop criterion stops at the exact episode where it
is first met, counted in episodes as MATLAB does; the statistics, saving by criterion, the Verbose
line, the progress CSV and PNG; an rlFunctionVectorEnv trains batched."""

from __future__ import annotations

import csv
import math
import os

import numpy as np
import pytest
from support import raises_exactly, require

require("stable_baselines3")

from bridge.adapters.matlab import examples as cp  # noqa: E402
from bridge.adapters.matlab import (  # noqa: E402
    load,
    rlAgentInitializationOptions,
    rlDQNAgent,
    rlFiniteSetSpec,
    rlFunctionEnv,
    rlNumericSpec,
    rlPPOAgent,
    rlPPOAgentOptions,
    rlTrainingOptions,
    train,
)

from bridge.errors import SpecError  # noqa: E402

OBS, ACT = rlNumericSpec([1, 1]), rlFiniteSetSpec([0, 1])


def growing_env():
    """Episode k lasts k steps and earns 1 per step (reward k): every criterion's episode is known."""
    episodes = [0]

    def reset():
        episodes[0] += 1
        return np.zeros((1, 1)), {"t": 0, "length": episodes[0]}

    def step(Action, Info):
        t = Info["t"] + 1
        return np.full((1, 1), float(t)), 1.0, t >= Info["length"], {"t": t, "length": Info["length"]}

    return rlFunctionEnv(OBS, ACT, step, reset, validate=False, determinism="none")


def small_agent(kind=rlPPOAgent):
    options = (rlPPOAgentOptions(ExperienceHorizon=16, MiniBatchSize=16),) if kind is rlPPOAgent else ()
    return kind(OBS, ACT, *options, rlAgentInitializationOptions(NumHiddenUnit=8), seed=0)


def options(**kw):
    kw.setdefault("Plots", "none")
    kw.setdefault("MaxEpisodes", 40)
    return rlTrainingOptions(**kw)


@pytest.mark.parametrize(
    "criterion, value, window, episode",
    [
        ("EpisodeCount", 7, 5, 7),
        ("EpisodeReward", 5, 5, 5),
        ("EpisodeSteps", 6, 5, 6),
        ("AverageReward", 4, 3, 5),  # averages 1, 1.5, 2, 3, 4: (3 + 4 + 5) / 3 at episode 5
        ("AverageSteps", 5.5, 2, 6),  # (5 + 6) / 2
        ("GlobalStepCount", 10, 5, 4),  # 1 + 2 + 3 + 4
    ],
)
def test_each_criterion_stops_at_the_exact_episode(criterion, value, window, episode):
    opts = options(StopTrainingCriteria=criterion, StopTrainingValue=value, ScoreAveragingWindowLength=window)
    stats = train(small_agent(), growing_env(), opts, seed=0)
    assert stats.StopReason == criterion
    np.testing.assert_array_equal(stats.EpisodeIndex, np.arange(1, episode + 1))
    np.testing.assert_array_equal(stats.EpisodeSteps, np.arange(1, episode + 1))
    np.testing.assert_array_equal(stats.EpisodeReward, np.arange(1, episode + 1))
    np.testing.assert_array_equal(stats.TotalAgentSteps, np.cumsum(np.arange(1, episode + 1)))
    averages = [np.mean(np.arange(max(1, k - window + 1), k + 1)) for k in range(1, episode + 1)]
    np.testing.assert_allclose(stats.AverageReward, averages)
    np.testing.assert_allclose(stats.AverageSteps, averages)


def test_episode_q0_criterion_and_none_and_max_episodes():
    agent = small_agent(rlDQNAgent)
    stats = train(agent, growing_env(), options(StopTrainingCriteria="EpisodeQ0", StopTrainingValue=-math.inf))
    assert stats.StopReason == "EpisodeQ0" and len(stats.EpisodeIndex) == 1
    assert stats.EpisodeQ0[0] == pytest.approx(agent.q0(np.zeros((1, 1))), abs=0.5)  # the net moved a little since
    stats = train(agent, growing_env(), options(StopTrainingCriteria="EpisodeQ0", StopTrainingValue=math.inf))
    assert stats.StopReason == "MaxEpisodes" and len(stats.EpisodeIndex) == 40
    stats = train(agent, growing_env(), options(StopTrainingCriteria="none", MaxEpisodes=9))
    assert stats.StopReason == "MaxEpisodes" and stats.EpisodeIndex[-1] == 9 and np.isfinite(stats.EpisodeQ0).all()


def test_max_steps_per_episode_truncates_and_counts():
    stats = train(
        small_agent(),
        growing_env(),
        options(MaxStepsPerEpisode=3, StopTrainingCriteria="EpisodeCount", StopTrainingValue=6),
    )
    np.testing.assert_array_equal(stats.EpisodeSteps, [1, 2, 3, 3, 3, 3])


def test_vector_env_trains_batched_and_counts_episodes_in_order():
    venv = cp.make_vector_cartpole(NumEnv=4, MaxStepsPerEpisode=500)
    agent = rlPPOAgent(
        cp.cartpole_observation_info(),
        cp.cartpole_action_info(),
        rlPPOAgentOptions(ExperienceHorizon=16, MiniBatchSize=64),
        seed=0,
    )
    stats = train(agent, venv, options(StopTrainingCriteria="EpisodeCount", StopTrainingValue=11), seed=0)
    assert stats.StopReason == "EpisodeCount"
    np.testing.assert_array_equal(stats.EpisodeIndex, np.arange(1, 12))
    assert (np.diff(stats.TotalAgentSteps) >= 0).all() and stats.TotalAgentSteps[-1] % 4 == 0
    assert ((stats.EpisodeReward == stats.EpisodeSteps - 11) | (stats.EpisodeSteps == 500)).all()  # -10 on a fall


def test_vector_env_with_another_step_limit_is_refused():
    venv = cp.make_vector_cartpole(NumEnv=2, MaxStepsPerEpisode=200)
    agent = rlPPOAgent(cp.cartpole_observation_info(), cp.cartpole_action_info())
    with raises_exactly(
        SpecError,
        "train vector env MaxStepsPerEpisode must equal rlTrainingOptions MaxStepsPerEpisode (500), got 200. "
        "Build it with MaxStepsPerEpisode=500.",
    ):
        train(agent, venv, options())


def test_save_agent_criteria_saves_each_episode_that_meets_it(tmp_path):
    opts = options(
        StopTrainingCriteria="EpisodeCount",
        StopTrainingValue=5,
        SaveAgentCriteria="EpisodeReward",
        SaveAgentValue=4,
        SaveAgentDirectory=str(tmp_path / "savedAgents"),
    )
    train(small_agent(), growing_env(), opts, seed=0)
    assert sorted(os.listdir(tmp_path / "savedAgents")) == ["Agent4.zip", "Agent5.zip"]
    assert load(str(tmp_path / "savedAgents" / "Agent5.zip")).kind == "rlPPOAgent"


def test_verbose_prints_matlab_s_line_per_episode(capsys):
    train(small_agent(), growing_env(), options(Verbose=True, StopTrainingCriteria="EpisodeCount", StopTrainingValue=3))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert lines[0] == "rlPPOAgent: SB3 PPO with 'MlpPolicy' (a flat observation)"  # which policy, before episode 1
    assert lines[2].startswith(
        "Episode:    2/40 | Episode reward:      2.00 | Episode steps:     2 | Average reward:      1.50 | Step Count:       3 | Episode Q0:"
    )


def test_training_progress_writes_the_csv_and_png(tmp_path, capsys):
    opts = options(
        Plots="training-progress",
        ProgressDirectory=str(tmp_path),
        StopTrainingCriteria="AverageReward",
        StopTrainingValue=6,
    )
    stats = train(small_agent(), growing_env(), opts, seed=0)
    with open(tmp_path / "training-progress.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["EpisodeIndex"]) for r in rows] == list(stats.EpisodeIndex)
    assert [float(r["AverageReward"]) for r in rows] == list(stats.AverageReward)
    with open(tmp_path / "training-progress.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "rlPPOAgent: stopped by AverageReward" in capsys.readouterr().err


@pytest.mark.parametrize(
    "given, text",
    [
        (
            dict(UseParallel=True),
            "rlTrainingOptions UseParallel must be false (SB3 trains here in one process), got True. Train an rlFunctionVectorEnv (NumEnv=...) for batched experience.",
        ),
        (
            dict(StopTrainingCriteria="AverageRewards"),
            "rlTrainingOptions StopTrainingCriteria must be one of ['AverageReward', 'EpisodeReward', 'AverageSteps', 'EpisodeSteps', 'EpisodeCount', 'GlobalStepCount', 'EpisodeQ0', 'none'], got 'AverageRewards'. Pick one.",
        ),
        (
            dict(MaxEpisodes=0),
            "rlTrainingOptions MaxEpisodes must be an int >= 1, got 0. Pass a whole number in range.",
        ),
        (dict(Plots="on"), "rlTrainingOptions Plots must be one of ['training-progress', 'none'], got 'on'. Pick one."),
    ],
)
def test_training_options_refuse_by_name(given, text):
    with raises_exactly(SpecError, text):
        rlTrainingOptions(**given)


def test_unknown_training_option_is_refused_by_name():
    with raises_exactly(
        SpecError,
        "rlTrainingOptions option StopOnError must be one of ['MaxEpisodes', 'MaxStepsPerEpisode', 'Plots', "
        "'ProgressDirectory', 'SaveAgentCriteria', 'SaveAgentDirectory', 'SaveAgentValue', 'ScoreAveragingWindowLength', "
        "'StopTrainingCriteria', 'StopTrainingValue', 'UseParallel', 'Verbose'], got StopOnError. "
        "envbridge refuses an option rather than ignore it; drop it or use a listed one.",
    ):
        rlTrainingOptions(StopOnError="on")


def test_an_env_with_other_specs_is_refused():
    agent = rlPPOAgent(rlNumericSpec([4, 1]), ACT)
    with pytest.raises(
        SpecError, match=r"^train env observation specs must match the agent's \(rlNumericSpec\(Dimension=\[4, 1\]"
    ):
        train(agent, growing_env(), options())


def test_any_bridge_env_trains_through_the_specs_it_describes():
    from bridge.adapters.matlab import getActionInfo, getObservationInfo

    from bridge.examples import CartPole

    env = CartPole()
    agent = rlPPOAgent(
        getObservationInfo(env), getActionInfo(env), rlPPOAgentOptions(ExperienceHorizon=64, MiniBatchSize=64)
    )
    stats = train(agent, env, options(StopTrainingCriteria="EpisodeCount", StopTrainingValue=3), seed=0)
    assert stats.StopReason == "EpisodeCount" and len(stats.EpisodeIndex) == 3

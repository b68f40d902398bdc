"""The Python column of docs/matlab.md "The cart-pole script, line by line", run as written
(MaxEpisodes cut to 2 so that it runs in seconds; the slow tests train it to the criterion)."""

from __future__ import annotations

import numpy as np
from support import require

require("stable_baselines3")

from bridge.adapters.matlab import (  # noqa: E402
    getAction,
    load,
    rlAgentInitializationOptions,
    rlDQNAgent,
    rlDQNAgentOptions,
    rlFiniteSetSpec,
    rlFunctionEnv,
    rlNumericSpec,
    rlSimulationOptions,
    rlTrainingOptions,
    save,
    sim,
    train,
)
from bridge.adapters.matlab.examples import cartpole_reset, cartpole_step_discrete  # noqa: E402

import bridge  # noqa: E402


def test_the_documented_port_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    obsInfo = rlNumericSpec([4, 1])
    obsInfo.Name = "CartPole States"
    actInfo = rlFiniteSetSpec([-10, 10])
    env = rlFunctionEnv(obsInfo, actInfo, cartpole_step_discrete, cartpole_reset)
    initOpts = rlAgentInitializationOptions(NumHiddenUnit=256)
    agentOpts = rlDQNAgentOptions(
        MiniBatchSize=128,
        ExperienceBufferLength=50_000,
        NumWarmStartSteps=1000,
        LearningFrequency=256,
        MaxMiniBatchPerEpoch=128,
        TargetSmoothFactor=1.0,
        TargetUpdateFrequency=10,
    )
    agentOpts.EpsilonGreedyExploration.EpsilonDecay = 5e-4
    agentOpts.EpsilonGreedyExploration.EpsilonMin = 0.0
    agentOpts.CriticOptimizerOptions.LearnRate = 6.3e-4
    agentOpts.CriticOptimizerOptions.L2RegularizationFactor = 0.0
    agent = rlDQNAgent(obsInfo, actInfo, initOpts, agentOpts)
    trainOpts = rlTrainingOptions(
        MaxEpisodes=2,  # 1500 in the docs
        MaxStepsPerEpisode=500,
        ScoreAveragingWindowLength=20,
        StopTrainingCriteria="AverageReward",
        StopTrainingValue=480,
        Verbose=True,
        Plots="training-progress",
    )
    trainingStats = train(agent, env, trainOpts, seed=0)
    assert list(trainingStats.EpisodeIndex) == [1, 2]
    assert capsys.readouterr().out.startswith(
        "rlDQNAgent: SB3 DQN with 'MlpPolicy' (a flat observation)\nEpisode:    1/2 | Episode reward:"
    )
    assert (tmp_path / "training-progress" / "training-progress.png").exists()
    simOpts = rlSimulationOptions(MaxSteps=500)
    experience = sim(bridge.TimeLimit(env, 500), agent, simOpts)[0]
    totalReward = experience.Reward.sum()
    assert np.isfinite(totalReward)
    action = getAction(agent, [np.array([[0], [0], [0.05], [0]])])
    assert action[0] in (-10.0, 10.0)
    save("cartpoleAgent.zip", agent)
    agent = load("cartpoleAgent.zip")
    assert getAction(agent, [np.array([[0], [0], [0.05], [0]])]) == action

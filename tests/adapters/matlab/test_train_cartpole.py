"""MATLAB's cart-pole workflow end to end (modern era, slow): default agents from the specs,
rlTrainingOptions with MATLAB's stop criterion for the example (AverageReward over 20 episodes
>= 480, MaxStepsPerEpisode 500), train, sim with the agent. Budgets and wall times: docs/matlab.md."""

from __future__ import annotations

import numpy as np
import pytest
from support import require

require("stable_baselines3")

from bridge.adapters.matlab import examples as cp  # noqa: E402
from bridge.adapters.matlab import (  # noqa: E402
    getActionInfo,
    getObservationInfo,
    rlAgentInitializationOptions,
    rlDQNAgent,
    rlDQNAgentOptions,
    rlPPOAgent,
    rlPPOAgentOptions,
    rlSACAgent,
    rlSACAgentOptions,
    rlSimulationOptions,
    rlTrainingOptions,
    sim,
    train,
)

pytestmark = pytest.mark.slow


def _no_l2(*optimizers):
    for o in optimizers:
        o.L2RegularizationFactor = 0.0


def dqn_options():
    opts = rlDQNAgentOptions(
        MiniBatchSize=128,
        ExperienceBufferLength=50_000,
        NumWarmStartSteps=1000,
        LearningFrequency=256,
        MaxMiniBatchPerEpoch=128,
        TargetSmoothFactor=1.0,
        TargetUpdateFrequency=10,
        DiscountFactor=0.99,
    )
    opts.EpsilonGreedyExploration.EpsilonDecay = 5e-4
    opts.EpsilonGreedyExploration.EpsilonMin = 0.0
    opts.CriticOptimizerOptions.LearnRate = 6.3e-4
    _no_l2(opts.CriticOptimizerOptions)
    return opts


def ppo_options():
    opts = rlPPOAgentOptions(
        ExperienceHorizon=32,
        MiniBatchSize=256,
        NumEpoch=20,
        ClipFactor=0.2,
        EntropyLossWeight=0.0,
        GAEFactor=0.8,
        DiscountFactor=0.98,
        NormalizedAdvantageMethod="current",
    )
    for o in (opts.ActorOptimizerOptions, opts.CriticOptimizerOptions):
        o.LearnRate, o.GradientThreshold = 1e-3, 0.5
    _no_l2(opts.ActorOptimizerOptions, opts.CriticOptimizerOptions)
    return opts


def matlab_stop(tmp_path, MaxEpisodes):
    return rlTrainingOptions(
        MaxEpisodes=MaxEpisodes,
        MaxStepsPerEpisode=500,
        ScoreAveragingWindowLength=20,
        StopTrainingCriteria="AverageReward",
        StopTrainingValue=480,
        Verbose=False,
        Plots="training-progress",
        ProgressDirectory=str(tmp_path),
    )


def _reached(stats):
    assert stats.StopReason == "AverageReward"
    assert stats.AverageReward[-1] >= 480 and (stats.AverageReward[:-1] < 480).all()
    assert stats.EpisodeSteps[-20:].mean() > 480


def test_dqn_balances_the_discrete_cartpole(tmp_path):
    env = cp.make_cartpole("discrete", MaxStepsPerEpisode=None)
    agent = rlDQNAgent(getObservationInfo(env), getActionInfo(env), dqn_options(), seed=0)
    stats = train(agent, env, matlab_stop(tmp_path, 1500), seed=0)
    print(f"DQN: {len(stats.EpisodeIndex)} episodes, {stats.TotalAgentSteps[-1]} steps, {stats.elapsed:.0f} s")
    _reached(stats)
    experience = sim(cp.make_cartpole("discrete", 500), agent, rlSimulationOptions(MaxSteps=500), seed=1)[0]
    assert experience.NumSteps == 500


def test_ppo_balances_the_discrete_cartpole_batched(tmp_path):
    venv = cp.make_vector_cartpole(NumEnv=8, MaxStepsPerEpisode=500)
    agent = rlPPOAgent(
        getObservationInfo(venv),
        getActionInfo(venv),
        ppo_options(),
        rlAgentInitializationOptions(NumHiddenUnit=64),
        seed=0,
    )
    stats = train(agent, venv, matlab_stop(tmp_path, 1500), seed=0)
    print(f"PPO: {len(stats.EpisodeIndex)} episodes, {stats.TotalAgentSteps[-1]} steps, {stats.elapsed:.0f} s")
    _reached(stats)
    experience = sim(cp.make_cartpole("discrete", 500), agent, rlSimulationOptions(MaxSteps=500), seed=1)[0]
    assert experience.NumSteps == 500


def _mean_return(env, policy, episodes=10):
    return float(
        np.mean(
            [
                e.Reward.sum()
                for e in sim(env, policy, rlSimulationOptions(MaxSteps=500, NumSimulations=episodes), seed=7)
            ]
        )
    )


def test_sac_beats_random_on_the_continuous_cartpole(tmp_path):
    env = cp.make_cartpole("continuous", MaxStepsPerEpisode=None)
    opts = rlSACAgentOptions(MiniBatchSize=256, ExperienceBufferLength=50_000, NumWarmStartSteps=1000)
    for o in (opts.ActorOptimizerOptions, opts.CriticOptimizerOptions):
        o.LearnRate, o.L2RegularizationFactor = 1e-3, 0.0
    agent = rlSACAgent(
        getObservationInfo(env), getActionInfo(env), opts, rlAgentInitializationOptions(NumHiddenUnit=64), seed=0
    )
    train_opts = rlTrainingOptions(
        MaxEpisodes=10_000, StopTrainingCriteria="GlobalStepCount", StopTrainingValue=8000, Plots="none"
    )
    stats = train(agent, env, train_opts, seed=0)
    rng = np.random.default_rng(3)
    random = _mean_return(cp.make_cartpole("continuous", 500), lambda obs: rng.uniform(-10, 10, (1, 1)))
    trained = _mean_return(cp.make_cartpole("continuous", 500), agent)
    print(
        f"SAC: {stats.TotalAgentSteps[-1]} steps, {stats.elapsed:.0f} s; mean return {trained:.1f} vs random {random:.1f}"
    )
    assert trained > random + 100

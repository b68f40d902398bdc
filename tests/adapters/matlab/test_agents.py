"""Default agents from specs (modern era): getAction in MATLAB values, sim with an agent,
save/load, options mapped onto SB3 and refused by name where SB3 cannot honour them."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

require("stable_baselines3")

from bridge.adapters.matlab import examples as cp  # noqa: E402
from bridge.adapters.matlab import (  # noqa: E402
    getAction,
    load,
    rlACAgent,
    rlAgentInitializationOptions,
    rlDDPGAgent,
    rlDDPGAgentOptions,
    rlDQNAgent,
    rlDQNAgentOptions,
    rlFiniteSetSpec,
    rlNumericSpec,
    rlPPOAgent,
    rlPPOAgentOptions,
    rlSACAgent,
    rlSACAgentOptions,
    rlSimulationOptions,
    rlTD3Agent,
    rlTD3AgentOptions,
    save,
    sim,
)

from bridge.errors import SpecError  # noqa: E402

OBS = cp.cartpole_observation_info()
FINITE, NUMERIC = cp.cartpole_action_info("discrete"), cp.cartpole_action_info("continuous")
SMALL = rlAgentInitializationOptions(NumHiddenUnit=16)


@pytest.mark.parametrize("make", [rlDQNAgent, rlPPOAgent, rlACAgent])
def test_get_action_on_a_column_returns_an_element_of_the_finite_set(make):
    agent = make(OBS, FINITE, SMALL, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        column = rng.uniform(-0.2, 0.2, (4, 1))
        action = getAction(agent, [column])  # getAction(agent, {obs})
        assert isinstance(action, list) and len(action) == 1
        assert action[0] in (-10.0, 10.0)
        assert getAction(agent, column) == action  # a bare column is one channel too


@pytest.mark.parametrize("make", [rlSACAgent, rlTD3Agent, rlDDPGAgent, rlPPOAgent, rlACAgent])
def test_get_action_on_a_numeric_action_is_a_1x1_array_within_limits(make):
    action = getAction(make(OBS, NUMERIC, SMALL, seed=0), [np.zeros((4, 1))])[0]
    assert action.shape == (1, 1) and action.dtype == np.float64
    if make in (rlSACAgent, rlTD3Agent, rlDDPGAgent):
        assert -10.0 <= action[0, 0] <= 10.0


def test_get_action_refuses_an_observation_of_the_wrong_size():
    agent = rlDQNAgent(OBS, FINITE, SMALL)
    with pytest.raises(Exception, match=r"^getAction observation must"):
        getAction(agent, [np.zeros((1, 4))])


def test_sim_takes_the_agent():
    agent = rlPPOAgent(OBS, FINITE, SMALL, seed=0)
    experience = sim(cp.make_cartpole("discrete", 50), agent, rlSimulationOptions(MaxSteps=50), seed=0)[0]
    assert set(np.unique(experience.Action["CartPole Action"])) <= {-10.0, 10.0}
    expected = [getAction(agent, o)[0] for o in experience.Observation["CartPole States"][:-1]]
    np.testing.assert_array_equal(experience.Action["CartPole Action"], expected)


def test_save_and_load_keep_the_agent(tmp_path):
    for make, act in ((rlDQNAgent, FINITE), (rlSACAgent, NUMERIC)):
        agent = make(OBS, act, SMALL, seed=0)
        path = save(str(tmp_path / make.__name__), agent)
        assert path.endswith(".zip")
        back = load(path)
        assert back.kind == agent.kind and back.AgentOptions == agent.AgentOptions
        assert repr(back.ObservationInfo) == repr(OBS)
        for obs in np.random.default_rng(1).uniform(-0.2, 0.2, (5, 4, 1)):
            np.testing.assert_array_equal(getAction(back, obs)[0], getAction(agent, obs)[0])


def test_options_map_onto_sb3():
    opts = rlDQNAgentOptions(MiniBatchSize=32, ExperienceBufferLength=1234, DiscountFactor=0.9, TargetUpdateFrequency=7)
    opts.CriticOptimizerOptions.LearnRate = 3e-4
    opts.EpsilonGreedyExploration.EpsilonDecay = 0.5
    model = rlDQNAgent(OBS, FINITE, opts, SMALL).model
    assert (model.batch_size, model.buffer_size, model.gamma, model.target_update_interval) == (32, 1234, 0.9, 7)
    assert model.learning_rate == 3e-4 and model.policy.net_arch == [16, 16]
    schedule = model.exploration_schedule
    schedule.t = 3  # MATLAB's per-step decay: 1 * (1 - 0.5) ** 3, floored at EpsilonMin
    assert schedule(0.0) == 0.125
    schedule.t = 100
    assert schedule(0.0) == 0.01
    ppo = rlPPOAgentOptions(
        ExperienceHorizon=64, ClipFactor=0.1, EntropyLossWeight=0.05, AdvantageEstimateMethod="finite-horizon"
    )
    model = rlPPOAgent(OBS, FINITE, ppo).model
    assert (model.n_steps, model.clip_range(1.0), model.ent_coef, model.gae_lambda) == (64, 0.1, 0.05, 1.0)
    assert model.policy.net_arch == [256, 256]  # MATLAB's default NumHiddenUnit


def test_noise_options_are_in_action_units():
    td3 = rlTD3AgentOptions()
    td3.ExplorationModel.StandardDeviation = 2.0  # 2 N of a +-10 N force: 0.2 on SB3's [-1, 1] scale
    model = rlTD3Agent(OBS, NUMERIC, td3, SMALL).model
    assert model.action_noise._sigma.tolist() == [0.2]
    assert model.target_policy_noise == pytest.approx(0.02) and model.target_noise_clip == pytest.approx(0.05)
    ddpg = rlDDPGAgent(OBS, NUMERIC, rlDDPGAgentOptions(SampleTime=0.02), SMALL).model
    assert ddpg.action_noise._dt == 0.02 and ddpg.action_noise._theta == 0.15


def test_dqn_on_a_continuous_action_is_refused():
    with raises_exactly(
        SpecError,
        "rlDQNAgent actionInfo must be an rlFiniteSetSpec (DQN chooses one of a finite set of actions), "
        "got rlNumericSpec. Use rlSACAgent, rlTD3Agent, rlDDPGAgent, rlPPOAgent or rlACAgent for a continuous action.",
    ):
        rlDQNAgent(OBS, NUMERIC)


def test_sac_on_a_finite_set_is_refused():
    with raises_exactly(
        SpecError,
        "rlSACAgent actionInfo must be an rlNumericSpec (SAC acts on a continuous action), got rlFiniteSetSpec. "
        "Use rlDQNAgent, rlPPOAgent or rlACAgent for a finite set of actions.",
    ):
        rlSACAgent(OBS, FINITE)


def test_unbounded_action_for_sac_is_refused():
    with raises_exactly(
        SpecError,
        "rlSACAgent actionInfo limits must be finite (SB3 squashes the action into them), got LowerLimit -inf, "
        "UpperLimit inf. Set the spec's LowerLimit and UpperLimit.",
    ):
        rlSACAgent(OBS, rlNumericSpec([1, 1]))


@pytest.mark.parametrize(
    "build, text",
    [
        (
            lambda: rlDQNAgent(OBS, FINITE, rlDQNAgentOptions(UseDoubleDQN=True)),
            "rlDQNAgentOptions UseDoubleDQN must be false (SB3's DQN has no double Q-learning), got True. "
            "Set UseDoubleDQN=False.",
        ),
        (
            lambda: rlDQNAgent(OBS, FINITE, rlAgentInitializationOptions(UseRNN=True)),
            "rlAgentInitializationOptions UseRNN must be false (SB3's algorithms here are feed-forward), got True. "
            "Set UseRNN=False.",
        ),
        (
            lambda: rlPPOAgent(OBS, FINITE, rlPPOAgentOptions(NormalizedAdvantageMethod="moving")),
            'rlPPOAgentOptions NormalizedAdvantageMethod must be "none" or "current" (SB3 normalizes per batch), '
            "got 'moving'. Set NormalizedAdvantageMethod=\"current\".",
        ),
    ],
)
def test_an_option_sb3_cannot_honour_is_refused_by_name(build, text):
    with raises_exactly(SpecError, text):
        build()


def test_actor_and_critic_learning_rates_must_agree():
    opts = rlSACAgentOptions()
    opts.ActorOptimizerOptions.LearnRate = 1e-4
    with raises_exactly(
        SpecError,
        "rlSACAgentOptions CriticOptimizerOptions.LearnRate must equal ActorOptimizerOptions.LearnRate (0.0001): "
        "SB3 trains actor and critic with one optimizer, got 0.01. Set both LearnRates to one value.",
    ):
        rlSACAgent(OBS, NUMERIC, opts)


def test_gradient_threshold_without_clipping_is_refused():
    opts = rlSACAgentOptions()
    opts.ActorOptimizerOptions.GradientThreshold = opts.CriticOptimizerOptions.GradientThreshold = 1.0
    with raises_exactly(
        SpecError,
        "rlSACAgentOptions ActorOptimizerOptions.GradientThreshold must be inf (SB3's algorithm clips no gradient), "
        "got 1.0. Set GradientThreshold=inf.",
    ):
        rlSACAgent(OBS, NUMERIC, opts)


def test_an_unknown_option_is_refused_by_name():
    with raises_exactly(
        SpecError,
        "EpsilonGreedyExploration option EpsilonDecayRate must be one of ['Epsilon', 'EpsilonDecay', 'EpsilonMin'], "
        "got EpsilonDecayRate. envbridge refuses an option rather than ignore it; drop it or use a listed one.",
    ):
        rlDQNAgentOptions().EpsilonGreedyExploration.EpsilonDecayRate = 0.1


def test_wrong_options_object_is_refused():
    with raises_exactly(
        SpecError,
        "rlDQNAgent options must be an rlAgentInitializationOptions or an rlDQNAgentOptions, got "
        "rlPPOAgentOptions(...). Build them with rlDQNAgentOptions(...).",
    ):
        rlDQNAgent(OBS, FINITE, rlPPOAgentOptions())


def test_hybrid_action_is_refused():
    with raises_exactly(
        SpecError,
        "rlPPOAgent actionInfo must be one rlFiniteSetSpec or one rlNumericSpec, got rlFiniteSetSpec rlNumericSpec. "
        "Use a single action channel (SB3 has no hybrid action).",
    ):
        rlPPOAgent(OBS, [rlFiniteSetSpec([0, 1]), rlNumericSpec([1, 1], LowerLimit=-1, UpperLimit=1)])


def test_get_observation_and_action_info_of_an_agent():
    from bridge.adapters.matlab import getActionInfo, getObservationInfo

    agent = rlDQNAgent(OBS, FINITE, SMALL)
    assert repr(getObservationInfo(agent)) == repr(OBS) and repr(getActionInfo(agent)) == repr(FINITE)
    getObservationInfo(agent).Name = "changed"  # a copy, as MATLAB's value semantics
    assert agent.ObservationInfo.Name == "CartPole States"

"""RLlib learns through the export (fixed seeds, tiny nets, small budgets; 2 cores), and RLlib PPO
on envbridge's CartPole is bit-for-bit RLlib PPO on Gymnasium's CartPole-v1."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from support import require

gymnasium = require("gymnasium")
ray = require("ray")
torch = require("torch")

from bridge.adapters.rllib import to_rllib, train_iteration  # noqa: E402
from bridge.adapters.rllib.train import TUNED, config_for, evaluate, greedy_policy, random_policy  # noqa: E402
from toy_envs.rllib_envs import OffsetChoice  # noqa: E402

pytestmark = pytest.mark.slow


def _run(config, iterations):
    algo = config.build_algo()
    try:
        for _ in range(iterations):
            train_iteration(algo)
        return algo, greedy_policy(algo)
    except BaseException:
        algo.stop()
        raise


def test_ppo_with_two_env_runners_solves_gridworld(ray_local):
    config = config_for("envbridge/GridWorld-v0", env_runners=2, **TUNED["PPO"])
    algo, policy = _run(config, 8)
    try:
        assert (
            evaluate(to_rllib("envbridge/GridWorld-v0"), policy, episodes=100)["terminated"] >= 0.9
        )  # GridWorld terminates at its goal
    finally:
        algo.stop()


def test_dqn_on_an_offset_discrete_action_gets_only_valid_actions(ray_local):
    config = config_for(OffsetChoice, "DQN", env_runners=0, num_steps_sampled_before_learning_starts=200)
    config.reporting(min_sample_timesteps_per_iteration=600)  # RLlib's 1,000 a round: 3 rounds took ~100 s
    algo, policy = _run(config, 1)
    try:
        env = algo.env_runner.env.unwrapped.envs[0].unwrapped.neutral.unwrapped
        assert env.seen == {1, 2, 3}  # every action RLlib took, shifted by the export: only valid ones
        # greedy: action 2 (exported as 1) at every step pays 10; random pays ~3.3
        assert evaluate(to_rllib(OffsetChoice()), policy, episodes=5)["return"] == 10.0
    finally:
        algo.stop()


def test_ppo_on_pointmass_beats_random(ray_local):
    config = config_for("envbridge/PointMass-v0", env_runners=2, **TUNED["PPO"])
    algo, policy = _run(config, 8)
    try:
        env = to_rllib("envbridge/PointMass-v0")
        trained, random = evaluate(env, policy, 50), evaluate(env, random_policy(env), 50)
        assert trained["return"] > random["return"] + 0.5 * abs(random["return"]), (trained, random)
    finally:
        algo.stop()


def _weights_after_two_iterations(env):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core import DEFAULT_MODULE_ID

    config = (
        PPOConfig()
        .environment(env)
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=200, minibatch_size=64, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16]})
        .debugging(seed=42)
    )
    algo = config.build_algo()
    try:
        returns = [train_iteration(algo)["env_runners"]["episode_return_mean"] for _ in range(2)]
        weights = algo.learner_group.get_weights()[DEFAULT_MODULE_ID]
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(weights[k]).tobytes() for k in sorted(weights)))
        return digest.hexdigest(), returns
    finally:
        algo.stop()


def test_fidelity_rllib_ppo_weights_are_bit_identical_on_gymnasium_and_envbridge_cartpole(ray_local):
    from bridge.adapters.rllib import register

    native = _weights_after_two_iterations("CartPole-v1")
    assert _weights_after_two_iterations("CartPole-v1") == native  # RLlib is deterministic here
    assert _weights_after_two_iterations(register("envbridge/CartPole-v0")) == native

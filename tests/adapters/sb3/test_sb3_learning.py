"""SB3 learns through the export (fixed seeds, tiny nets, small budgets; measured ~1.5 min on 2 cores)."""

from __future__ import annotations

import pytest
from support import require

gymnasium = require("gymnasium")
stable_baselines3 = require("stable_baselines3")
torch = require("torch")

from bridge.adapters.sb3 import to_sb3  # noqa: E402
from bridge.adapters.sb3.train import DEMO_N_ENVS, DEMO_PPO, evaluate, model_policy, random_policy, train  # noqa: E402

pytestmark = pytest.mark.slow
TINY = {"net_arch": [32, 32]}


@pytest.fixture(autouse=True)
def _one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny nets: one thread is faster than two contended ones
    yield
    torch.set_num_threads(threads)


def _compare(env_id, model, episodes=50):
    env = to_sb3(env_id)
    return evaluate(env, random_policy(env), episodes), evaluate(env, model_policy(model), episodes)


def test_ppo_solves_gridworld():
    model = train("PPO", "envbridge/GridWorld-v0", 20_000, seed=0, n_envs=DEMO_N_ENVS, **DEMO_PPO)
    _, trained = _compare("envbridge/GridWorld-v0", model, episodes=100)
    assert trained["success"] >= 0.9


def test_dqn_improves_over_random_on_gridworld():
    model = train(
        "DQN",
        "envbridge/GridWorld-v0",
        15_000,
        seed=0,
        learning_starts=1000,
        batch_size=64,
        gamma=0.95,
        exploration_fraction=0.5,
        exploration_final_eps=0.05,
        target_update_interval=250,
        learning_rate=1e-3,
        train_freq=4,
        gradient_steps=2,
        policy_kwargs=TINY,
    )
    random, trained = _compare("envbridge/GridWorld-v0", model)
    assert trained["return"] > random["return"] + 0.2 and trained["length"] < random["length"]


def test_td3_beats_random_on_pointmass():
    model = train("TD3", "envbridge/PointMass-v0", 3000, seed=0, learning_starts=200, policy_kwargs=TINY)
    random, trained = _compare("envbridge/PointMass-v0", model)
    assert trained["return"] > random["return"] / 2  # returns are negative distances: half the cost at most


def test_ppo_multi_input_policy_runs_on_multimodal():
    model = train("PPO", "envbridge/MultiModal-v0", 256, seed=0, n_steps=128, batch_size=64, n_epochs=1)
    assert type(model.policy).__name__ == "MultiInputActorCriticPolicy" and model.num_timesteps == 256
    env = to_sb3("envbridge/MultiModal-v0")
    obs, _ = env.reset(seed=0)
    assert env.action_space.contains(model.predict(obs, deterministic=True)[0])


def test_her_improves_success_on_goalreach():
    model = train("TD3", "envbridge/GoalReach-v0", 2500, seed=0, learning_starts=300, policy_kwargs=TINY)
    assert type(model.replay_buffer).__name__ == "HerReplayBuffer"
    random, trained = _compare("envbridge/GoalReach-v0", model, episodes=30)
    assert trained["success"] >= random["success"] + 0.5

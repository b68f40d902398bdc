"""The MATLAB cart-pole through the Gymnasium export: Gymnasium's and SB3's checkers, SB3's refusal
of a hybrid action, and PPO learning to balance (modern era)."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")
stable_baselines3 = require("stable_baselines3")

from bridge.adapters.gymnasium import to_gymnasium  # noqa: E402
from bridge.adapters.matlab import examples as cp  # noqa: E402
from bridge.adapters.matlab import rlFiniteSetSpec, rlFunctionEnv, rlNumericSpec, rlSimulationOptions, sim  # noqa: E402
from bridge.adapters.sb3 import make_vec_env, to_sb3  # noqa: E402
from gymnasium.utils.env_checker import check_env as gymnasium_check_env  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env as sb3_check_env  # noqa: E402

from bridge.errors import ConversionError  # noqa: E402


@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_export_passes_gymnasium_and_sb3_checkers(kind):
    export = to_gymnasium(cp.make_cartpole(kind, MaxStepsPerEpisode=500), image_layout="CHW")
    assert export.observation_space == gymnasium.spaces.Box(-np.inf, np.inf, (4, 1), np.float64)
    gymnasium_check_env(export, skip_render_check=True)
    sb3_check_env(to_gymnasium(cp.make_cartpole(kind, MaxStepsPerEpisode=500)), warn=False)


def test_export_truncates_at_max_steps_per_episode():
    export = to_gymnasium(cp.make_cartpole("continuous", MaxStepsPerEpisode=7))
    export.reset(seed=0)
    flags = [export.step(np.zeros((1, 1)))[2:4] for _ in range(7)]
    assert flags[-1] == (False, True) and all(f == (False, False) for f in flags[:-1])


def test_hybrid_action_is_refused_by_sb3_with_the_reason():
    env = rlFunctionEnv(
        rlNumericSpec([1, 1]),
        [rlFiniteSetSpec([-1, 1]), rlNumericSpec([1, 1], LowerLimit=0, UpperLimit=2)],
        lambda Action, Info: (Info + Action[0] * Action[1], 0.0, False, Info + Action[0] * Action[1]),
        lambda: (np.zeros((1, 1)), np.zeros((1, 1))),
    )
    assert sim(env, lambda obs: [-1.0, np.array([[0.5]])], rlSimulationOptions(MaxSteps=4))[0].NumSteps == 4
    with raises_exactly(
        ConversionError,
        "action space for SB3 must be a single Box, Discrete, MultiDiscrete or MultiBinary (SB3's policies have one action distribution), "
        "got a hybrid (discrete + continuous) action: Tuple(Discrete(2), Box(0.0, 2.0, (1, 1), float64)). "
        "Use the plain Gymnasium export (to_gymnasium) with an algorithm that supports it, or redesign the action as one MultiDiscrete or one Box.",
    ):
        to_sb3(env)


@pytest.mark.slow
def test_ppo_learns_to_balance_the_matlab_cartpole():
    import torch

    torch.set_num_threads(1)
    vec_env = make_vec_env(lambda: cp.make_cartpole("discrete", MaxStepsPerEpisode=500), n_envs=4, seed=0)
    model = PPO(
        "MlpPolicy",
        vec_env,
        n_steps=256,
        batch_size=128,
        n_epochs=10,
        learning_rate=1e-3,
        gamma=0.98,
        seed=0,
        verbose=0,
    )
    env = cp.make_cartpole("discrete", MaxStepsPerEpisode=500)
    coin = np.random.default_rng(0)
    random_len = np.mean(
        [
            e.NumSteps
            for e in sim(env, lambda obs: float(coin.choice([-10, 10])), rlSimulationOptions(NumSimulations=10), seed=0)
        ]
    )
    model.learn(total_timesteps=20_000)
    trained = sim(env, model, rlSimulationOptions(MaxSteps=500, NumSimulations=10), seed=100)
    trained_len = np.mean([e.NumSteps for e in trained])
    assert random_len < 40
    print(f"random {random_len:.1f} steps, PPO {trained_len:.1f} steps")
    assert trained_len > 5 * random_len, (trained_len, random_len)


def test_vector_env_feeds_sb3_as_one_batch():
    n = 8
    neutral = cp.make_vector_cartpole(n, MaxStepsPerEpisode=5)
    vec_env = make_vec_env(neutral, n_envs=n, seed=0)
    obs = vec_env.reset()
    # the one float policy: MATLAB's "double" reaches SB3 as float32, rounded to nearest
    assert obs.shape == (n, 4, 1) and obs.dtype == np.float32
    assert np.array_equal(obs, cp.make_vector_cartpole(n, MaxStepsPerEpisode=5).reset(seed=0)[0].astype(np.float32))
    for t in range(5):
        obs, rewards, dones, infos = vec_env.step(np.arange(n) % 2 if t % 2 else 1 - np.arange(n) % 2)
    assert dones.all() and rewards.tolist() == [1.0] * n
    assert all(info["TimeLimit.truncated"] and info["terminal_observation"].shape == (4, 1) for info in infos)
    assert not any(np.array_equal(info["terminal_observation"], o) for info, o in zip(infos, obs))  # restarted

"""SB3 (3.11, numpy 2) on a gym-0.23-only env hosted in 3.9 (numpy 1.19.5). ``python="legacy"`` is
$ENVBRIDGE_PYTHON_LEGACY (the modern tox env builds that host venv first: numpy and gym at the
legacy pins), else the README's ``.venv-legacy`` (bridge.hosted.pythons)."""

from __future__ import annotations

import os

import numpy as np
from support import require

import bridge

# the modern era's file (tox runs it in the modern env, which builds the legacy host): elsewhere it skips by era
require("stable_baselines3")
HERE = os.path.dirname(os.path.abspath(__file__))


def train_and_evaluate(env: bridge.Env) -> int:
    """SB3 PPO through to_sb3 on ``env``; how many of 10 seeded greedy episodes reach the goal."""
    sb3 = require("stable_baselines3")
    import torch
    from bridge.adapters.sb3 import to_sb3

    torch.set_num_threads(1)
    model = sb3.PPO("MlpPolicy", to_sb3(env), n_steps=256, batch_size=64, n_epochs=4, learning_rate=3e-3, seed=0)
    model.learn(3072)
    successes = 0
    for episode in range(10):
        obs, _ = env.reset(seed=100 + episode)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(int(action))
            done = terminated or truncated
        successes += int(terminated)
    return successes


def test_sb3_ppo_trains_on_a_gym_023_env_hosted_in_the_legacy_era():
    env = bridge.remote(os.path.join(HERE, "gym023_corridor.py:Corridor"), python="legacy")
    try:
        assert env.peer["numpy"].startswith("1.") and not np.__version__.startswith("1.")
        env.reset(seed=0)
        assert env.step(1)[4]["gym"] == "0.23.1"  # the host's gym 0.23 ran the step
        assert train_and_evaluate(env) >= 9  # a random walk reaches cell 5 within 30 steps about half the time
    finally:
        env.close()
    assert env.process.exitcode == 0


def test_sb3_ppo_trains_on_a_gym_021_style_env_hosted_in_the_legacy_era():
    env = bridge.remote(os.path.join(HERE, "gym021_corridor.py:corridor"), python="legacy")
    try:
        # reset(seed=s) is the env's seed(s), then its argument-less reset(): a seed gives its start again
        starts = [float(env.reset(seed=s)[0][0]) for s in range(8)]
        assert [float(env.reset(seed=s)[0][0]) for s in range(8)] == starts and len(set(starts)) > 1
        # walking left ends at the time limit: 0.21's done with info["TimeLimit.truncated"] is truncated
        env.reset(seed=0)
        ends = [env.step(0)[2:] for _ in range(30)]
        assert ends == [(False, False, {})] * 29 + [(False, True, {})]
        assert train_and_evaluate(env) >= 9
    finally:
        env.close()
    assert env.process.exitcode == 0


def test_a_modern_env_hosted_in_the_legacy_era_says_which_era_installs_it():
    from support import raises_exactly

    from bridge.errors import ContractError
    from bridge.hosted.client import host_python

    source = os.path.join(HERE, "hosted_envs.py:minigrid_pixels")  # Gymnasium + MiniGrid: modern-era packages
    with raises_exactly(
        ContractError,
        f"remote env {source!r} in the host must build the env without raising, got MissingDependencyError: the "
        f"package 'gymnasium' must be installed in {host_python('legacy')} for env {source}, got "
        "ModuleNotFoundError: No module named 'gymnasium'. The gymnasium runtime belongs to the modern era "
        "(Python 3.11); this is Python 3.9. In a Python 3.11 environment run: pip install 'envbridge[gymnasium]'. "
        "Fix what it says (the host's traceback is on RemoteEnv.host_traceback); every worker of this pool is closed.",
    ):
        bridge.remote(source, python="legacy")


def test_the_gym_023_class_itself_is_imported_in_the_host():
    """docs/remote.md's example: the raw gym class, no bridge.Env glue; the same run as the glue's."""
    raw = bridge.remote(os.path.join(HERE, "gym023_corridor.py:GymCorridor"), python="legacy")
    glued = bridge.remote(os.path.join(HERE, "gym023_corridor.py:Corridor"), python="legacy")
    try:
        assert raw.observation_space == glued.observation_space and raw.action_space == glued.action_space
        assert raw.max_episode_steps is None  # gym 0.23's class declares no TimeLimit
        first = [raw.reset(seed=3)[0], glued.reset(seed=3)[0]]
        np.testing.assert_array_equal(*first)
        for action in [1, 1, 0, 1, 1, 1, 1]:
            a, b = raw.step(action), glued.step(action)
            np.testing.assert_array_equal(a[0], b[0])
            assert a[1:4] == b[1:4] and a[4]["gym"] == b[4]["gym"] == "0.23.1"
    finally:
        raw.close()
        glued.close()

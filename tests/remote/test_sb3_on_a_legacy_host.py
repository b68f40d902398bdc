"""SB3 (3.11, numpy 2) on a gym-0.23-only env hosted in 3.9 (numpy 1.19.5). The legacy interpreter is
$ENVBRIDGE_PYTHON_LEGACY (the modern tox env builds that host venv first: numpy and gym at the
legacy pins), else the legacy venv next to this one."""

from __future__ import annotations

import os
import sys

import numpy as np
from support import require

import bridge

HERE = os.path.dirname(os.path.abspath(__file__))


def legacy_python() -> str:
    if os.environ.get("ENVBRIDGE_PYTHON_LEGACY"):
        return "legacy"
    path = os.path.join(os.path.dirname(sys.prefix), "legacy", "bin", "python")
    assert os.path.exists(path), f"set ENVBRIDGE_PYTHON_LEGACY to the legacy venv's python (no {path})"
    return path


def test_sb3_ppo_trains_on_a_gym_023_env_hosted_in_the_legacy_era():
    sb3 = require("stable_baselines3")
    import torch
    from bridge.adapters.sb3 import to_sb3

    torch.set_num_threads(1)
    env = bridge.remote(os.path.join(HERE, "gym023_corridor.py:Corridor"), python=legacy_python())
    try:
        assert env.peer["numpy"].startswith("1.") and not np.__version__.startswith("1.")
        _, info = env.reset(seed=0)
        assert env.step(1)[4]["gym"] == "0.23.1"  # the host's gym 0.23 ran the step
        venv = to_sb3(env)
        model = sb3.PPO("MlpPolicy", venv, n_steps=256, batch_size=64, n_epochs=4, learning_rate=3e-3, seed=0)
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
        assert successes >= 9  # a random walk reaches cell 5 within 30 steps about half the time
    finally:
        env.close()
    assert env.process.exitcode == 0

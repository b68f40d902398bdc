"""DreamerV2 (3.9, numpy 1.19, TensorFlow 2.6) through ``api.train`` on an env hosted in the modern
interpreter (3.11, numpy 2). The modern interpreter is $ENVBRIDGE_PYTHON_MODERN (the legacy tox env
builds that host venv first: numpy 2 and this checkout), else the modern venv next to this one."""

from __future__ import annotations

import os
import sys

import numpy as np
from support import require

import bridge

require("gym")
require("tensorflow")
require("dreamerv2")


def modern_python() -> str:
    if os.environ.get("ENVBRIDGE_PYTHON_MODERN"):
        return "modern"
    path = os.path.join(os.path.dirname(sys.prefix), "modern", "bin", "python")
    assert os.path.exists(path), f"set ENVBRIDGE_PYTHON_MODERN to the modern venv's python (no {path})"
    return path


class Log(bridge.Wrapper):
    """Keeps every observation and reward the host sent, episode by episode."""

    def __init__(self, env):
        super().__init__(env)
        self.episodes = []

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.episodes.append({"obs": [obs], "reward": [0.0]})
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.episodes[-1]["obs"].append(obs)
        self.episodes[-1]["reward"].append(reward)
        return obs, reward, terminated, truncated, info


def test_dreamerv2_trains_on_an_env_hosted_in_the_modern_era(tmp_path):
    from bridge.adapters.dreamerv2 import replay_episodes, train

    remote = bridge.remote("envbridge/GridWorld-v0", python=modern_python(), kwargs={"size": 3})
    assert remote.peer["numpy"].startswith("2.") and np.__version__.startswith("1.19")
    env = Log(bridge.TimeLimit(remote, 8))
    try:
        train(env, {"steps": 300}, preset="tiny", logdir=str(tmp_path))
    finally:
        remote.close()
    assert (tmp_path / "variables.pkl").stat().st_size > 0
    saved = replay_episodes(str(tmp_path))
    assert saved
    sent = {np.stack(ep["obs"]).astype(np.float32).tobytes(): ep["reward"] for ep in env.episodes}
    for episode in saved:  # each replay episode is one the host played, observation for observation
        key = episode["vector"].astype(np.float32).tobytes()
        assert key in sent
        np.testing.assert_array_equal(episode["reward"], np.asarray(sent[key], dtype=episode["reward"].dtype))

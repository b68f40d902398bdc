"""``envbridge train sb3`` takes every env name the other commands take (the one loader)."""

from __future__ import annotations

import sys

import pytest
from support import require

require("stable_baselines3")

from bridge.cli import main  # noqa: E402

WALK = """
import numpy as np

import bridge
from bridge import spaces


class Walk(bridge.Env):
    def __init__(self):
        self.observation_space = spaces.Box(0.0, 5.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2, start=1)
        self.x = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = 0
        return np.array([self.x], np.float32), {}

    def step(self, action):
        self.x = min(5, self.x + int(action) - 1)
        return np.array([self.x], np.float32), float(self.x == 5), self.x == 5, False, {}


def make_walk():
    return bridge.TimeLimit(Walk(), 30)
"""


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    (tmp_path / "walk.py").write_text(WALK)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield tmp_path
    sys.modules.pop("walk", None)


@pytest.mark.parametrize(
    "env, n_envs, saved",
    [
        ("walk:make_walk", "1", "a2c_walk_make_walk.zip"),
        ("walk.py:make_walk", "2", "a2c_walk.py_make_walk.zip"),
        ("bridge.examples:CartPoleVector", "4", "a2c_bridge.examples_CartPoleVector.zip"),
    ],
    ids=["module-attr", "file-attr", "vector-env-class"],
)
def test_train_sb3_takes_module_attr_and_file_names(user_folder, capsys, env, n_envs, saved):
    argv = ["train", "sb3", "--algo", "A2C", "--env", env, "--steps", "64", "--n-envs", n_envs]
    assert main(argv + ["--logdir", str(user_folder), "--no-progress"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    png = user_folder / (saved[: -len(".zip")] + ".png")
    assert line.startswith(f"A2C on {env}: 64 steps, mean return ")
    assert line.endswith(f"saved {user_folder / saved}; learning curve {png}") and png.is_file()

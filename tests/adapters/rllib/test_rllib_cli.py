"""``envbridge train rllib``: trains on RLlib's env runners, writes the learning curve, compares."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from support import require

require("ray")
require("matplotlib")
require("tqdm")

pytestmark = pytest.mark.slow


CORRIDOR = """
import numpy as np
import bridge
from bridge import spaces

class Corridor(bridge.Env):
    def __init__(self):
        self.observation_space = spaces.Box(0, 9, (1,), np.float32)
        self.action_space = spaces.Discrete(2, start=-1)
        self.pos = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = int(self.np_random.integers(0, 5))
        return np.array([self.pos], np.float32), {}

    def step(self, action):
        self.pos = min(max(self.pos + (1 if action == 0 else -1), 0), 9)
        done = self.pos == 9
        return np.array([self.pos], np.float32), float(done), done, False, {}

bridge.register("me/Corridor-v0", Corridor, max_episode_steps=50)
"""


def test_train_rllib_imports_the_users_module_in_every_env_runner_and_writes_the_curve(tmp_path):
    # the id exists only once corridor.py is imported: the remote runners must import it too
    (tmp_path / "corridor.py").write_text(CORRIDOR)
    out = str(tmp_path / "runs")
    command = [sys.executable, "-m", "bridge.cli", "train", "rllib", "--env", "me/Corridor-v0", "--import", "corridor"]
    command += ["--env-runners", "2", "--steps", "1000", "--logdir", out, "--no-progress"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    png = os.path.join(out, "rllib_ppo_me_Corridor-v0.png")
    lines = done.stdout.strip().splitlines()[-3:]
    assert lines[0] == f"PPO on me/Corridor-v0: 1000 steps on 2 env runners; learning curve {png}"
    ends = r"mean return -?\d+\.\d{3}, mean length \d+\.\d, terminated \d\.\d\d / truncated \d\.\d\d over 20 episodes"
    assert re.fullmatch(r"random: " + ends, lines[1]), lines[1]  # Corridor reports no is_success
    assert re.fullmatch(r"PPO \(greedy\): " + ends, lines[2]), lines[2]
    assert os.path.getsize(png) > 1000


def test_an_unknown_algorithm_is_refused_by_the_parser(tmp_path):
    command = [sys.executable, "-m", "bridge.cli", "train", "rllib", "--algo", "A3C"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert done.returncode == 2 and "invalid choice: 'A3C'" in done.stderr

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


def test_train_rllib_writes_the_curve_and_compares_with_random(tmp_path):
    out = str(tmp_path / "runs")
    command = [sys.executable, "-m", "bridge.cli", "train", "rllib", "--env", "envbridge/GridWorld-v0"]
    command += ["--env-runners", "1", "--steps", "1000", "--logdir", out, "--no-progress"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    png = os.path.join(out, "rllib_ppo_envbridge_GridWorld-v0.png")
    lines = done.stdout.strip().splitlines()[-3:]
    assert lines[0] == f"PPO on envbridge/GridWorld-v0: 1000 steps on 1 env runner; learning curve {png}"
    assert re.fullmatch(r"random: success \d\.\d\d, mean return -?\d+\.\d{3} over 20 episodes", lines[1])
    assert re.fullmatch(r"PPO: success \d\.\d\d, mean return -?\d+\.\d{3} over 20 episodes", lines[2])
    assert os.path.getsize(png) > 1000


def test_an_unknown_algorithm_is_refused_by_the_parser(tmp_path):
    command = [sys.executable, "-m", "bridge.cli", "train", "rllib", "--algo", "A3C"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert done.returncode == 2 and "invalid choice: 'A3C'" in done.stderr

"""gym 0.23's import side effects are contained, and check reports carry no ANSI colour codes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from support import require

require("gym")

import bridge  # noqa: E402
from bridge import spaces as S  # noqa: E402
from bridge.checker.report import Report  # noqa: E402

_PROBE = """
import warnings
import numpy  # adds its own filters
before = list(warnings.filters)
import bridge.adapters.gym
from bridge.adapters.gym import loader
print(warnings.filters == before, loader.notice.splitlines()[0] if loader.notice else "")
"""


def test_importing_the_gym_export_prints_no_banner_and_keeps_the_warning_filters(tmp_path):
    # run outside the checkout: `python -c` puts the current folder first, and the source tree's
    # bridge/ (without its adapters, which the wheel maps in) would shadow the installed package
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr.decode() == ""
    assert done.stdout.decode() == (
        "True Gym has been unmaintained since 2022 and does not support NumPy 2.0 amongst other critical functionality.\n"
    )


class Pusher(bridge.Env):
    """A [0, 2] action: gym's check_env warns through its colouring logger."""

    def __init__(self):
        self.observation_space = S.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = S.Box(0.0, 2.0, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_gym_warnings_reach_the_report_without_colour_codes():
    report = bridge.check(Pusher(), targets=["gym"])
    assert [p.message for p in report.problems] == [
        "gym.utils.env_checker.check_env must pass without warnings, got We recommend you to use a symmetric and "
        "normalized Box action space (range=[-1, 1]) cf https://stable-baselines3.readthedocs.io/en/master/guide/rl_tips.html."
    ]
    assert "\x1b" not in str(report) and "\x1b" not in report.to_json()


def test_a_problem_never_keeps_colour_codes():
    report = Report("env")
    found = report.add("gym", "warning", "check_env", "pass", "\x1b[33mWARN: box\x1b[0m", "\x1b[1mfix it\x1b[0m")
    assert (found.message, found.fix) == ("check_env must pass, got WARN: box.", "fix it.")
    assert "\x1b" not in json.dumps(report.to_dict())

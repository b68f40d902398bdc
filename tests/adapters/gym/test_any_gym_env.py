"""A gym 0.23 env class goes through ``from_gym`` wherever an env is named: ``--env
oldcorridor.py:OldCorridor``, ``gym:oldcorridor:OldCorridor`` (a class after the scheme), the exports."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from support import require

require("gym")

from bridge.adapters.gym import to_gym  # noqa: E402
from bridge.adapters.importers.source import ForeignEnv  # noqa: E402

from bridge.cli import main  # noqa: E402
from bridge.loading import resolve  # noqa: E402

OLD_CORRIDOR = """
import numpy as np
import gym
from gym import spaces


class OldCorridor(gym.Env):
    def __init__(self, length=5):
        self.length = length
        self.observation_space = spaces.Box(0, length, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.pos = 0

    def reset(self, seed=None, return_info=False, options=None):
        super().reset(seed=seed)
        self.pos = int(self.np_random.integers(0, 2))
        return np.array([self.pos], np.float32)

    def step(self, action):
        self.pos = max(0, min(self.length, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.length
        return np.array([self.pos], np.float32), float(done), done, {}
"""


@pytest.fixture
def corridor(tmp_path, monkeypatch):
    (tmp_path / "oldcorridor.py").write_text(OLD_CORRIDOR)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", sys.path + [str(tmp_path)])
    monkeypatch.delitem(sys.modules, "oldcorridor", raising=False)
    yield tmp_path
    sys.modules.pop("oldcorridor", None)


@pytest.mark.parametrize(
    "name", ["oldcorridor.py:OldCorridor", "oldcorridor:OldCorridor", "gym:oldcorridor:OldCorridor"]
)
def test_a_gym_class_is_imported_wherever_it_is_named(corridor, name):
    env, built = resolve(name, {"length": 3})
    assert isinstance(env, ForeignEnv) and built and env.env.length == 3 and env.spec.id == "OldCorridor"
    obs, _ = env.reset(seed=4)
    native = sys.modules["oldcorridor"].OldCorridor(length=3)
    np.testing.assert_array_equal(obs, native.reset(seed=4))
    env.close()
    exported = to_gym(name)
    np.testing.assert_array_equal(exported.reset(seed=4), obs)


def test_envbridge_check_takes_the_gym_class(corridor, capsys):
    assert main(["check", "oldcorridor.py:OldCorridor", "--target", "gym"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("envbridge check: OldCorridor\n") and "gym        pass" in out

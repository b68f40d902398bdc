"""from_gym takes gym's values only as exactly what they say (issue 35, item 8; bridge/values.py):
gym 0.23's done="False" (``bool("False")`` is True, so it became terminated), done=1, an
info["TimeLimit.truncated"] that is not a bool, a Discrete observation 2.7 or a str reward are refused
with the whole message, never cast; numpy bools and rewards pass."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

require("gym")

from bridge.adapters.gym.loader import load_gym  # noqa: E402
from bridge.adapters.importers.gym import from_gym  # noqa: E402

from bridge.errors import ContractError  # noqa: E402

gym = load_gym()
FIX = "Fix the env, or wrap it, so that it returns exactly the values its spaces and API declare."


class Says(gym.Env):
    """A gym 0.23 env (reset(seed=) returning obs, a 4-tuple step) returning what it is given."""

    observation_space = gym.spaces.Discrete(4)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, obs=1, reward=1.0, done=False, info=None):
        self.obs, self.reward, self.done, self.info = obs, reward, done, info or {}

    def reset(self, *, seed=None, return_info=False, options=None):
        super().reset(seed=seed)
        return self.obs

    def step(self, action):
        return self.obs, self.reward, self.done, dict(self.info)


STEP = "from_gym env's step()"
REFUSED = [
    ("done-str", {"done": "False"}, f"{STEP} done must be a bool (True or False), got 'False' (str)"),
    ("done-int", {"done": 1}, f"{STEP} done must be a bool (True or False), got 1 (int)"),
    ("done-none", {"done": None}, f"{STEP} done must be a bool (True or False), got None (NoneType)"),
    (
        "time-limit-str",
        {"done": True, "info": {"TimeLimit.truncated": "no"}},
        f"{STEP} info['TimeLimit.truncated'] must be a bool (True or False), got 'no' (str)",
    ),
    (
        "is-terminal-int",
        {"done": True, "info": {"is_terminal": 0}},
        f"{STEP} info['is_terminal'] must be a bool (True or False), got 0 (int)",
    ),
    ("reward-str", {"reward": "1"}, f"{STEP} reward must be a real number (an int or a float), got '1' (str)"),
    (
        "obs-float",
        {"obs": 2.7},
        "from_gym env's reset() observation must be an integer (an int or a numpy integer), got 2.7 (float)",
    ),
]


@pytest.mark.parametrize("step, text", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_gym_value_that_is_not_what_it_says_is_refused_not_cast(step, text):
    env = from_gym(Says(**step))
    with raises_exactly(ContractError, f"{text}. {FIX}"):
        env.reset(seed=0)
        env.step(np.int64(0))


@pytest.mark.parametrize(
    "step, want",
    [
        ({"done": np.bool_(True)}, (1.0, True, False)),
        ({"done": True, "info": {"TimeLimit.truncated": np.bool_(True)}}, (1.0, False, True)),
        ({"reward": np.float64(0.5), "obs": np.int64(3)}, (0.5, False, False)),
    ],
    ids=["numpy-done", "numpy-time-limit", "numpy-reward"],
)
def test_numpy_bools_and_numbers_are_what_they_say(step, want):
    env = from_gym(Says(**step))
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(np.int64(0))
    assert (reward, terminated, truncated) == want and type(terminated) is bool and "TimeLimit.truncated" not in info

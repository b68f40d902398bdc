"""The one rule for incoming values at from_gymnasium (issue 35, item 8; bridge/values.py): a value is
taken only as exactly what its space says. A Discrete observation 2.7 or '3', a MultiDiscrete(int32)
[1.5, 2.7], terminated="False", a str reward are refused with the whole message, never cast; values
that are exactly what the space says (numpy integers, numpy bools, numpy float rewards) pass."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")

import bridge  # noqa: E402
from bridge.errors import ContractError  # noqa: E402

G = gymnasium.spaces
FIX = "Fix the env, or wrap it, so that it returns exactly the values its spaces and API declare."


class Says(gymnasium.Env):
    """Returns ``obs`` from reset and step, and the step's other values as given."""

    action_space = G.Discrete(2)

    def __init__(self, space, obs, reward=1.0, terminated=False, truncated=False, out="default"):
        self.observation_space, self.obs = space, obs
        self.reward, self.terminated, self.truncated, self.out = reward, terminated, truncated, out

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.obs, {}

    def step(self, action):
        if self.out != "default":
            return self.out
        return self.obs, self.reward, self.terminated, self.truncated, {}


D4, MD32 = G.Discrete(4), G.MultiDiscrete([3, 3], dtype=np.int32)
INT = "must be an integer (an int or a numpy integer), got"
REFUSED = [
    ("discrete-float", D4, 2.7, {}, f"from_gymnasium env's reset() observation {INT} 2.7 (float)"),
    ("discrete-str", D4, "3", {}, f"from_gymnasium env's reset() observation {INT} '3' (str)"),
    ("discrete-bool", D4, True, {}, f"from_gymnasium env's reset() observation {INT} True (bool)"),
    (
        "discrete-float-array",
        D4,
        np.array(2.0),
        {},
        f"from_gymnasium env's reset() observation {INT} array(2.) (ndarray)",
    ),
    (
        "discrete-huge",
        D4,
        2**70,
        {},
        "from_gymnasium env's reset() observation must be an integer int64 holds, got 1180591620717411303424 (int)",
    ),
    (
        "multidiscrete-floats",
        MD32,
        np.array([1.5, 2.7]),
        {},
        "from_gymnasium env's reset() observation must hold integers, got an array of dtype float64",
    ),
    (
        "dict-discrete",
        G.Dict({"a": D4}),
        {"a": 1.0},
        {},
        f"from_gymnasium env's reset() observation['a'] {INT} 1.0 (float)",
    ),
    (
        "tuple-multidiscrete",
        G.Tuple([G.Box(0, 1, (1,)), MD32]),
        (np.zeros(1, np.float32), ["1", "2"]),
        {},
        "from_gymnasium env's reset() observation[1] must hold integers, got ['1', '2'] (list)",
    ),
    (
        "terminated-str",
        D4,
        1,
        {"terminated": "False"},
        "from_gymnasium env's step() terminated must be a bool (True or False), got 'False' (str)",
    ),
    (
        "terminated-int",
        D4,
        1,
        {"terminated": 1},
        "from_gymnasium env's step() terminated must be a bool (True or False), got 1 (int)",
    ),
    (
        "truncated-none",
        D4,
        1,
        {"truncated": None},
        "from_gymnasium env's step() truncated must be a bool (True or False), got None (NoneType)",
    ),
    (
        "reward-str",
        D4,
        1,
        {"reward": "0.25"},
        "from_gymnasium env's step() reward must be a real number (an int or a float), got '0.25' (str)",
    ),
    (
        "reward-bool",
        D4,
        1,
        {"reward": True},
        "from_gymnasium env's step() reward must be a real number (an int or a float), got True (bool)",
    ),
    (
        "reward-array",
        D4,
        1,
        {"reward": np.ones(2)},
        "from_gymnasium env's step() reward must be a real number (an int or a float), got array([1., 1.]) (ndarray)",
    ),
    (
        "reward-inexact",
        D4,
        1,
        {"reward": 2**60 + 1},
        "from_gymnasium env's step() reward must be a real number a float holds exactly, got 1152921504606846977 (int)",
    ),
    (
        "info-none",
        D4,
        1,
        {"out": (1, 1.0, False, False, None)},
        "from_gymnasium env's step() info must be a dict, got NoneType",
    ),
    (
        "step-3-tuple",
        D4,
        1,
        {"out": (1, 1.0, False)},
        "from_gymnasium env's step() must return (observation, reward, terminated, truncated, info), or gym's 4-tuple, got a tuple of 3",
    ),
]


@pytest.mark.parametrize("space, obs, step, text", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_value_that_is_not_what_its_space_says_is_refused_not_cast(space, obs, step, text):
    env = bridge.from_gymnasium(Says(space, obs, **step))
    with raises_exactly(ContractError, f"{text}. {FIX}"):
        env.reset(seed=0)
        env.step(np.int64(0))


ACCEPTED = [
    ("numpy-int32-discrete", D4, np.int32(2), {}, np.int64(2), (1.0, False, False)),
    ("0-d-int-discrete", D4, np.array(3, np.int16), {}, np.int64(3), (1.0, False, False)),
    ("int32-multidiscrete", MD32, np.array([1, 2], np.int32), {}, np.array([1, 2]), (1.0, False, False)),
    (
        "numpy-flags-and-reward",
        D4,
        1,
        {"terminated": np.bool_(True), "reward": np.float32(0.5)},
        np.int64(1),
        (0.5, True, False),
    ),
    ("int-reward", D4, 1, {"reward": 2, "truncated": np.True_}, np.int64(1), (2.0, False, True)),
]


@pytest.mark.parametrize("space, obs, step, want, rest", [r[1:] for r in ACCEPTED], ids=[r[0] for r in ACCEPTED])
def test_a_value_that_is_exactly_what_its_space_says_passes(space, obs, step, want, rest):
    env = bridge.from_gymnasium(Says(space, obs, **step))
    env.reset(seed=0)
    got, reward, terminated, truncated, _ = env.step(np.int64(0))
    assert type(got) is type(want) and np.array_equal(got, want) and np.asarray(got).dtype == np.int64
    assert (reward, terminated, truncated) == rest
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool


class ResetSaysNoInfo(Says):
    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.obs, None


@pytest.mark.parametrize(
    "env, text",
    [
        (ResetSaysNoInfo(D4, 1), "from_gymnasium env's reset() info must be a dict, got NoneType"),
        (
            Says(D4, 1, out=None),
            "from_gymnasium env's step() must return (observation, reward, terminated, truncated, info), or gym's 4-tuple, got NoneType",
        ),
    ],
    ids=["reset-info-none", "step-none"],
)
def test_a_reset_or_step_of_the_wrong_shape_is_refused(env, text):
    imported = bridge.from_gymnasium(env)
    with raises_exactly(ContractError, f"{text}. {FIX}"):
        imported.reset(seed=0)
        imported.step(np.int64(0))

"""from_dm_env takes a value only as exactly what its spec says (issue 35, item 5; bridge/values.py):
an int32 spec with 2**40 or 2.7, a float32 spec with 1e300 (or a value that rounds), a DiscreteArray
2.9, a str reward, a LAST step whose discount is NaN, negative or above 1 are refused with the whole
message, never cast or read as an episode end; exact values pass, LAST discounts 0 and 1 keep their
meaning (terminated, truncated)."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

dm_env = require("dm_env")

from bridge.adapters.dm_env.importer import from_dm_env  # noqa: E402

from bridge.errors import ContractError  # noqa: E402

specs = dm_env.specs
FIX = "Fix the env, or wrap it, so that it returns exactly the values its spaces and API declare."
I32 = specs.Array((2,), np.int32)
F32 = specs.BoundedArray((2,), np.float32, -1.0, 1.0)
GOOD = np.array([3, 4], np.int32)


class Says(dm_env.Environment):
    """Observes ``obs``; its step is MID, or LAST with ``discount`` when ``last``."""

    def __init__(self, spec, obs, reward=1.0, discount=1.0, last=False, out=None):
        self.spec, self.obs, self.reward, self.discount, self.last, self.out = spec, obs, reward, discount, last, out

    def observation_spec(self):
        return self.spec

    def action_spec(self):
        return specs.DiscreteArray(2)

    def reset(self):
        return dm_env.restart(self.obs)

    def step(self, action):
        if self.out is not None:
            return self.out
        kind = dm_env.StepType.LAST if self.last else dm_env.StepType.MID
        return dm_env.TimeStep(kind, self.reward, self.discount, self.obs)


RESET = "from_dm_env env's reset() observation"
LAST = "from_dm_env env's step() discount of a LAST step must be in [0, 1] (0: terminated, above 0: truncated), got"
REFUSED = [
    (
        "int32-2**40",
        I32,
        np.array([1, 2**40]),
        {},
        f"{RESET} must hold int32 values exactly (integers in -2147483648..2147483647), got 1099511627776 (int64) at [1]",
    ),
    ("int32-2.7", I32, np.array([2.7, 1.0]), {}, f"{RESET} must hold integers, got an array of dtype float64"),
    (
        "float32-1e300",
        F32,
        np.array([0.5, 1e300]),
        {},
        f"{RESET} must hold finite float32 values (magnitude at most 3.4028234663852886e+38), got 1e+300 (float64) at [1]",
    ),
    (
        "float32-rounds",
        F32,
        np.array([0.1, 0.5]),
        {},
        f"{RESET} must hold float32 values exactly (a cast that rounds is refused), got 0.1 (float64) at [0]",
    ),
    ("int32-str", I32, ["1", "2"], {}, f"{RESET} must hold integers, got ['1', '2'] (list)"),
    (
        "discrete-2.9",
        specs.DiscreteArray(4),
        2.9,
        {},
        f"{RESET} must be an integer (an int or a numpy integer), got 2.9 (float)",
    ),
    (
        "discrete-str",
        specs.DiscreteArray(4),
        "2",
        {},
        f"{RESET} must be an integer (an int or a numpy integer), got '2' (str)",
    ),
    (
        "dict-key-missing",
        {"a": I32},
        {"b": GOOD},
        {},
        f"{RESET} must be a dict with the keys ['a'], got the keys ['b']",
    ),
    ("last-nan", I32, GOOD, {"last": True, "discount": float("nan")}, f"{LAST} nan"),
    ("last-negative", I32, GOOD, {"last": True, "discount": -1.0}, f"{LAST} -1.0"),
    ("last-above-1", I32, GOOD, {"last": True, "discount": 1.5}, f"{LAST} 1.5"),
    (
        "last-str",
        I32,
        GOOD,
        {"last": True, "discount": "0"},
        "from_dm_env env's step() discount of a LAST step must be a real number (an int or a float), got '0' (str)",
    ),
    (
        "reward-str",
        I32,
        GOOD,
        {"reward": "0.5"},
        "from_dm_env env's step() reward must be a real number (an int or a float), got '0.5' (str)",
    ),
    (
        "reward-none",
        I32,
        GOOD,
        {"reward": None},
        "from_dm_env env's step() reward must be a real number (an int or a float), got None (NoneType)",
    ),
    ("not-a-timestep", I32, GOOD, {"out": (1, 2)}, "from_dm_env env's step() must return a dm_env.TimeStep, got tuple"),
]


@pytest.mark.parametrize("spec, obs, step, text", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_value_that_is_not_what_its_spec_says_is_refused_not_cast(spec, obs, step, text):
    env = from_dm_env(Says(spec, obs, **step))
    with raises_exactly(ContractError, f"{text}. {FIX}"):
        env.reset()
        env.step(np.int64(0))


ACCEPTED = [
    ("int32", I32, GOOD, {}, GOOD, (1.0, False, False)),
    ("int-list", I32, [3, 4], {}, GOOD, (1.0, False, False)),
    (
        "float32-from-exact-float64",
        F32,
        np.array([0.5, -1.0]),
        {},
        np.array([0.5, -1.0], np.float32),
        (1.0, False, False),
    ),
    ("discrete-int32", specs.DiscreteArray(4), np.int32(2), {}, np.int64(2), (1.0, False, False)),
    (
        "last-0-terminated",
        I32,
        GOOD,
        {"last": True, "discount": 0.0, "reward": np.float32(2.5)},
        GOOD,
        (2.5, True, False),
    ),
    ("last-1-truncated", I32, GOOD, {"last": True, "discount": np.float64(1.0), "reward": 3}, GOOD, (3.0, False, True)),
]


@pytest.mark.parametrize("spec, obs, step, want, rest", [r[1:] for r in ACCEPTED], ids=[r[0] for r in ACCEPTED])
def test_a_value_that_is_exactly_what_its_spec_says_passes(spec, obs, step, want, rest):
    env = from_dm_env(Says(spec, obs, **step))
    env.reset()
    got, reward, terminated, truncated, _ = env.step(np.int64(0))
    assert np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want)
    assert (reward, terminated, truncated) == rest and type(reward) is float


FACTORY_FIX = (
    "Pass a factory of the seed that returns the env, e.g. lambda seed: suite.load(..., task_kwargs={'random': seed})."
)


@pytest.mark.parametrize(
    "source, text",
    [
        (
            "x",
            "from_dm_env env must be a dm_env.Environment or a factory make(seed) -> Environment, got str. "
            "Pass e.g. from_dm_env(suite.load('cartpole', 'swingup')), or a factory of the seed.",
        ),
        (
            lambda seed: None,
            "from_dm_env factory make(0) must return a dm_env.Environment, got NoneType. "
            "Return the dm_env.Environment from the factory.",
        ),
        (
            lambda: Says(I32, GOOD),
            "from_dm_env factory make(0) must build an env, got TypeError: <lambda>() takes 0 positional "
            f"arguments but 1 was given. {FACTORY_FIX}",
        ),
    ],
    ids=["a-str", "factory-returns-none", "factory-without-seed"],
)
def test_a_source_that_is_not_an_env_or_a_factory_is_a_spec_error(source, text):
    from bridge.errors import SpecError

    with raises_exactly(SpecError, text):
        from_dm_env(source)


class BoolSpecCloseRaises(Says):
    def close(self):
        raise OSError("close failed")


def test_a_close_that_raises_after_a_refused_spec_is_reported_beside_the_refusal():
    from bridge.errors import ConversionError

    text = (
        "observation must have a numeric dtype (dm_env bool specs have no neutral twin), got bool. "
        "Declare it as an integer BoundedArray(minimum=0, maximum=1) in the env."
    )
    note = "Closing the env the factory built after this error also failed: OSError: close failed"
    with raises_exactly(ConversionError, f"{text}\n{note}") as refused:
        from_dm_env(lambda seed: BoolSpecCloseRaises(specs.Array((), bool), False))
    assert str(refused.value) == text

"""to_dm_env: dm_env's own EnvironmentTestMixin on every example, the discount rule of episode ends
(through to_dm_env and back through from_dm_env), round trips, and every refusal's whole message."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require
from toy_envs.scripted import EndsAsTold

dm_env = require("dm_env")
test_utils = require("dm_env.test_utils")
absltest = require("absl.testing.absltest")

from bridge.adapters.dm_env import to_dm_env, to_dm_spec  # noqa: E402
from bridge.adapters.dm_env.importer import from_dm_env, to_neutral_space  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.errors import ConversionError, SpecError  # noqa: E402
from bridge.examples import EXAMPLE_IDS  # noqa: E402

specs = dm_env.specs
IDS = sorted(EXAMPLE_IDS)


def _mixin_case(env_id: str) -> type:
    """dm_env's own test mixin over the export of ``env_id``, with actions that reach LAST."""

    class Case(test_utils.EnvironmentTestMixin, absltest.TestCase):
        def make_object_under_test(self):
            return to_dm_env(bridge.make(env_id), seed=0)

        def make_action_sequence(self):
            neutral = self.environment.neutral
            rng = np.random.default_rng(0)
            for _ in range(2 * EXAMPLE_IDS[env_id][1] + 5):  # two capped episodes at least
                yield self.environment.action_lowering.encode(neutral.action_space.sample(rng))

    Case.__name__ = f"Mixin_{env_id.split('/')[1].replace('-', '_')}"
    return Case


@pytest.mark.parametrize("env_id", IDS)
def test_dm_envs_own_test_mixin_passes_on_every_example(env_id):
    import unittest

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_mixin_case(env_id))
    result = unittest.TestResult()
    suite.run(result)
    assert result.testsRun >= 4 and result.wasSuccessful(), result.failures + result.errors


@pytest.mark.parametrize(
    "end, step_type, discount, flags",
    [
        ((True, False), "LAST", 0.0, (True, False)),
        ((False, True), "LAST", 1.0, (False, True)),
        ((True, True), "LAST", 0.0, (True, False)),  # termination wins
        ((False, False), "MID", 1.0, (False, False)),
    ],
    ids=["terminated", "truncated", "both", "neither"],
)
def test_each_episode_end_through_to_dm_env_and_back_through_from_dm_env(end, step_type, discount, flags):
    exported = to_dm_env(EndsAsTold([end, (True, False)]))
    assert exported.reset(seed=1).first()
    step = exported.step(np.int64(2))  # DiscreteArray 2 is the neutral action 1 (start=-1)
    assert (step.step_type, step.discount, step.reward) == (dm_env.StepType[step_type], discount, 0.5)
    assert exported.neutral.unwrapped.actions == [1]
    back = from_dm_env(to_dm_env(EndsAsTold([end, (True, False)])))
    back.reset(seed=1)
    assert back.step(np.int64(2))[2:4] == flags


def test_a_step_after_last_and_on_a_fresh_env_starts_an_episode():
    exported = to_dm_env(EndsAsTold([(False, True)] * 3))
    assert exported.step(np.int64(0)).first()  # fresh: step() resets
    assert exported.step(np.int64(0)).last()
    assert exported.step(np.int64(0)).first()  # after LAST: step() resets
    assert exported.neutral.unwrapped.actions == [-1]


@pytest.mark.parametrize("env_id", IDS)
def test_from_dm_env_of_to_dm_env_equals_the_env_step_for_step(env_id):
    direct, back = bridge.make(env_id), from_dm_env(to_dm_env(bridge.make(env_id)))
    assert back.action_space == direct.action_space
    rng = np.random.default_rng(7)
    a, b = direct.reset(seed=5)[0], back.reset(seed=5)[0]
    for _ in range(60):
        _assert_same(a, b)
        action = direct.action_space.sample(rng)
        a, ra, ta, ua, _ = direct.step(action)
        b, rb, tb, ub, _ = back.step(action)
        assert (ra, ta, ua and not ta) == (rb, tb, ub), (ra, ta, ua, rb, tb, ub)
        if ta or ua:
            a, b = direct.reset()[0], back.reset()[0]


def _assert_same(a, b):
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _assert_same(a[k], b[k])
    else:
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)


def test_specs_from_neutral_spaces():
    dict_spec = to_dm_spec(
        spaces.Dict(x=spaces.Tuple([spaces.MultiDiscrete([3, 4], start=[1, -2]), spaces.MultiBinary(2)]))
    )
    md, mb = dict_spec["x"]
    assert isinstance(md, specs.BoundedArray) and md.minimum.tolist() == [1, -2] and md.maximum.tolist() == [3, 1]
    assert (mb.dtype, mb.shape, mb.minimum.tolist(), mb.maximum.tolist()) == (np.int8, (2,), 0, 1)
    discrete = to_dm_spec(spaces.Discrete(3, start=-1), "action")
    assert isinstance(discrete, specs.DiscreteArray) and (discrete.num_values, discrete.name) == (3, "action")


def test_an_unknown_space_is_refused_whole():
    abstract = ("_node_dict", "_params", "mismatch", "sample")
    text = type("Text", (spaces.Space,), {name: lambda *a: None for name in abstract})
    odd = spaces.Dict(a=spaces.Box(0, 1, (1,)))
    odd.spaces["a"] = object.__new__(text)
    with raises_exactly(
        ConversionError,
        "observation['a'] must be a bridge space dm_env can hold, got Text. "
        "Use Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple.",
    ):
        to_dm_spec(odd)


def test_reverse_lowering_table():
    # docs/dm_env.md's table, one row each
    assert to_neutral_space(specs.DiscreteArray(5)) == spaces.Discrete(5)
    bounded = to_neutral_space(specs.BoundedArray((2,), np.float32, [-1, 0], [1, 2]))
    assert bounded == spaces.Box(np.array([-1, 0], np.float32), np.array([1, 2], np.float32), (2,), np.float32)
    unbounded = to_neutral_space(specs.Array((3,), np.float64))
    assert unbounded == spaces.Box(-np.inf, np.inf, (3,), np.float64)
    ints = to_neutral_space(specs.Array((), np.int32))
    assert ints == spaces.Box(np.iinfo(np.int32).min, np.iinfo(np.int32).max, (), np.int32)
    image = to_neutral_space(specs.BoundedArray((4, 5, 3), np.uint8, 0, 255))
    assert isinstance(image, spaces.Image) and image.shape == (4, 5, 3)
    nested = to_neutral_space({"b": specs.Array((1,), np.float32), "a": (specs.DiscreteArray(2),)})
    assert list(nested.keys()) == ["b", "a"] and nested["a"] == spaces.Tuple([spaces.Discrete(2)])
    assert to_neutral_space(specs.DiscreteArray(4, dtype=np.int32)) == spaces.Discrete(4)  # any integer dtype


def test_a_bool_spec_is_refused_whole():
    with raises_exactly(
        ConversionError,
        "observation['done'] must have a numeric dtype (dm_env bool specs have no neutral twin), got bool. "
        "Declare it as an integer BoundedArray(minimum=0, maximum=1) in the env.",
    ):
        to_neutral_space({"done": specs.Array((), bool)})


def test_something_not_a_spec_is_refused_whole():
    with raises_exactly(
        ConversionError,
        "action must be a dm_env spec, got str. Use specs.Array, BoundedArray or DiscreteArray "
        "(nested in dicts or tuples).",
    ):
        to_neutral_space("box", "action")


class _VectorReward(dm_env.Environment):
    def observation_spec(self):
        return specs.Array((1,), np.float32)

    def action_spec(self):
        return specs.DiscreteArray(2)

    def reward_spec(self):
        return specs.Array((2,), np.float64)

    def reset(self):
        return dm_env.restart(np.zeros(1, np.float32))

    def step(self, action):
        return dm_env.transition(np.zeros(2), np.zeros(1, np.float32))


def test_a_vector_reward_is_refused_whole():
    with raises_exactly(
        ConversionError,
        "reward_spec() must be a scalar specs.Array, got shape (2,). Sum or pick one reward in a wrapper of the dm_env env.",
    ):
        from_dm_env(_VectorReward())


def test_a_seeded_reset_of_an_instance_is_refused_whole():
    class Plain(_VectorReward):
        def reward_spec(self):
            return specs.Array((), np.float64)

    source = from_dm_env(Plain())
    with raises_exactly(
        SpecError,
        "from_dm_env(env) reset seed must be None for a dm_env instance, got 3. Pass a factory instead: "
        "from_dm_env(lambda seed: suite.load(domain, task, task_kwargs={'random': seed})).",
    ):
        source.reset(seed=3)
    assert source.reset()[0].tolist() == [0.0]


def test_the_check_profile_passes_every_example():
    for env_id in IDS:
        report = bridge.check(bridge.make(env_id), targets=["dm_env"])
        assert report.ok, str(report)


def test_a_snapshot_restores_inside_the_episode():
    exported = to_dm_env(bridge.make("envbridge/GridWorld-v0"))
    exported.reset(seed=2)
    exported.step(np.int64(1))
    snap = exported.clone_state()
    first = exported.step(np.int64(3))
    exported.restore_state(snap)
    again = exported.step(np.int64(3))
    assert again.step_type == first.step_type and np.array_equal(again.observation, first.observation)

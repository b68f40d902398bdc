"""Lowering rules, refusals, invalid actions, and the neutral-vs-export differential replay."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")

from bridge.adapters.gymnasium import to_gymnasium  # noqa: E402
from bridge.adapters.gymnasium.lowering import FLAT, lower  # noqa: E402
from toy_envs import lowering as test_envs  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.examples import EXAMPLE_IDS  # noqa: E402

test_envs.register()

ALL_IDS = sorted(EXAMPLE_IDS) + sorted(test_envs.LOWERING_ENVS) + ["envbridge-test/Hybrid-v0"]


def _equal(a, b) -> bool:
    """Bit-identical nested values, dtype and shape included."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- the rules -----------------------------------------------------------------------------------
def test_discrete_with_start_is_offset_to_zero_and_back():
    export = to_gymnasium("envbridge-test/ShiftedDiscrete-v0")
    assert export.action_space == gymnasium.spaces.Discrete(3)
    export.reset(seed=0)
    export.step(np.int64(0))
    assert export.neutral.unwrapped.last == -1 and type(export.neutral.unwrapped.last) is np.int64
    export.step(2)
    assert export.neutral.unwrapped.last == 1
    # the guard's table, checked or not: every runtime index to its neutral np.int64
    shifted = lower(spaces.Discrete(3, start=-1), path="action", options={})
    plain = lower(spaces.Discrete(3), path="action", options={})
    assert shifted.table == {0: -1, 1: 0, 2: 1} and plain.table == {0: 0, 1: 1, 2: 2}
    assert plain.decode(np.int64(2)) == 2


def test_2d_multidiscrete_is_flattened_and_reshaped_back():
    export = to_gymnasium("envbridge-test/GridAction-v0")
    assert export.action_space == gymnasium.spaces.MultiDiscrete([3, 2, 2, 4])
    export.reset(seed=0)
    export.step(np.array([2, 1, 1, 3]))
    last = export.neutral.unwrapped.last
    assert last.dtype == np.int64 and last.tolist() == [[1, 1], [1, 4]]


def test_tuple_stays_a_tuple_and_maps_back():
    export = to_gymnasium("envbridge-test/TupleObs-v0")
    space = export.observation_space
    assert isinstance(space, gymnasium.spaces.Tuple) and len(space) == 3
    assert space[1] == gymnasium.spaces.Discrete(11) and space[2]["flag"] == gymnasium.spaces.MultiBinary(4)
    obs, _ = export.reset(seed=3)
    neutral = export.neutral.unwrapped._obs()
    assert type(obs) is tuple and obs[1] == neutral[1] + 5 and obs[1].dtype == np.int64
    assert _equal(export.observation_lowering.decode(obs), neutral)


def test_sb3s_flat_presentation_is_one_level_dict_and_maps_back():
    export = lower(
        spaces.Tuple([spaces.Box(0, 1, (2,)), spaces.Discrete(11, start=5), spaces.Dict(flag=spaces.MultiBinary(4))]),
        path="observation",
        options={FLAT: True},
    )
    assert list(export.space.spaces) == ["0", "1", "2/flag"]
    value = (np.zeros(2, np.float32), np.int64(7), {"flag": np.ones(4, np.int8)})
    assert export.encode(value)["1"] == 2 and _equal(export.decode(export.encode(value)), value)


@pytest.mark.parametrize("layout, shape", [("CHW", (3, 40, 48)), ("HWC", (40, 48, 3))])
def test_image_is_uint8_box_in_the_requested_layout(layout, shape):
    export = to_gymnasium("envbridge-test/ImageObs-v0", image_layout=layout)
    assert export.observation_space == gymnasium.spaces.Box(0, 255, shape, np.uint8)
    obs, _ = export.reset(seed=1)
    assert obs.shape == shape and obs.dtype == np.uint8 and obs in export.observation_space
    assert _equal(export.observation_lowering.decode(obs), export.neutral.unwrapped._obs())


def test_values_have_the_exported_types():
    export = to_gymnasium("envbridge/MultiModal-v0")
    obs, _ = export.reset(seed=0)
    obs, reward, terminated, truncated, info = export.step(np.int64(2))
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    for key, space in export.observation_space.spaces.items():
        assert np.asarray(obs[key]).dtype == space.dtype, key
    assert obs in export.observation_space


def test_hybrid_action_is_fine_for_plain_gymnasium():
    export = to_gymnasium("envbridge-test/Hybrid-v0")
    export.reset(seed=0)
    pos = export.neutral.unwrapped.pos
    export.step((np.int64(1), np.array([0.0], np.float32)))  # a Tuple action, as Gymnasium's
    assert export.neutral.unwrapped.pos == min(pos + 1, 10)


def test_normalize_actions_exposes_unit_box_and_maps_to_the_bounds():
    class Asymmetric(test_envs.ShiftedDiscreteEnv):
        def __init__(self):
            super().__init__()
            self.action_space = spaces.Box(np.array([0.0, -2.0]), np.array([4.0, 6.0]), (2,), np.float32)

        def step(self, action):
            self.last = action
            return self._move(0)

    export = to_gymnasium(Asymmetric(), normalize_actions=True)
    assert export.action_space == gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    export.reset(seed=0)
    export.step(np.array([-1.0, 1.0], np.float32))
    assert export.neutral.last.tolist() == [0.0, 6.0] and export.neutral.last.dtype == np.float32
    export.step(np.array([0.0, 0.0], np.float32))
    assert export.neutral.last.tolist() == [2.0, 2.0]


# -- refusals (whole messages) -----------------------------------------------------------------------
class _SpaceEnv(test_envs.ShiftedDiscreteEnv):
    def __init__(self, observation_space=None, action_space=None):
        super().__init__()
        self.observation_space = observation_space or self.observation_space
        self.action_space = action_space or self.action_space


def test_refuses_an_empty_dict_naming_its_path():
    env = _SpaceEnv(spaces.Dict(pos=spaces.Box(0, 1, (1,)), extra=spaces.Dict()))
    with raises_exactly(
        bridge.ConversionError,
        "observation['extra'] must have at least one entry, got Dict(). Drop the empty entry or give it a space.",
    ):
        to_gymnasium(env)


def test_refuses_keys_that_collide_when_flattened():
    box = spaces.Box(0, 1, (1,))
    env = _SpaceEnv(spaces.Dict([("a", spaces.Dict(b=box)), ("a/b", box)]))
    with raises_exactly(
        bridge.ConversionError,
        "observation['a/b'] must flatten to a key other than observation['a']['b']'s, got 'a/b'. "
        "Rename keys so that no key contains '/' (SB3 needs one level of Dict).",
    ):
        lower(env.observation_space, path="observation", options={FLAT: True})
    nested = to_gymnasium(env).observation_space  # Gymnasium's own presentation keeps both keys apart
    assert list(nested.spaces) == ["a", "a/b"] and list(nested["a"].spaces) == ["b"]


def test_refuses_normalize_actions_for_a_discrete_action():
    with raises_exactly(
        bridge.ConversionError,
        "action space must be a bounded float Box for normalize_actions=True, got Discrete(3, start=-1). Export without normalize_actions.",
    ):
        to_gymnasium("envbridge-test/ShiftedDiscrete-v0", normalize_actions=True)


def test_refuses_an_unknown_image_layout():
    with raises_exactly(
        bridge.SpecError,
        "to_gymnasium image_layout must be one of ['CHW', 'HWC'], got 'CWH'. Pass one of ['CHW', 'HWC'].",
    ):
        to_gymnasium("envbridge-test/ImageObs-v0", image_layout="CWH")


# -- invalid actions (whole messages; the env does not advance) ---------------------------------------
INVALID = [
    (
        "envbridge/GridWorld-v0",
        np.int64(4),
        "action must lie in [0, 3], got 4. Sample from env.action_space or clip the action into its bounds.",
    ),
    (
        "envbridge/GridWorld-v0",
        1.0,
        "action must be a numpy array of dtype int64 and shape (), got 1.0. Pass np.asarray(action, dtype=np.int64).",
    ),
    (
        "envbridge/PointMass-v0",
        np.array([0.5, 1.5], np.float32),
        "action[1] must lie in [-1.0, 1.0], got 1.5. Sample from env.action_space or clip the action into its bounds.",
    ),
    (
        "envbridge/PointMass-v0",
        np.zeros(3, np.float32),
        "action must have shape (2,), got shape (3,). Reshape it to the action space's shape.",
    ),
    (
        "envbridge/PointMass-v0",
        np.full(2, 0.1, np.float64),
        "action must hold values float32 represents exactly (a cast that rounds is refused), got dtype float64 values that round. Round them yourself: .astype(np.float32).",
    ),
    (
        "envbridge-test/GridAction-v0",
        np.array([2, 1, 2, 3]),
        "action[2] must lie in [0, 1], got 2. Sample from env.action_space or clip the action into its bounds.",
    ),
    (
        "envbridge-test/Hybrid-v0",
        (1,),
        "action must be a tuple of 2 entries, got a tuple of 1. Pass one value per entry of the space.",
    ),
]


@pytest.mark.parametrize("env_id, action, text", INVALID, ids=[f"{i}-{t[:20]}" for i, (_, _, t) in enumerate(INVALID)])
def test_invalid_action_raises_the_whole_message_and_does_not_advance(env_id, action, text):
    export = to_gymnasium(env_id)
    export.reset(seed=0)
    before = export.clone_state()
    with raises_exactly(bridge.ContractError, text):
        export.step(action)
    assert _equal(export.clone_state()["env"]["env"]["state"], before["env"]["env"]["state"])
    assert export.steps == 0 and export.neutral.elapsed_steps == 0


@pytest.mark.parametrize("n", [1, 8, 16, 17, 256])  # up to 16 a Python loop decides, above it numpy
@pytest.mark.parametrize("bad, at", [(-1, 0), (4, -1), (-(2**63), 3), (2**62, 5)])
def test_discrete_batch_check_refuses_the_same_values_at_every_batch_size(n, bad, at):

    invalid_batch = lower(spaces.Discrete(4), path="action", options={}).invalid_batch
    batch = np.arange(n, dtype=np.int64) % 4
    assert invalid_batch(batch, "actions") is None
    batch[at % n] = bad
    found = invalid_batch(batch, "actions")
    assert found == (
        f"actions[{at % n}]",
        "lie in [0, 3]",
        repr(bad),
        "Sample from env.action_space or clip the action into its bounds",
    )
    assert invalid_batch(batch.reshape(1, n), "actions") is not None  # the wrong shape still takes the full check


def test_check_actions_false_skips_validation():
    export = to_gymnasium("envbridge-test/ShiftedDiscrete-v0", check_actions=False)
    export.reset(seed=0)
    export.step(7)  # out of the exported space; the user opted out, the neutral env sees 6
    assert export.neutral.unwrapped.last == 6


# -- differential: one seed and one action tape, neutral vs export --------------------------------------
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_export_replays_the_neutral_env_exactly(env_id):
    neutral, export = bridge.make(env_id), to_gymnasium(bridge.make(env_id))
    rng = np.random.default_rng(7)
    tape = [neutral.action_space.sample(rng) for _ in range(120)]
    obs_n, _ = neutral.reset(seed=11)
    obs_e, _ = export.reset(seed=11)
    assert _equal(export.observation_lowering.decode(obs_e), obs_n)
    for step, action in enumerate(tape):
        out_n = neutral.step(action)
        out_e = export.step(export.action_lowering.encode(action))
        assert _equal(export.observation_lowering.decode(out_e[0]), out_n[0]), step
        assert out_e[1:4] == tuple(out_n[1:4]) and type(out_e[1]) is float, step
        if out_n[2] or out_n[3]:
            obs_n, _ = neutral.reset()
            obs_e, _ = export.reset()
            assert _equal(export.observation_lowering.decode(obs_e), obs_n), step

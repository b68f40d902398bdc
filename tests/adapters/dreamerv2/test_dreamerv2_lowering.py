"""The Dreamer-ready lowering: every rule round-trips exactly, every refusal has its whole message."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

gym = require("gym")

from bridge.adapters._shared.lowering import discrete_table  # noqa: E402
from bridge.adapters.dreamerv2 import to_dreamer_ready  # noqa: E402
from bridge.adapters.dreamerv2.actions import ActionLowering  # noqa: E402
from bridge.adapters.dreamerv2.lowering import ObservationLowering  # noqa: E402
from toy_envs.lowering import ShiftedDiscreteEnv  # noqa: E402

from bridge import spaces as S  # noqa: E402
from bridge.errors import ContractError, ConversionError, SpecError  # noqa: E402
from bridge.spaces.base import _describe  # noqa: E402

RESERVED = (
    "reserves (reward, is_first, is_last, is_terminal, action) or one starting with 'log_' (its replay drops those)"
)


def _roundtrip(space, seed=0, n=20):
    low = ObservationLowering(space)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        value = space.sample(rng)
        out = low.encode(value)
        assert list(out) == list(low.space.spaces)
        for key, array in out.items():
            sub = low.space[key]
            assert isinstance(array, np.ndarray) and array.shape == sub.shape and array.dtype == sub.dtype, key
            assert len(sub.shape) in (1, 3) and sub.contains(array), key
        back = low.decode({**out, "reward": 0.0, "is_first": True})
        assert space.contains(back), (value, back)
        _assert_equal(value, back)
    return low


def _assert_equal(a, b):
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _assert_equal(a[k], b[k])
    elif isinstance(a, tuple):
        for x, y in zip(a, b):
            _assert_equal(x, y)
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_a_non_dict_box_is_named_vector_and_an_image_image():
    assert list(ObservationLowering(S.Box(-1, 1, (3,))).space.spaces) == ["vector"]
    low = ObservationLowering(S.Image(64, 64, 3))
    assert list(low.space.spaces) == ["image"] and low.image_keys == ["image"] and low.vector_keys == []


def test_every_leaf_becomes_1d_float32_or_hwc_uint8_and_round_trips():
    space = S.Dict(
        column=S.Box(-5.0, 5.0, (4, 1), np.float32),
        scalar=S.Box(0.0, 1.0, (), np.float32),
        half=S.Box(-1.0, 1.0, (2,), np.float16),
        counts=S.Box(-3, 1000, (2, 2), np.int32),
        pixels=S.Box(0, 255, (4, 4, 3), np.uint8),  # not declared an Image: a vector, never guessed
        mode=S.Discrete(3, start=-1),
        grid=S.MultiDiscrete(np.array([[2, 3], [4, 2]]), np.array([[0, 1], [-2, 0]])),
        flags=S.MultiBinary((2, 3)),
        nested=S.Dict(a=S.Box(-1, 1, (2,)), t=S.Tuple([S.Discrete(2), S.Image(64, 64, 3)])),
    )
    low = _roundtrip(space)
    shapes = {k: low.space[k].shape for k in low.space.spaces}
    assert shapes == {
        "column": (4,),
        "scalar": (1,),
        "half": (2,),
        "counts": (4,),
        "pixels": (48,),
        "mode": (3,),
        "grid": (11,),
        "flags": (6,),
        "nested/a": (2,),
        "nested/t/0": (2,),
        "nested/t/1": (64, 64, 3),
    }
    assert low.image_keys == ["nested/t/1"]
    assert low.encode(space.sample(np.random.default_rng(1)))["mode"].sum() == 1.0


def test_a_top_level_tuple_gets_obs_keys():
    low = _roundtrip(S.Tuple([S.Box(-1, 1, (2,)), S.Discrete(4)]))
    assert list(low.space.spaces) == ["obs/0", "obs/1"]


class ChwImage(S.Image):
    """An image space that declares channel-first layout (the core's Image is always HWC)."""

    layout = "CHW"

    def __init__(self, channels, height, width):
        S.Box.__init__(self, 0, 255, (channels, height, width), np.uint8)
        self.height, self.width, self.channels = height, width, channels


def test_a_declared_chw_image_is_transposed_to_hwc_and_a_chw_shaped_box_is_not():
    low = _roundtrip(S.Dict(cam=ChwImage(3, 64, 32), box=S.Box(0, 255, (3, 8, 8), np.uint8)), n=3)
    assert low.space["cam"].shape == (64, 32, 3) and low.space["box"].shape == (192,)
    chw = np.random.default_rng(0).integers(0, 256, (3, 64, 32), dtype=np.uint8)
    hwc = low.encode({"cam": chw, "box": np.zeros((3, 8, 8), np.uint8)})["cam"]
    assert np.array_equal(hwc, np.transpose(chw, (1, 2, 0)))


@pytest.mark.parametrize("key", ["reward", "is_first", "is_last", "is_terminal", "action", "log_speed"])
def test_reserved_keys_are_refused(key):
    text = (
        f"observation[{key!r}] must not lower to a key DreamerV2 {RESERVED}, got {key!r}. "
        f"Rename the key, e.g. 'obs_{key}'."
    )
    with raises_exactly(ConversionError, text):
        ObservationLowering(S.Dict({key: S.Box(0, 1, (1,)), "ok": S.Box(0, 1, (1,))}))


def test_observation_refusals_have_whole_messages():
    cases = [
        (
            S.Dict([("a", S.Dict(b=S.Box(0, 1, (1,)))), ("a/b", S.Box(0, 1, (1,)))]),
            "observation['a/b'] must lower to a DreamerV2 key no other entry uses, got 'a/b', "
            "also used by observation['a']['b']. Rename one of the two entries.",
        ),
        (
            S.Dict(ram=S.Box(0, 2**31 - 1, (2,), np.int64)),
            "observation['ram'] must have bounds within +-16777216 to be exact as float32, got "
            "[0, 2147483647]. Narrow the bounds, or scale the value in the env and declare a "
            "float32 Box.",
        ),
        (
            S.Dict(cam=S.Image(32, 32, 1)),
            "observation['cam'] must have 3 or 4 channels to be resized to (64, 64) by DreamerV2's "
            "ResizeImage (PIL), got 1 channel(s) at 32x32. Render at 64x64, or pass size=(32, "
            "32) to to_dreamerv2.",
        ),
        (
            S.Dict(empty=S.Box(0.0, 1.0, (0,), np.float32)),
            "observation['empty'] must have at least one element (DreamerV2 has no empty inputs), got shape (0,). "
            "Drop the entry.",
        ),
    ]
    for space, text in cases:
        with raises_exactly(ConversionError, text):
            ObservationLowering(space)
    ObservationLowering(S.Dict(cam=S.Image(32, 32, 1)), size=(32, 32))  # no resize needed: fine
    with raises_exactly(
        ConversionError,
        "observation['pos'] must have dtype float32 or float16 with float64_as_float32=False (DreamerV2 computes "
        "in float32), got dtype float64. Leave float64_as_float32 at True (the default), or declare float32 "
        'observations (dtype=np.float32 in a Box; DataType="single" in an rlNumericSpec).',
    ):
        ObservationLowering(S.Dict(pos=S.Box(0, 1, (2,), np.float64)), float64_as_float32=False)
    presented = ObservationLowering(S.Dict(pos=S.Box(0, 1, (2,), np.float64)))  # the default: float32, announced
    assert presented.space["pos"].dtype == np.float32
    assert presented.roundings == ("observation['pos']: float64 presented as float32",)


def test_discrete_actions_offset_and_product_actions_enumerate_every_value():
    act = ActionLowering(S.Discrete(3, start=5))
    assert act.space == gym.spaces.Discrete(3) and act.discrete and [act.decode(i) for i in range(3)] == [5, 6, 7]
    md = S.MultiDiscrete(np.array([[2, 3], [1, 2]]), np.array([[0, -1], [4, 0]]))
    act = ActionLowering(md)
    assert act.space.n == 12
    decoded = [act.decode(np.int64(i)) for i in range(12)]
    assert all(md.contains(d) for d in decoded) and len({d.tobytes() for d in decoded}) == 12
    assert [act.encode(d) for d in decoded] == list(range(12))
    mb = ActionLowering(S.MultiBinary(3))
    assert mb.space.n == 8 and mb.decode(5).tolist() == [1, 0, 1] and mb.decode(5).dtype == np.int8


def test_discrete_actions_decode_every_integer_type_to_np_int64():
    act = ActionLowering(S.Discrete(3, start=5))
    for kind in (int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64):
        assert [type(act.decode(kind(i))) for i in range(3)] == [np.int64] * 3
        assert act.decode(np.array(kind(2))) == 7 and type(act.decode(np.array(kind(2)))) is np.int64
    with raises_exactly(
        ContractError,
        "the Dreamer-ready action must be an integer index in [0, 2], got uint64(3). "
        "Send a one-hot through DreamerV2's OneHotAction, or an int index to this env.",
    ):
        act.decode(np.uint64(3))
    unchecked = ActionLowering(S.Discrete(3, start=5), check_actions=False)
    assert unchecked.decode(4) == 9 and type(unchecked.decode(4)) is np.int64  # the opt-out passes it on
    big = ActionLowering(S.Discrete(10_000, start=-1))  # past the precomputed table
    assert big.decode(np.int64(9_999)) == 9_998 and type(big.decode(9_999)) is np.int64


def test_discrete_actions_share_the_exports_table_and_the_guard_decodes_through_it():
    assert ActionLowering(S.Discrete(3, start=5)).table == discrete_table(3, 5) == {0: 5, 1: 6, 2: 7}
    assert ActionLowering(S.Dict(action=S.Discrete(3))).table is None  # its decode returns a dict
    assert ActionLowering(S.MultiDiscrete([2, 2])).table is None  # a fresh array per step instead
    # unchecked too: the fallback decode makes a new np.int64 (~3k instructions on 3.9), the table has them
    assert ActionLowering(S.Discrete(3), check_actions=False).table == discrete_table(3, 0)
    env = to_dreamer_ready(ShiftedDiscreteEnv())  # the env inside DreamerV2's chain
    env.reset(seed=0)
    for index in (0, np.int64(1), np.int32(2), np.array(np.uint8(0))):  # table hits, then the fallback
        env.step(index)
        assert type(env.neutral.last) is np.int64 and env.neutral.last == int(index) - 1
    pos = env.neutral.pos
    with raises_exactly(
        ContractError,
        "the Dreamer-ready action must be an integer index in [0, 2], got int64(3). "
        "Send a one-hot through DreamerV2's OneHotAction, or an int index to this env.",
    ):
        env.step(np.int64(3))
    assert env.neutral.pos == pos and env.steps == 4  # refused before anything moved


@pytest.mark.parametrize("low, high", [(-1.0, 1.0), ([-1.0, 0.0], [1.0, 5.0])], ids=["uniform", "per-element"])
def test_box_actions_inside_pass_unchanged_and_near_a_bound_snap(low, high):
    act = ActionLowering(S.Box(np.array(low), np.array(high), (2,), np.float32))
    inside = np.array([0.5, 0.5], np.float32)
    assert act.decode(inside) is inside
    top = act.space.high
    assert act.decode(np.nextafter(top, np.float32(np.inf))).tolist() == top.tolist()
    with pytest.raises(ContractError):
        act.decode(np.array([np.nan, 0.5], np.float32))


def test_box_actions_keep_bounds_and_snap_float32_rounding_onto_them():
    act = ActionLowering(S.Box(np.array([0.1, -3.0]), np.array([0.3, 7.0]), (2,), np.float32))
    assert not act.discrete and np.array_equal(act.space.low, np.array([0.1, -3.0], np.float32))
    low, high = act.bounds
    over = np.nextafter(high.astype(np.float32), np.float32(np.inf))
    assert np.array_equal(act.decode(over), high) and np.array_equal(act.decode(act.space.low), low)
    bounded = ActionLowering(S.Box(-np.inf, np.inf, (2,), np.float64), action_bounds=(-2.0, [1.0, 3.0]))
    assert bounded.space.low.tolist() == [-2.0, -2.0] and bounded.space.high.tolist() == [1.0, 3.0]
    assert bounded.decode(np.array([1.0, 3.0], np.float32)).dtype == np.float64
    principal = ActionLowering(S.Dict(action=S.Box(-1, 1, (2,))))
    assert list(principal.decode(np.zeros(2, np.float32))) == ["action"]


def test_action_refusals_have_whole_messages():
    hybrid = (
        "must be one Discrete, MultiDiscrete, MultiBinary or float Box (DreamerV2's actor "
        "outputs one distribution: one-hot or continuous), got Tuple(Discrete(2), Box(-1.0, "
        "1.0, (1,), float32)). Split a hybrid action: discretize the continuous part into "
        "a MultiDiscrete, or make the discrete part a Box the env thresholds."
    )
    joint = (
        "must have at most 1024 joint values to become one DreamerV2 one-hot action, got "
        "{}. Use fewer values per entry, split the action across steps, or use a float Box."
    )
    cases = [
        (S.MultiDiscrete(np.array([11, 10, 10])), "action " + joint.format("1100 (MultiDiscrete([11, 10, 10]))")),
        (S.MultiBinary(11), "action " + joint.format("2048 (MultiBinary(11))")),
        (
            S.Box(-1, 1, (2,), np.int64),
            "action must be a float Box (DreamerV2's NormalizeAction emits floats), got dtype "
            "int64. Use Discrete or MultiDiscrete for integer actions, or a float Box rounded "
            "in the env.",
        ),
        (
            S.Box(np.array([-1, -np.inf]), np.array([1, 1]), (2,), np.float32),
            "action[1] must have finite bounds for DreamerV2's NormalizeAction (it passes unbounded "
            "dims through unscaled), got [-inf, 1.0]. Pass action_bounds=(low, high) with the "
            "finite range the policy should cover, or declare finite bounds.",
        ),
        (
            S.Dict(action=S.Discrete(2), extra=S.Discrete(2)),
            "action must be a Dict with the single principal key 'action' (DreamerV2's agent "
            "acts only on act_space['action']), got keys ['action', 'extra']. Put the whole action "
            "under 'action', e.g. Dict(action=Box(...)), and split it in the env.",
        ),
        (S.Tuple([S.Discrete(2), S.Box(-1, 1, (1,))]), "action " + hybrid),
        (S.Dict(action=S.Tuple([S.Discrete(2), S.Box(-1, 1, (1,))])), "action['action'] " + hybrid),
    ]
    for space, text in cases:
        with raises_exactly(ConversionError, text):
            ActionLowering(space)
    with raises_exactly(
        SpecError,
        "action_bounds[0] must be finite, low < high, and inside the action space [-inf, "
        "inf], got [-inf, 1.0]. Pass finite bounds within the declared space.",
    ):
        ActionLowering(S.Box(-np.inf, np.inf, (2,), np.float32), action_bounds=(-np.inf, 1))
    with raises_exactly(
        SpecError,
        "action_bounds must be a pair (low, high) broadcastable to (2,), got (0,). Pass e.g. "
        "action_bounds=(-1.0, 1.0).",
    ):
        ActionLowering(S.Box(-np.inf, np.inf, (2,), np.float32), action_bounds=(0,))


def test_invalid_dreamer_ready_actions_have_whole_messages():
    index = (
        "the Dreamer-ready action must be an integer index in [0, 2], got {}. Send a one-hot "
        "through DreamerV2's OneHotAction, or an int index to this env."
    )
    act = ActionLowering(S.Discrete(3, start=5))
    for bad, shown in [(3, "3"), (0.5, "0.5"), (True, "True"), (-1, "-1")]:
        with raises_exactly(ContractError, index.format(shown)):
            act.decode(bad)
    box = (
        "the Dreamer-ready action must be a float array of shape (2,) inside [low, high] "
        "= [-2.0, 2.0], got {}. Send values in [-1, 1] through DreamerV2's NormalizeAction."
    )
    act = ActionLowering(S.Box(-2, 2, (2,), np.float32))
    with raises_exactly(ContractError, box.format("array([0. , 2.5], shape=(2,), dtype=float64)")):
        act.decode(np.array([0, 2.5]))
    with raises_exactly(ContractError, box.format("shape (1,)")):
        act.decode(np.array([0.0]))
    with raises_exactly(ContractError, box.format("array([nan,  0.], shape=(2,), dtype=float64)")):
        act.decode(np.array([np.nan, 0]))
    unchecked = ActionLowering(S.Box(-2, 2, (2,), np.float32), check_actions=False)
    assert unchecked.decode(np.array([0, 2.5])).tolist() == [0.0, 2.0]  # the opt-out clips, never raises


@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (1, 2), (2, 3), ()], ids=["1x1", "2x1", "1x2", "2x3", "scalar"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matlab_shaped_box_actions_are_presented_flat_and_decode_back_exactly(shape, dtype):
    space = S.Box(-2.0, 3.0, shape, dtype)
    act = ActionLowering(space)
    size = int(np.prod(shape))
    assert act.space.shape == (size,) and act.space.dtype == np.float32  # DreamerV2's world model: rank 1
    assert act.space.low.tolist() == [-2.0] * size and act.space.high.tolist() == [3.0] * size
    rng = np.random.default_rng(0)
    for _ in range(20):
        sent = rng.uniform(-2.0, 3.0, size).astype(np.float32)
        got = act.decode(sent)
        assert got.shape == shape and got.dtype == dtype and space.contains(got)
        assert np.array_equal(got.reshape(-1), sent.astype(dtype))  # float32 -> float64 is exact
        assert np.array_equal(act.encode(got), sent)
    assert act.decode(list(act.space.high)).tolist() == np.full(shape, 3.0).tolist()
    outside = np.full(size, 4.0, np.float32)
    with raises_exactly(
        ContractError,
        f"the Dreamer-ready action must be a float array of shape ({size},) inside [low, high] = [-2.0, 3.0], "
        f"got {_describe(outside)}. Send values in [-1, 1] through DreamerV2's NormalizeAction.",
    ):
        act.decode(outside)  # named as sent (flat), not as reshaped

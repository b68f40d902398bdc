"""The reverse-lowering table of docs/importers.md, one test per row: every Gymnasium space kind ->
the neutral space it becomes, or its refusal (the whole message); the table in the doc must hold
every message asserted here."""

from __future__ import annotations

import os

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")

from bridge.adapters.importers.gymnasium import from_gymnasium  # noqa: E402

from bridge import spaces  # noqa: E402
from bridge.errors import ConversionError, SpecError  # noqa: E402

G = gymnasium.spaces
DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "importers.md")


class Probe(gymnasium.Env):
    """An env with the given spaces; steps return a sample of the seeded observation space (the row
    tests only build it)."""

    def __init__(self, observation_space, action_space=None):
        self.observation_space = observation_space
        self.observation_space.seed(0)
        self.action_space = action_space if action_space is not None else G.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, False, {}


def _obs(space, **kwargs):
    return from_gymnasium(Probe(space), **kwargs).observation_space


# -- what each kind becomes ------------------------------------------------------------------
def test_box_keeps_its_dtype_and_per_element_bounds():
    for dtype in (np.float16, np.float32, np.float64, np.int8, np.uint16, np.int64):
        shift = 0 if np.dtype(dtype).kind == "u" else 2
        low = (np.array([[1, 0], [2, 3]]) - shift).astype(dtype)
        got = _obs(G.Box(low, low + 5, dtype=dtype))
        assert got == spaces.Box(low, low + 5, (2, 2), dtype) and got.dtype == dtype


def test_uint8_hwc_box_with_1_or_3_channels_over_0_255_is_an_image():
    assert _obs(G.Box(0, 255, (7, 5, 3), np.uint8)) == spaces.Image(7, 5, 3)
    assert isinstance(_obs(G.Box(0, 255, (4, 4, 1), np.uint8)), spaces.Image)
    four = _obs(G.Box(0, 255, (4, 4, 4), np.uint8))  # 4 channels, or other bounds: a plain Box
    assert type(four) is spaces.Box and type(_obs(G.Box(0, 9, (4, 4, 3), np.uint8))) is spaces.Box


def test_discrete_keeps_its_start():
    assert _obs(G.Discrete(5, start=-2)) == spaces.Discrete(5, start=-2)


def test_multi_discrete_n_d_keeps_its_start_and_a_narrow_dtype_widens_to_int64():
    nvec, start = np.array([[2, 3], [4, 5]]), np.array([[1, 0], [0, -1]])
    assert _obs(G.MultiDiscrete(nvec, start=start)) == spaces.MultiDiscrete(nvec, start)
    env = from_gymnasium(Probe(G.MultiDiscrete([3, 4], dtype=np.int32)))
    obs, _ = env.reset(seed=0)
    assert env.observation_space == spaces.MultiDiscrete([3, 4]) and obs.dtype == np.int64


def test_multi_binary_keeps_its_shape():
    assert _obs(G.MultiBinary(4)) == spaces.MultiBinary(4)
    assert _obs(G.MultiBinary([2, 3])) == spaces.MultiBinary([2, 3])


def test_dict_keeps_its_order_and_tuple_its_entries():
    space = G.Dict([("z", G.Discrete(3)), ("a", G.Tuple((G.Box(-1, 1, (2,)), G.MultiBinary(2))))])
    got = _obs(space)
    assert list(got.keys()) == ["z", "a"]
    assert got == spaces.Dict(
        [("z", spaces.Discrete(3)), ("a", spaces.Tuple([spaces.Box(-1, 1, (2,)), spaces.MultiBinary(2)]))]
    )
    obs, _ = from_gymnasium(Probe(space)).reset(seed=0)
    assert type(obs["z"]) is np.int64 and type(obs["a"]) is tuple and got.contains(obs)


# -- what is refused (the whole message) ---------------------------------------------------------
TEXT = (
    "observation_space['mission'] must be a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple, got Text. "
    "Wrap the env in an ObservationWrapper that presents fixed-size arrays instead (MiniGrid: ImgObsWrapper or "
    "RGBImgObsWrapper; on the command line --wrapper minigrid.wrappers:ImgObsWrapper), or pass "
    "drop_keys=['mission'] (on the command line --drop-key mission)."
)
GRAPH = (
    "observation_space must be a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple, got Graph. "
    "Wrap the env in an ObservationWrapper that presents fixed-size arrays instead (MiniGrid: ImgObsWrapper or "
    "RGBImgObsWrapper; on the command line --wrapper minigrid.wrappers:ImgObsWrapper)."
)
SEQUENCE = (
    "observation_space[1] must be a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple, got Sequence. "
    "Wrap the env in an ObservationWrapper that presents fixed-size arrays instead (MiniGrid: ImgObsWrapper or "
    "RGBImgObsWrapper; on the command line --wrapper minigrid.wrappers:ImgObsWrapper)."
)
ONE_OF = (
    "action_space must be a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple, got OneOf. "
    "Wrap the env in an ActionWrapper that presents fixed-size arrays instead."
)
UNKNOWN = (
    "observation_space['x'] must be a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple, got Custom. "
    "Wrap the env in an ObservationWrapper that presents fixed-size arrays instead (MiniGrid: ImgObsWrapper or "
    "RGBImgObsWrapper; on the command line --wrapper minigrid.wrappers:ImgObsWrapper), or pass "
    "drop_keys=['x'] (on the command line --drop-key x)."
)
BOOL_BOX = (
    "observation_space must be a Box of a float or integer dtype, got Box of dtype bool. "
    "Declare it as a MultiBinary (int8) in the env."
)
UINT64_MULTI_DISCRETE = "action_space must be a MultiDiscrete whose dtype fits int64, got MultiDiscrete of dtype uint64. Use dtype=np.int64."
DROP_NOT_DICT = (
    "observation_space drop_keys must name keys of a Dict space, got ['mission'] with a Box space. "
    "Pass drop_keys only for an env that observes a Dict."
)
DROP_MISSING = (
    "observation_space drop_keys must name keys of the Dict space, got ['goal']. Pick from its keys ['a', 'mission']."
)
STRONG_WITHOUT_SNAPSHOT = (
    "from_gymnasium determinism='strong' must come with a snapshot, got snapshot=None. Pass snapshot='deepcopy' "
    "(the checker replays it in a fresh instance) or snapshot=(get_state, set_state)."
)
MESSAGES = [TEXT, GRAPH, SEQUENCE, ONE_OF, UNKNOWN, BOOL_BOX, UINT64_MULTI_DISCRETE, DROP_NOT_DICT, DROP_MISSING]


class Custom(G.Space):
    pass


def test_text_in_a_dict_is_refused_with_its_path_and_drop_keys():
    with raises_exactly(ConversionError, TEXT):
        _obs(G.Dict({"a": G.Discrete(2), "mission": G.Text(10)}))


def test_graph_is_refused():
    with raises_exactly(ConversionError, GRAPH):
        _obs(G.Graph(G.Box(0, 1, (2,)), None))


def test_sequence_in_a_tuple_is_refused():
    with raises_exactly(ConversionError, SEQUENCE):
        _obs(G.Tuple((G.Discrete(2), G.Sequence(G.Discrete(2)))))


def test_one_of_action_is_refused():
    with raises_exactly(ConversionError, ONE_OF):
        from_gymnasium(Probe(G.Discrete(2), G.OneOf((G.Discrete(2), G.Box(0, 1, (1,))))))


def test_an_unknown_space_is_refused_by_its_class_name():
    with raises_exactly(ConversionError, UNKNOWN):
        _obs(G.Dict({"x": Custom()}))


def test_a_bool_box_is_refused():
    with raises_exactly(ConversionError, BOOL_BOX):
        _obs(G.Box(0, 1, (3,), bool))


def test_a_uint64_multi_discrete_is_refused():
    with raises_exactly(ConversionError, UINT64_MULTI_DISCRETE):
        from_gymnasium(Probe(G.Discrete(2), G.MultiDiscrete([2, 3], dtype=np.uint64)))


def test_drop_keys_removes_a_key_and_names_a_wrong_one():
    space = G.Dict({"a": G.Discrete(2), "mission": G.Text(10)})
    env = from_gymnasium(Probe(space), drop_keys=["mission"])
    assert env.observation_space == spaces.Dict(a=spaces.Discrete(2))
    obs, _ = env.reset(seed=0)
    assert list(obs) == ["a"]
    with raises_exactly(ConversionError, DROP_NOT_DICT):
        _obs(G.Box(0, 1, (2,)), drop_keys=["mission"])
    with raises_exactly(ConversionError, DROP_MISSING):
        _obs(space, drop_keys=["goal"])


def test_strong_determinism_needs_a_snapshot():
    with raises_exactly(SpecError, STRONG_WITHOUT_SNAPSHOT):
        from_gymnasium(Probe(G.Discrete(2)), determinism="strong")


@pytest.mark.parametrize("text", MESSAGES + [STRONG_WITHOUT_SNAPSHOT])
def test_the_doc_table_holds_every_message(text):
    with open(DOC, encoding="utf-8") as f:
        assert text in f.read()

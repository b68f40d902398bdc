"""Snapshots: what round-trips through .npz and JSON (both ways, exactly), what is refused at save
time, and restore_state checking the whole snapshot first and never leaving an env half restored."""

from __future__ import annotations

import collections
import json
import os

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge import snapshot
from bridge.errors import ContractError, SpecError
from bridge.examples import GridWorld
from bridge.safe_files import Limits

Point = collections.namedtuple("Point", "x y")


def _same(a, b):
    """Exactly equal: types (numpy scalars and dtypes too), shapes, bytes and key order (no recursion)."""
    stack = [(a, b, "value")]
    while stack:
        a, b, path = stack.pop()
        assert type(a) is type(b), (path, type(a), type(b))
        if isinstance(a, dict):
            assert list(a) == list(b), path
            stack.extend((a[k], b[k], f"{path}[{k!r}]") for k in a)
        elif isinstance(a, (list, tuple)):
            assert len(a) == len(b), path
            stack.extend((x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b)))
        elif isinstance(a, (np.ndarray, np.generic)):
            assert (a.dtype, a.shape) == (b.dtype, b.shape), path
            assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), path
        elif isinstance(a, float) and a != a:
            assert b != b, path
        else:
            assert a == b and repr(a) == repr(b), path  # repr: -0.0 is not 0.0


TREE = {
    "z_first": 1,  # key order is kept, not sorted
    "tuple": (1, (2.5, "x"), [np.int8(3)]),
    "list of tuples": [(), (None,), (True, False)],
    "scalars": [
        np.float32(1.5),
        np.int64(-7),
        np.uint64(2**64 - 1),
        np.bool_(True),
        np.float16(-0.0),
        np.complex64(1 - 2j),
    ],
    "zero-d array": np.array(3.25),
    "arrays": {
        "bool": np.array([True, False]),
        "int8": np.arange(-3, 3, dtype=np.int8).reshape(2, 3),
        "uint64": np.array([0, 2**64 - 1], np.uint64),
        "float": np.array([-0.0, np.nan, np.inf, -np.inf, 1e-310], np.float64),
        "float32": np.array([0.1, 3.4028235e38], np.float32),
        "big-endian": np.array([1.5, 2.5], ">f8"),
        "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        "complex": np.array([1 + 2j, -0.5j], np.complex128),
        "str": np.array(["", "ab", "héllo"]),
        "bytes": np.array([b"a\xff", b""]),
        "empty": np.zeros((0, 3), np.float32),
    },
    "python": [2**100, -(2**70), 1e308, float("nan"), float("inf"), -0.0, "", "ünï", None, True],
    # the file's own markers as user keys: escaped on save, back as written
    "__ndarray__": 0,
    "nested": {"__tuple__": [1, 2], "__dict__": {"__scalar__": "s", "plain": {"__ndarray__": np.zeros(2)}}},
}


@pytest.mark.parametrize("via", ["npz", "json"])
def test_the_round_trip_rules_hold_both_ways(tmp_path, via):
    path = os.path.join(tmp_path, "tree.npz")
    if via == "npz":
        snapshot.save(path, TREE)
        back = snapshot.load(path)
    else:
        back = snapshot.from_json(snapshot.to_json(TREE))
    _same(back, TREE)
    # and once more from what came back: a fixed point
    again = snapshot.load(path) if via == "npz" else snapshot.from_json(snapshot.to_json(back))
    _same(again, TREE)


@pytest.mark.parametrize("via", ["npz", "json"])
def test_subclasses_come_back_as_their_plain_base(tmp_path, via):
    tree = {"point": Point(1, 2), "ordered": collections.OrderedDict(b=1, a=2)}
    path = os.path.join(tmp_path, "sub.npz")
    if via == "npz":
        snapshot.save(path, tree)
        back = snapshot.load(path)
    else:
        back = snapshot.from_json(snapshot.to_json(tree))
    _same(back, {"point": (1, 2), "ordered": {"b": 1, "a": 2}})


def test_files_written_before_scalars_were_kept_still_load(tmp_path):
    # the earlier layout: numpy scalars stored as 0-d arrays, no markers for tuples
    path = os.path.join(tmp_path, "old.npz")
    with open(path, "wb") as f:
        np.savez(f, tree=np.array(json.dumps({"x": {"__ndarray__": 0}, "t": [1, 2]})), a0=np.array(1.5))
    _same(snapshot.load(path), {"x": np.array(1.5), "t": [1, 2]})
    old_json = json.dumps({"x": {"__ndarray__": [1, 2], "dtype": "<i8", "shape": [2]}})
    _same(snapshot.from_json(old_json), {"x": np.array([1, 2], np.int64)})


@pytest.mark.parametrize(
    "tree, text",
    [
        (
            {"x": object()},
            "snapshot leaf must be a dict, list, tuple, ndarray, numpy scalar, str, int, float, bool or None, got object. Convert custom objects to plain data in get_state().",
        ),
        ({1: "a"}, "snapshot dict keys must be str, got [1]. Use string keys."),
        (
            {"x": np.array([object()])},
            "snapshot array must have a numeric or string dtype, got object. Store plain arrays.",
        ),
        (
            {"x": np.zeros(2, dtype=[("a", "<f8")])},
            "snapshot array must have a numeric or string dtype, got [('a', '<f8')]. Store plain arrays.",
        ),
        (
            {"x": np.array(["2020-01-01"], "datetime64[D]")},
            "snapshot array must have a numeric or string dtype, got datetime64[D]. Store plain arrays.",
        ),
    ],
)
def test_what_is_not_plain_data_is_refused_at_save_time(tmp_path, tree, text):
    with raises_exactly(SpecError, text):
        snapshot.save(os.path.join(tmp_path, "x.npz"), tree)
    with raises_exactly(SpecError, text):
        snapshot.to_json(tree)
    assert not os.path.exists(os.path.join(tmp_path, "x.npz"))


def test_a_tree_too_deep_to_load_again_or_a_cycle_is_refused_at_save_time(tmp_path):
    deep: list = []
    for _ in range(1100):
        deep = [deep]
    looped: list = []
    looped.append(looped)
    text = "snapshot must nest at most 1024 levels once saved (Limits.max_json_depth), got a deeper tree (or a cycle). Flatten the state in get_state()."
    for tree in (deep, looped):
        with raises_exactly(SpecError, text):
            snapshot.save(os.path.join(tmp_path, "x.npz"), tree)
        with raises_exactly(SpecError, text):
            snapshot.to_json(tree)


def test_a_deep_but_allowed_tree_round_trips_without_recursion(tmp_path):
    deep: object = {"leaf": np.arange(3)}
    for i in range(1000):
        deep = [deep] if i % 2 else {"k": deep}
    path = os.path.join(tmp_path, "deep.npz")
    snapshot.save(path, deep)
    _same(snapshot.load(path), deep)
    _same(snapshot.from_json(snapshot.to_json(deep)), deep)


def test_save_refuses_what_load_with_the_same_limits_would_refuse(tmp_path):
    small = Limits(max_member_bytes=200)
    with raises_exactly(
        SpecError,
        "snapshot must hold members of at most 200 bytes to load again, got 240. Keep bulk data out of get_state(), or pass larger bridge.safe_files.Limits to save and load.",
    ):
        snapshot.save(os.path.join(tmp_path, "x.npz"), {"x": np.zeros(30)}, limits=small)
    snapshot.save(os.path.join(tmp_path, "y.npz"), {"x": np.zeros(8)}, limits=small)
    assert snapshot.load(os.path.join(tmp_path, "y.npz"), limits=small)["x"].shape == (8,)


def test_save_refuses_a_folder_or_a_missing_folder_before_writing(tmp_path):
    folder = os.path.join(tmp_path, "runs")
    os.mkdir(folder)
    missing = os.path.join(tmp_path, "nope", "x.npz")
    under_a_file = os.path.join(tmp_path, "plain", "x.npz")
    with open(os.path.join(tmp_path, "plain"), "w") as f:
        f.write("not a folder")
    for path, text in [
        (
            folder,
            f"snapshot.save path must name a file, got {folder!r} (a folder). "
            f"Pass a file path inside it, e.g. {os.path.join(folder, 'state.npz')!r}.",
        ),
        (
            missing,
            f"snapshot.save path must be inside an existing folder, got {missing!r} "
            f"({os.path.dirname(missing)!r} is no such folder). "
            f"Create the folder first: os.makedirs({os.path.dirname(missing)!r}, exist_ok=True).",
        ),
        (
            under_a_file,
            f"snapshot.save path must be inside an existing folder, got {under_a_file!r} "
            f"({os.path.dirname(under_a_file)!r} is a file). "
            f"Create the folder first: os.makedirs({os.path.dirname(under_a_file)!r}, exist_ok=True).",
        ),
        (None, "snapshot.save path must be a file path (str or os.PathLike), got None. Pass e.g. 'state.npz'."),
    ]:
        with raises_exactly(SpecError, text):
            snapshot.save(path, {"x": np.zeros(2)})
    assert sorted(os.listdir(tmp_path)) == ["plain", "runs"] and os.listdir(folder) == []  # nothing written


def test_json_refuses_a_longdouble_it_could_not_keep_exactly():
    if np.dtype(np.longdouble).itemsize <= 8:
        pytest.skip("this platform's longdouble is float64")
    with raises_exactly(
        SpecError,
        f"snapshot JSON array must have at most 64-bit floats, got {np.dtype(np.longdouble).name}. Use .npz (bridge.snapshot.save).",
    ):
        snapshot.to_json({"x": np.zeros(1, np.longdouble)})


# -- restore_state: checked whole first, never half applied ------------------------------------
def _grid():
    env = GridWorld()
    env.reset(seed=3)
    env.step(1)
    return env


def _fingerprint(env):
    inner = env.unwrapped
    return json.dumps(snapshot.to_json(env.clone_state())), inner.np_random.bit_generator.state


RESTORE = "Restore snapshots only into the env class that made them."
GRID_RNG = _grid().clone_state()["rng"]  # what the corrupt rows below start from
DEEP_DICT: dict = {"a": 1}
for _ in range(1000):
    DEEP_DICT = {"a": DEEP_DICT}


@pytest.mark.parametrize(
    "corrupt, text",
    [
        (
            lambda s: {k: v for k, v in s.items() if k != "state"},
            f"snapshot must have the keys 'class', 'state' (and 'rng' with the RNG), got ['class', 'rng']. {RESTORE}",
        ),
        (
            lambda s: {**s, "extra": 1},
            f"snapshot must have the keys 'class', 'state' (and 'rng' with the RNG), got ['class', 'extra', 'rng', 'state']. {RESTORE}",
        ),
        (
            lambda s: {**s, "rng": {**s["rng"], "bit_generator": "MT19937"}},
            "snapshot RNG must come from a PCG64 generator, got MT19937. Restore a snapshot of this env.",
        ),
        (
            lambda s: {**s, "rng": {**s["rng"], "state": {"state": "x"}}},
            "snapshot RNG must be a PCG64 state from clone_state(), got "
            + json.dumps({"bit_generator": "PCG64", "state": {"state": "x"}, "has_uint32": "0", "uinteger": "0"})[:80]
            + ". Restore a snapshot of this env.",
        ),
        (  # "²".isdigit() is True, int("²") a ValueError: only ASCII decimals are read back as ints
            lambda s: {**s, "rng": {**s["rng"], "has_uint32": "\u00b2"}},
            "snapshot RNG must be a PCG64 state from clone_state(), got "
            + json.dumps({**GRID_RNG, "has_uint32": "\u00b2"})[:80]
            + ". Restore a snapshot of this env.",
        ),
        (
            lambda s: {**s, "rng": {**s["rng"], "uinteger": "--5"}},
            "snapshot RNG must be a PCG64 state from clone_state(), got "
            + json.dumps({**GRID_RNG, "uinteger": "--5"})[:80]
            + ". Restore a snapshot of this env.",
        ),
        (  # a stranger's RNG state nested 1,000 deep: json.dumps in the message recursed (RecursionError)
            lambda s: {**s, "rng": {**s["rng"], "state": DEEP_DICT}},
            "snapshot RNG must be a PCG64 state from clone_state(), got "
            + ('{"bit_generator": "PCG64", "state": ' + '{"a": ' * 9)[:80]
            + ". Restore a snapshot of this env.",
        ),
        (
            lambda s: {**s, "state": {"agent": np.array([1, 1])}},
            "snapshot state must be accepted by GridWorld.set_state(), got KeyError: 'goal'. Restore only snapshots that this env's clone_state() made (the env was left as it was).",
        ),
    ],
    ids=[
        "no-state",
        "extra-key",
        "rng-kind",
        "rng-values",
        "rng-superscript",
        "rng-double-minus",
        "rng-deep",
        "state-missing-field",
    ],
)
def test_a_corrupt_snapshot_is_refused_and_changes_nothing(corrupt, text):
    env = _grid()
    good = env.clone_state()
    env.step(3)
    env.step(3)
    before = _fingerprint(env)
    with raises_exactly(ContractError, text):
        env.restore_state(corrupt(good))
    assert _fingerprint(env) == before  # neither the RNG nor the fields moved
    twin = _grid()
    twin.step(3), twin.step(3)
    assert np.array_equal(env.step(0)[0], twin.step(0)[0])


def test_a_wrapper_stack_rolls_back_every_level_when_its_own_part_fails():
    env = bridge.TimeLimit(_grid(), 50)
    env.elapsed_steps = 1
    good = env.clone_state()
    for _ in range(4):
        env.step(2)
    before = _fingerprint(env)
    bad = {**good, "state": {"steps": 1}}  # the inner part is fine, TimeLimit's own is not
    with raises_exactly(
        ContractError,
        "snapshot state must be accepted by TimeLimit.set_state(), got KeyError: 'elapsed_steps'. Restore only snapshots that this env's clone_state() made (the env was left as it was).",
    ):
        env.restore_state(bad)
    assert _fingerprint(env) == before and env.elapsed_steps == 5
    env.restore_state(good)
    assert env.elapsed_steps == 1


def test_a_wrapper_stack_checks_the_inner_levels_before_changing_anything():
    env = bridge.TimeLimit(_grid(), 50)
    good = env.clone_state()
    env.step(2)
    before = _fingerprint(env)
    with raises_exactly(
        ContractError,
        "snapshot must come from bridge.examples.gridworld.GridWorld, got bridge.examples.cartpole.CartPole. Restore snapshots only into the env class that made them.",
    ):
        env.restore_state({**good, "env": {**good["env"], "class": "bridge.examples.cartpole.CartPole"}})
    with raises_exactly(
        ContractError,
        "snapshot must have the keys 'class', 'state', 'env', got ['class', 'state']. Restore snapshots only into the wrapper stack that made them.",
    ):
        env.restore_state({"class": good["class"], "state": good["state"]})
    assert _fingerprint(env) == before


def test_a_snapshot_restores_into_another_instance_through_both_files(tmp_path):
    env = bridge.make("envbridge/GridWorld-v0")
    env.reset(seed=5)
    env.step(1)
    path = os.path.join(tmp_path, "snap.npz")
    snapshot.save(path, env.clone_state())
    expected = [env.step(a)[0] for a in (0, 3, 3)]
    for loaded in (snapshot.load(path), snapshot.from_json(snapshot.to_json(snapshot.load(path)))):
        other = bridge.make("envbridge/GridWorld-v0")
        other.restore_state(loaded)
        assert all(np.array_equal(other.step(a)[0], e) for a, e in zip((0, 3, 3), expected))

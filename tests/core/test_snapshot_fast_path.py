"""The PCG64 fast path of snapshot RNG states (bridge._pcg64): the same snapshots as the public
``bit_generator.state`` path, exact restores, and anything unusual left to the general path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge import _pcg64, snapshot
from bridge.errors import ContractError


def _public(rng):
    """What rng_state() wrote before the fast path: the public state, ints as decimal strings."""
    return snapshot._ints_to_str(rng.bit_generator.state)


def _drawn(seed, draws):
    rng = np.random.default_rng(seed)
    rng.random(draws)
    rng.integers(0, 10, size=draws % 3, dtype=np.int32)  # leaves has_uint32 / uinteger set on odd counts
    return rng


def test_the_layout_check_passes_here():
    assert _pcg64.read(np.random.default_rng(0).bit_generator) is not None


@pytest.mark.parametrize("seed, draws", [(0, 0), (1, 1), (2, 5), (2**63, 1000)])
def test_the_fast_path_writes_the_same_rng_state_as_the_public_one(seed, draws):
    rng = _drawn(seed, draws)
    fast = snapshot.rng_state(rng)
    assert fast == _public(rng) and list(fast) == list(_public(rng))
    assert json.dumps(fast) == json.dumps(_public(rng))  # the same key order, the same strings


def test_a_fast_path_snapshot_and_a_general_path_one_restore_the_same_future():
    rng = _drawn(7, 4)
    for state in (snapshot.rng_state(rng), _public(rng)):
        other = np.random.default_rng(99)
        snapshot.apply_rng_state(other, state)
        assert other.bit_generator.state == rng.bit_generator.state
    twins = [np.random.default_rng(1), np.random.default_rng(1)]
    snapshot.apply_rng_state(twins[0], snapshot.rng_state(rng))  # fast: decoded bytes
    twins[1].bit_generator.state = rng.bit_generator.state  # public setter
    assert np.array_equal(twins[0].random(8), twins[1].random(8))
    assert twins[0].integers(0, 2**31, dtype=np.int32) == twins[1].integers(0, 2**31, dtype=np.int32)


def test_the_rng_is_restored_exactly_and_twice_from_one_snapshot():
    env = bridge.make("envbridge/CartPole-v0")
    env.reset(seed=0)
    env.step(1)
    snap = env.clone_state()
    rng = env.unwrapped.np_random
    expected = rng.bit_generator.state
    for _ in range(2):
        rng.random(3)
        rng.integers(0, 5, dtype=np.int32)  # has_uint32 set: must be put back too
        env.restore_state(snap)
        assert rng.bit_generator.state == expected
        assert env.clone_state()["env"]["rng"] == snap["env"]["rng"]


def test_a_snapshot_does_not_follow_the_env_after_clone():
    env = bridge.make("envbridge/CartPole-v0")
    env.reset(seed=0)
    env.step(1)
    snap = env.clone_state()
    kept = json.dumps(snapshot.to_json(snap))
    env.unwrapped.state[:] = 123.0  # mutate the array in place
    env.step(0)
    env.unwrapped.np_random.random(4)
    assert json.dumps(snapshot.to_json(snap)) == kept
    env.restore_state(snap)
    snap["env"]["state"]["state"][:] = -1.0  # and the snapshot after restore: the env keeps its copy
    assert not np.any(env.unwrapped.state == -1.0)


def test_a_failed_restore_rolls_the_rng_back_through_the_fast_path():
    env = bridge.TimeLimit(bridge.make("envbridge/CartPole-v0").unwrapped, 10)
    env.reset(seed=0)
    good = env.clone_state()
    env.step(1)
    env.unwrapped.np_random.integers(0, 5, dtype=np.int32)
    before = env.unwrapped.np_random.bit_generator.state, env.unwrapped.state.copy()
    with pytest.raises(ContractError):
        env.restore_state({**good, "state": {"wrong": 1}})  # the inner level and the RNG applied first
    assert env.unwrapped.np_random.bit_generator.state == before[0]
    assert np.array_equal(env.unwrapped.state, before[1])


@pytest.mark.parametrize(
    "change",
    [
        lambda r: {**r, "has_uint32": "2"},  # the public setter takes any int: so does the general path
        lambda r: {**r, "uinteger": 5},  # an int where a string was: general path
        lambda r: {**r, "state": {**r["state"], "inc": "00" + r["state"]["inc"]}},  # leading zeros
        lambda r: {**r, "state": {"inc": r["state"]["inc"], "state": r["state"]["state"]}},  # key order
    ],
    ids=["has_uint32-2", "int-leaf", "leading-zeros", "key-order"],
)
def test_what_the_fast_path_does_not_take_ends_as_the_general_path_ends(change):
    source = _drawn(3, 3)
    state = change(snapshot.rng_state(source))
    fast, general = np.random.default_rng(5), np.random.default_rng(5)
    snapshot.apply_rng_state(fast, state)
    general.bit_generator.state = snapshot._str_to_ints(state)
    assert fast.bit_generator.state == general.bit_generator.state
    assert snapshot.rng_state(fast) == _public(general)  # canonical strings again, whatever came in


def test_a_state_out_of_range_is_refused_by_the_general_path_and_moves_nothing():
    env = bridge.make("envbridge/CartPole-v0")
    env.reset(seed=0)
    good = env.clone_state()
    env.step(1)
    before = env.unwrapped.np_random.bit_generator.state
    rng = {**good["env"]["rng"], "state": {"state": str(2**128), "inc": good["env"]["rng"]["state"]["inc"]}}
    shown = json.dumps(rng)[:80]
    with raises_exactly(
        ContractError,
        f"snapshot RNG must be a PCG64 state from clone_state(), got {shown}. Restore a snapshot of this env.",
    ):
        env.restore_state({**good, "env": {**good["env"], "rng": rng}})
    assert env.unwrapped.np_random.bit_generator.state == before


def test_another_bit_generator_takes_the_general_path():
    rng = np.random.Generator(np.random.MT19937(4))
    assert _pcg64.read(rng.bit_generator) is None
    state = snapshot.rng_state(rng)
    assert snapshot.to_json(state) == snapshot.to_json(_public(rng))  # MT19937 keeps an array
    other = np.random.Generator(np.random.MT19937(5))
    snapshot.apply_rng_state(other, state)
    assert np.array_equal(other.random(3), rng.random(3))

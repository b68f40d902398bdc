"""restore_state over a wrapper stack in one pass: every level checked first, rollback points only
for the levels with state, the RNG written last, and every level tried set back on a failure."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge import snapshot
from bridge.errors import ContractError
from bridge.examples.gridworld import GridWorld

KEEP = "Restore only snapshots that this env's clone_state() made (the env was left as it was)."


class Plain(bridge.Wrapper):
    """A wrapper with no state of its own."""


class Scaled(bridge.Wrapper):
    """A wrapper with state of its own, whose set_state refuses a negative scale."""

    def __init__(self, env: bridge.Env) -> None:
        super().__init__(env)
        self.scale = 1

    def get_state(self) -> dict:
        return {"scale": self.scale}

    def set_state(self, state: dict) -> None:
        if state["scale"] < 0:
            raise ValueError("scale < 0")
        self.scale = state["scale"]


class Counter(bridge.Env):
    """An env with its own clone_state / restore_state (as the exports have): not the protocol's."""

    observation_space = bridge.spaces.Discrete(100)
    action_space = bridge.spaces.Discrete(2)
    determinism = "strong"

    def __init__(self) -> None:
        self.count = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.count = 0
        return self.count, {}

    def step(self, action):
        self.count += 1
        return self.count, 0.0, False, False, {}

    def clone_state(self, *, include_rng: bool = True) -> dict:
        return {"count": self.count}

    def restore_state(self, snapshot: dict) -> None:
        self.count = int(snapshot["count"])


def _stack(rng=None):
    grid = GridWorld()
    grid.reset(seed=3)
    if rng is not None:
        grid.np_random = rng
    env = bridge.TimeLimit(Scaled(Plain(grid)), 50)
    env.step(1)
    return env


def _fingerprint(env):
    """Every level's state and the RNG's, as text."""
    return snapshot.to_json(env.clone_state())


def test_every_level_comes_back_including_the_rng():
    env = _stack()
    env.env.scale = 3
    good = env.clone_state()
    expected = [env.step(a)[0] for a in (2, 2, 0)]
    env.env.scale = 7
    env.unwrapped.np_random.random(5)
    env.restore_state(good)
    assert env.env.scale == 3 and env.elapsed_steps == 1
    assert all(np.array_equal(env.step(a)[0], e) for a, e in zip((2, 2, 0), expected))


def test_a_stateless_wrapper_is_still_checked_before_anything_changes():
    env = _stack()
    good = env.clone_state()
    env.step(2)
    before = _fingerprint(env)
    bad = snapshot.from_json(snapshot.to_json(good))
    bad["env"]["env"]["class"] = "bridge.env.TimeLimit"
    with raises_exactly(
        ContractError,
        f"snapshot must come from {Plain.__module__}.Plain, got bridge.env.TimeLimit. Restore snapshots only into the wrapper stack that made them.",
    ):
        env.restore_state(bad)
    assert _fingerprint(env) == before


@pytest.mark.parametrize("rng", [None, "mt19937"], ids=["pcg64-fast-path", "mt19937-general-path"])
def test_a_middle_level_that_refuses_its_state_sets_every_level_back(rng):
    env = _stack(None if rng is None else np.random.Generator(np.random.MT19937(4)))
    good = env.clone_state()
    env.step(2)
    env.unwrapped.np_random.random(3)  # the RNG has moved since the snapshot
    before = _fingerprint(env)
    bad = {**good, "env": {**good["env"], "state": {"scale": -1}}}  # GridWorld and its RNG apply first
    with raises_exactly(
        ContractError,
        f"snapshot state must be accepted by Scaled.set_state(), got ValueError: scale < 0. {KEEP}",
    ):
        env.restore_state(bad)
    assert _fingerprint(env) == before and env.elapsed_steps == 2


def test_a_level_with_its_own_restore_state_is_set_back_with_its_own_snapshot():
    env = Scaled(Counter())
    env.reset(seed=0)
    env.step(0)
    good = env.clone_state()
    assert good["env"] == {"count": 1}
    for _ in range(3):
        env.step(0)
    with raises_exactly(
        ContractError,
        f"snapshot state must be accepted by Scaled.set_state(), got ValueError: scale < 0. {KEEP}",
    ):
        env.restore_state({**good, "state": {"scale": -1}})
    assert env.unwrapped.count == 4 and env.scale == 1
    env.restore_state(good)
    assert env.unwrapped.count == 1


def test_an_rng_state_with_an_array_inside_is_refused_with_our_message_and_moves_nothing():
    env = _stack()
    good = env.clone_state()
    env.step(2)
    before = _fingerprint(env)
    rng = {**good["env"]["env"]["env"]["rng"], "uinteger": np.array([1, 2])}
    bad = {
        **good,
        "env": {**good["env"], "env": {**good["env"]["env"], "env": {**good["env"]["env"]["env"], "rng": rng}}},
    }
    shown = json.dumps(rng, default=repr)[:80]
    with raises_exactly(
        ContractError,
        f"snapshot RNG must be a PCG64 state from clone_state(), got {shown}. Restore a snapshot of this env.",
    ):
        env.restore_state(bad)
    assert _fingerprint(env) == before

"""Env lifecycle, TimeLimit on the cap step, snapshots (RNG included) and their files."""

from __future__ import annotations

import copy
import json
import os

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge import snapshot, spaces
from bridge.errors import ContractError, SpecError
from bridge.examples import CartPole, GoalReach, GridWorld


class Counter(bridge.Env):
    """Terminates when the counter reaches ``goal``; draws noise from np_random every step."""

    determinism = "strong"

    def __init__(self, goal: int = 3) -> None:
        self.observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.action_space = spaces.Discrete(2)
        self.goal, self.count, self.closed = goal, 0, False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.count = 0
        return np.array([0.0, self.np_random.random()]), {}

    def step(self, action):
        self.count += int(action)
        obs = np.array([float(self.count), self.np_random.random()])
        return obs, float(action), self.count >= self.goal, False, {}

    def close(self):
        self.closed = True

    def get_state(self):
        return {"count": self.count}

    def set_state(self, state):
        self.count = int(state["count"])


def test_reset_seed_reseeds_the_one_generator():
    env = Counter()
    first = env.reset(seed=7)[0]
    assert env.np_random_seed == 7
    assert np.array_equal(env.reset(seed=7)[0], first)
    assert not np.array_equal(env.reset()[0], first)


def test_negative_seed_is_refused():
    with raises_exactly(SpecError, "reset seed must be a non-negative int or None, got -1. Pass e.g. seed=0."):
        Counter().reset(seed=-1)


def test_context_manager_closes():
    with Counter() as env:
        env.reset(seed=0)
    assert env.closed


@pytest.mark.parametrize("cap, goal, expected", [(3, 3, (True, False)), (3, 5, (False, True)), (4, 3, (True, False))])
def test_time_limit_on_the_cap_step(cap, goal, expected):
    env = bridge.TimeLimit(Counter(goal=goal), cap)
    env.reset(seed=0)
    flags = None
    for _ in range(min(cap, goal)):
        _, _, terminated, truncated, _ = env.step(1)
        flags = (terminated, truncated)
    assert flags == expected


def test_time_limit_counter_is_part_of_the_snapshot():
    env = bridge.TimeLimit(Counter(goal=100), 5)
    env.reset(seed=1)
    env.step(1), env.step(1)
    snap = env.clone_state()
    for _ in range(3):
        env.step(0)
    assert env.elapsed_steps == 5
    env.restore_state(snap)
    assert env.elapsed_steps == 2
    assert [env.step(0)[3] for _ in range(3)] == [False, False, True]


def test_time_limit_rejects_a_bad_cap():
    with raises_exactly(SpecError, "TimeLimit max_episode_steps must be an int >= 1, got 0. Pass e.g. 100."):
        bridge.TimeLimit(Counter(), 0)


class _Tagged(bridge.Wrapper):
    tag = "outer"


def test_wrappers_forward_the_env_api_but_not_other_attributes():
    env = _Tagged(bridge.TimeLimit(GridWorld(size=7), 10))
    assert env.unwrapped.size == 7 and env.observation_space is env.unwrapped.observation_space
    with pytest.raises(AttributeError):
        env.size  # noqa: B018 - Gymnasium 1.x's rule: no implicit forwarding
    assert env.get_wrapper_attr("size") == 7  # the innermost layer that has it
    assert env.get_wrapper_attr("max_episode_steps") == 10
    assert env.get_wrapper_attr("tag") == "outer"
    text = (
        "get_wrapper_attr('sise') must name an attribute of a layer of the wrapper stack, "
        "got no layer down to GridWorld with it. Check the spelling, or set the attribute in the env's __init__."
    )
    with raises_exactly(AttributeError, text):
        env.get_wrapper_attr("sise")


def test_snapshot_replays_bit_identically_including_the_rng():
    env = Counter(goal=1000)
    env.reset(seed=3)
    snap = env.clone_state()
    first = [env.step(a)[0] for a in (1, 0, 1, 1)]
    env.restore_state(snap)
    again = [env.step(a)[0] for a in (1, 0, 1, 1)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def test_snapshot_without_rng_leaves_the_generator_alone():
    env = Counter(goal=1000)
    env.reset(seed=3)
    snap = env.clone_state(include_rng=False)
    assert "rng" not in snap
    drawn = env.step(1)[0][1]
    env.restore_state(snap)
    assert env.count == 0 and env.step(1)[0][1] != drawn


def test_clone_state_without_declared_determinism_names_the_declaration():
    class NoSnap(Counter):
        determinism = "none"

    with raises_exactly(
        ContractError,
        "NoSnap.clone_state must have determinism 'strong' or 'weak' declared, got determinism='none' (the default). Set determinism = 'strong' on the class if a restore gives the same future bit for bit, else 'weak'.",
    ):
        NoSnap().clone_state()


def test_clone_state_without_get_state_names_the_missing_methods():
    class Stateless(bridge.Env):
        determinism = "strong"

    with raises_exactly(
        ContractError,
        "Stateless.clone_state must have get_state() and set_state() implemented, got neither overridden. Implement get_state() (plain data) and set_state(), and set determinism = 'strong' on the class.",
    ):
        Stateless().clone_state()


def test_restore_refuses_a_snapshot_of_another_env_class():
    grid = GridWorld()
    grid.reset(seed=0)
    cart = CartPole()
    cart.reset(seed=0)
    with raises_exactly(
        ContractError,
        "snapshot must come from bridge.examples.cartpole.CartPole, got bridge.examples.gridworld.GridWorld. Restore snapshots only into the env class that made them.",
    ):
        cart.restore_state(grid.clone_state())


@pytest.mark.parametrize(
    "make", [lambda: bridge.make("envbridge/GoalReach-v0"), lambda: bridge.make("envbridge/CartPole-v0")]
)
def test_snapshot_round_trips_through_npz_and_json(tmp_path, make):
    env = make()
    env.reset(seed=5)
    for a in range(3):
        env.step(env.action_space.sample(np.random.default_rng(a)))
    snap = env.clone_state()
    path = os.path.join(tmp_path, "snap.npz")
    snapshot.save(path, snap)
    for loaded in (snapshot.load(path), snapshot.from_json(snapshot.to_json(snap))):
        expected = env.step(env.action_space.sample(np.random.default_rng(9)))[0]
        env.restore_state(loaded)
        got = env.step(env.action_space.sample(np.random.default_rng(9)))[0]
        assert json.dumps(snapshot.to_json(got)) == json.dumps(snapshot.to_json(expected))
        env.restore_state(loaded)


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_a_pickled_snapshot_file_is_refused_not_executed(tmp_path):
    path = os.path.join(tmp_path, "evil.npz")
    with open(path, "wb") as f:
        np.savez(f, tree=np.array(json.dumps({"__ndarray__": 0})), a0=np.array([_Boom()], dtype=object))
    with raises_exactly(
        ContractError,
        "snapshot file member 'a0.npy' must hold a plain array (no pickled objects), got dtype object. Recreate it with bridge.snapshot.save.",
    ):
        snapshot.load(path)


def test_snapshot_leaves_must_be_plain_data():
    with raises_exactly(
        SpecError,
        "snapshot leaf must be a dict, list, tuple, ndarray, numpy scalar, str, int, float, bool or None, got object. Convert custom objects to plain data in get_state().",
    ):
        snapshot.to_json({"x": object()})


def test_restore_state_is_equivalent_to_a_deepcopy():
    env = CartPole()
    env.reset(seed=0)
    twin = copy.deepcopy(env)
    snap = env.clone_state()
    env.step(1)
    env.restore_state(snap)
    assert np.array_equal(env.step(0)[0], twin.step(0)[0])


def test_goal_env_compute_reward_works_on_one_goal_and_a_batch():
    env = GoalReach()
    obs, _ = env.reset(seed=0)
    one = env.compute_reward(obs["achieved_goal"], obs["desired_goal"], {})
    batch = env.compute_reward(np.stack([obs["achieved_goal"]] * 3), np.stack([obs["desired_goal"]] * 3), [{}] * 3)
    assert np.shape(one) == () and batch.shape == (3,) and np.all(batch == one)

"""The facade's per-step path after its fast paths: no aliasing of the user's buffers, the same
element values for every index type, and the general path still behind every fast path."""

from __future__ import annotations

import copy
import functools
import re

import numpy as np
import pytest
from bridge.adapters.matlab import rlFiniteSetSpec, rlFunctionEnv, rlFunctionVectorEnv, rlNumericSpec

from bridge.errors import ContractError


def _in_place_env(**kwargs):
    """A step function that mutates its state in place and returns that very array."""

    def step(action, info):
        state = info["State"]
        state += action  # the same buffer every step
        return state, 1.0, False, info

    def reset():
        state = np.zeros((2, 1))
        return state, {"State": state}

    return rlFunctionEnv(rlNumericSpec([2, 1]), rlFiniteSetSpec([-1.0, 1.0]), step, reset, **kwargs)


def test_a_returned_observation_never_aliases_the_users_state():
    env = _in_place_env()
    first, _ = env.reset(seed=0)
    obs1 = env.step(1)[0]
    obs2 = env.step(1)[0]
    assert first.tolist() == [[0.0], [0.0]]
    assert obs1.tolist() == [[1.0], [1.0]] and obs2.tolist() == [[2.0], [2.0]]
    assert not np.shares_memory(obs2, env.Info["State"])


def test_a_copied_facade_steps_its_own_info_and_lifecycle():
    env = _in_place_env()
    env.reset(seed=0)
    env.step(1)
    twin = copy.deepcopy(env)
    twin.step(1)
    twin.step(1)
    assert env.Info["State"].tolist() == [[1.0], [1.0]] and twin.Info["State"].tolist() == [[3.0], [3.0]]
    twin.close()
    assert env.step(0)[0].tolist() == [[0.0], [0.0]]  # the original is still running
    with pytest.raises(ContractError):
        twin.step(1)


@pytest.mark.parametrize(
    "copier",
    [
        lambda env: copy.deepcopy(functools.partial(env.step)).func.__self__,
        lambda env: copy.deepcopy(env.step).__self__,
    ],
    ids=["partial-step", "step"],
)
def test_a_facade_reached_through_its_step_still_copies_whole(copier):
    env = _in_place_env()
    env.reset(seed=0)
    env.step(1)
    twin = copier(env)
    twin.step(1)
    assert env.Info["State"].tolist() == [[1.0], [1.0]] and twin.Info["State"].tolist() == [[2.0], [2.0]]


@pytest.mark.parametrize("index", [0, 1, np.int64(1), np.int32(0), np.uint8(1)])
def test_every_index_type_reaches_the_same_element(index):
    seen = []

    def step(action, info):
        seen.append(action)
        return np.zeros((2, 1)), 0.0, False, info

    env = rlFunctionEnv(rlNumericSpec([2, 1]), rlFiniteSetSpec([-10.0, 10.0]), step, lambda: (np.zeros((2, 1)), {}))
    env.reset(seed=0)
    seen.clear()
    env.step(index)
    assert seen == [[-10.0, 10.0][int(index)]] and type(seen[0]) is np.float64


def test_unchecked_actions_keep_the_index_conversion_of_the_spec():
    env = _in_place_env(check_actions=False)
    env.reset(seed=0)
    assert env.step(1.0)[0].tolist() == [[1.0], [1.0]]  # not a table key type: spec.element(int(1.0))
    assert env.step(-1)[0].tolist() == [[2.0], [2.0]]  # -1 is the last element, as numpy indexing


def test_the_general_paths_still_refuse_bad_outputs():
    outputs = {"out": (np.zeros((2, 1)), 1.0, False, {})}
    env = rlFunctionEnv(
        rlNumericSpec([2, 1]), rlFiniteSetSpec([0.0, 1.0]), lambda a, i: outputs["out"], lambda: (np.zeros((2, 1)), {})
    )
    env.reset(seed=0)
    outputs["out"] = (np.zeros((2, 1)), np.float32(2.0), np.uint8(1), {})  # converted, not refused
    obs, reward, terminated, _, _ = env.step(0)
    assert (type(reward), reward, terminated) == (float, 2.0, True)
    env.reset()
    outputs["out"] = [np.zeros((2, 1)), 1.0, False, {}]
    msg = "StepFcn must return 4 outputs (NextObservation, Reward, IsDone, Info), got 1 output (list). "
    msg += "End it with: return next_observation, reward, is_done, info."
    with pytest.raises(ContractError, match=f"^{re.escape(msg)}$"):
        env.step(0)


def test_batched_outputs_never_alias_the_users_buffers():
    n = 3

    def setup(num):
        return {"State": np.zeros((num, 2, 1)), "Reward": np.zeros(num), "Done": np.zeros(num, dtype=bool)}

    def reset(data, mask):
        data["State"][mask] = 0.0
        return data["State"], data

    def step(action, data):
        data["State"] += 1.0  # every buffer is reused in place
        data["Reward"][:] = data["State"][:, 0, 0]
        return data["State"], data["Reward"], data["Done"], data

    venv = rlFunctionVectorEnv(rlNumericSpec([2, 1]), rlFiniteSetSpec([0.0, 1.0]), step, reset, setup, NumEnv=n)
    venv.reset(seed=0)
    obs, rewards, terminated, _, _ = venv.step(np.zeros(n, dtype=np.int64))
    venv.step(np.zeros(n, dtype=np.int64))
    assert obs[:, 0, 0].tolist() == [1.0] * n and rewards.tolist() == [1.0] * n
    assert terminated.tolist() == [False] * n
    for mine, theirs in ((obs, "State"), (rewards, "Reward"), (terminated, "Done")):
        assert not np.shares_memory(mine, venv.EnvData[theirs])

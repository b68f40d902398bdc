"""Values that were accepted and silently dropped, overwritten or aliased (issue 28, families 4 and 6).

Each family is a table: masked arrays of every kind and mask through every action check, Dict keys
named twice in every constructor form, step outputs (NaN / inf rewards, info that is not a dict)
through the single-env guard and both vector paths, and an env that reuses its observation buffer
under SB3's DummyVecEnv, whose ``terminal_observation`` must be the last observation, not the reset.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from support import probe_export, raises_exactly, require
from toy_envs.scripted import BufferReuser, ScriptedOutput

import bridge
from bridge import spaces
from bridge.errors import ContractError, SpecError

MASK_TEXT = (
    "must be a plain numpy array (a mask hides values from the bounds check, not from the env), "
    "got a numpy.ma.MaskedArray."
)
SPACE_FIX = "Pass np.ma.getdata(value) or value.filled(fill)."
MASKED = [
    (spaces.Box(-1, 1, (2,), np.float32), np.ma.array(np.array([5.0, 0.0], np.float32), mask=[True, False])),
    (spaces.Box(-1, 1, (2,), np.float32), np.ma.array(np.array([0.0, 0.0], np.float32), mask=[False, False])),
    (spaces.Box(-1, 1, (2,), np.float32), np.ma.array(np.array([np.nan, 0.0], np.float32), mask=[True, True])),
    (spaces.Box(0, 10, (3,), np.int64), np.ma.array(np.array([99, 1, 2]), mask=[True, False, False])),
    (spaces.Box(-1, 1, (2, 2), np.float64), np.ma.masked_greater(np.array([[5.0, 0], [0, 0]]), 1)),
    (spaces.MultiDiscrete([3, 3]), np.ma.array(np.array([7, 0]), mask=[True, False])),
    (spaces.MultiBinary(2), np.ma.array(np.array([2, 0], np.int8), mask=[True, False])),
    (spaces.Discrete(3), np.ma.array(7, mask=True)),
    (spaces.Discrete(3), np.ma.array(1, mask=False)),
    (spaces.Box(-1, 1, (1,), np.float32), np.ma.masked_invalid(np.array([np.inf], np.float32))),
]


@pytest.mark.parametrize("space, value", MASKED, ids=[f"{type(s).__name__}-{i}" for i, (s, _) in enumerate(MASKED)])
def test_a_masked_array_is_never_in_a_space(space, value):
    assert not space.contains(value)
    assert space.mismatch(value, "action") == (
        "action",
        "be a plain numpy array (a mask hides values from the bounds check, not from the env)",
        "a numpy.ma.MaskedArray",
        "Pass np.ma.getdata(value) or value.filled(fill)",
    )


@pytest.mark.parametrize("value", [v for s, v in MASKED if s == MASKED[0][0]])
def test_a_masked_action_is_refused_by_the_guarded_exports_before_the_env_moves(value):
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    env = to_gymnasium(ScriptedOutput())
    env.reset(seed=0)
    with raises_exactly(
        ContractError,
        f"action {MASK_TEXT} Pass np.ma.getdata(action) (what the env would get) or action.filled(value).",
    ):
        env.step(value)
    assert env.neutral.steps == 0
    vec = bridge.vectorize(ScriptedOutput, 2)
    vec.reset(seed=0)
    batch = np.ma.array(np.stack([value.data, value.data]), mask=np.stack([value.mask, value.mask]))
    with raises_exactly(ContractError, f"actions {MASK_TEXT} {SPACE_FIX}"):
        vec.step(batch)


DUPLICATE_KEYS = [
    lambda: spaces.Dict([("a", spaces.Discrete(2)), ("a", spaces.Discrete(3))]),
    lambda: spaces.Dict([("a", spaces.Discrete(2)), ("b", spaces.Discrete(2)), ("a", spaces.Discrete(2))]),
    lambda: spaces.Dict({"a": spaces.Discrete(2)}, a=spaces.Discrete(3)),
    lambda: spaces.Dict([("a", spaces.Discrete(2))], a=spaces.Discrete(2)),
    lambda: spaces.Dict((("a", spaces.Box(0, 1)), ("a", spaces.Box(0, 1)))),
    lambda: spaces.Dict([("a", spaces.Dict([("x", spaces.Discrete(2)), ("x", spaces.Discrete(2))]))]),
    lambda: spaces.Dict(iter([("a", spaces.Discrete(2)), ("a", spaces.Discrete(2))])),
    lambda: spaces.Dict([("a", spaces.Discrete(2)), ("a", spaces.MultiBinary(2))]),
    lambda: spaces.Dict([("", spaces.Discrete(2)), ("", spaces.Discrete(2))]),
    lambda: spaces.Dict([("a b", spaces.Discrete(2)), ("a b", spaces.Discrete(2))]),
]


@pytest.mark.parametrize("build", DUPLICATE_KEYS, ids=[f"form-{i}" for i in range(len(DUPLICATE_KEYS))])
def test_a_dict_key_named_twice_is_refused_not_overwritten(build):
    with pytest.raises(
        SpecError, match=r"^Dict key must name one entry, got '.*' twice\. Give every entry its own key\.$"
    ):
        build()


REWARD = "step reward must be finite, got {}. Guard the reward computation against NaN and inf."
INFO = "step info must be a dict, got {}. Return {{}} when there is nothing to report."
OUTPUTS = [  # (reward, info, the message's tail after the subject)
    (float("nan"), {}, REWARD.format("nan")),
    (float("inf"), {}, REWARD.format("inf")),
    (float("-inf"), {}, REWARD.format("-inf")),
    (0.0, None, INFO.format("NoneType None")),
    (0.0, [], INFO.format("list []")),
    (0.0, "info", INFO.format("str 'info'")),
    (0.0, (("a", 1),), INFO.format("tuple (('a', 1),)")),
    (float("nan"), None, REWARD.format("nan")),  # the reward is checked first
    (1e308 * 10, {}, REWARD.format("inf")),
    (0.0, 0, INFO.format("int 0")),
]


@pytest.mark.parametrize("reward, info, tail", OUTPUTS)
@pytest.mark.parametrize("where", ["guard", "sync", "process"])
def test_a_bad_step_output_is_refused_by_the_guard_and_both_vector_paths(where, reward, info, tail):
    make = functools.partial(ScriptedOutput, reward=reward, info=info)
    if where == "guard":
        guard = probe_export(make())
        guard.reset(seed=0)
        with raises_exactly(ContractError, f"ScriptedOutput {tail}"):
            guard.step(np.zeros(2, np.float32))
        return
    vec = bridge.vectorize(make, 2, workers=where) if where == "process" else bridge.vectorize(make, 2)
    try:
        vec.reset(seed=0)
        name = "env 0 (<ScriptedOutput>)" if where == "process" else "env 0"
        with raises_exactly(ContractError, f"{name} {tail}"):
            vec.step(np.zeros((2, 2), np.float32))
    finally:
        vec.close()


@pytest.mark.parametrize("episode_steps", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("end", ["terminated", "truncated"])
def test_dummy_vec_env_keeps_the_last_observation_of_an_env_that_reuses_its_buffer(episode_steps, end):
    require("stable_baselines3")
    from bridge.adapters.gymnasium import to_gymnasium
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: to_gymnasium(BufferReuser(episode_steps, end))])
    vec.reset()
    for _ in range(episode_steps):
        _, _, dones, infos = vec.step(np.zeros((1, 2), np.float32))
    assert dones[0]
    last = np.full(2, episode_steps / 10, np.float32)
    assert infos[0]["terminal_observation"].tolist() == last.tolist()  # not the reset's zeros
    vec.close()

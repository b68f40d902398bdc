"""to_dreamerv2 and check: DreamerV2's own chain over the Dreamer-ready env (no training here)."""

from __future__ import annotations

import logging
import os
import sys

import numpy as np
import pytest
from support import raises_exactly, require
from toy_envs.scripted import DictEndsAsTold

gym = require("gym")
tf = require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import (  # noqa: E402
    DreamerReadyEnv,
    check,
    dreamer_config,
    load_dreamerv2,
    to_dreamer_ready,
    to_dreamerv2,
    wrap_chain,
)
from bridge.adapters.dreamerv2.actions import ChainActions  # noqa: E402
from bridge.adapters.gym import to_gym  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces as S  # noqa: E402
from bridge.env import Env, TimeLimit  # noqa: E402
from bridge.errors import ContractError, ConversionError, SpecError  # noqa: E402
from bridge.examples import CartPole, GoalReach, GridWorld, MultiModal, PixelGrid, PointMass  # noqa: E402

api = load_dreamerv2()  # once per session: TensorFlow's import is slow
common = api.common
EXAMPLES = [GridWorld, PointMass, PixelGrid, MultiModal, GoalReach, CartPole]


class Awkward(Env):
    """Every shape DreamerV2's encoder would silently drop, plus an image and nesting."""

    def __init__(self):
        self.observation_space = S.Dict(
            column=S.Box(-1.0, 1.0, (4, 1), np.float32),
            scalar=S.Box(0.0, 1.0, (), np.float32),
            plane=S.Box(-1.0, 1.0, (3, 5), np.float32),
            mode=S.Discrete(3, start=2),
            switches=S.MultiBinary((2, 2)),
            camera=S.Image(64, 64, 3),
            body=S.Dict(joints=S.MultiDiscrete(np.array([3, 4]))),
        )
        self.action_space = S.Box(-2.0, 3.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(self.np_random), {}

    def step(self, action):
        return self.observation_space.sample(self.np_random), 0.0, False, False, {}


def _layers(chain):
    out = [chain]
    while hasattr(out[-1], "_env"):
        out.append(out[-1]._env)
    return out


def test_importing_dreamerv2_left_no_side_effects():
    here = os.path.dirname(api.__file__)
    assert here not in sys.path and sys.path.count(os.path.dirname(here)) <= 1
    assert logging.getLogger().level != logging.ERROR
    assert os.environ.get("TF_CPP_MIN_LOG_LEVEL") != "3"


def test_the_chain_is_dreamerv2s_own_classes_in_api_train_order():
    # ChainActions outside: the action is checked before DreamerV2's classes see it
    discrete = [type(x) for x in _layers(to_dreamerv2(GridWorld(), time_limit=7))]
    assert discrete == [
        ChainActions,
        common.TimeLimit,
        common.OneHotAction,
        common.ResizeImage,
        common.GymWrapper,
        DreamerReadyEnv,
    ]
    continuous = [type(x) for x in _layers(to_dreamerv2(PointMass()))]
    assert continuous == [
        ChainActions,
        common.TimeLimit,
        common.NormalizeAction,
        common.ResizeImage,
        common.GymWrapper,
        DreamerReadyEnv,
    ]


@pytest.mark.parametrize("cls", EXAMPLES, ids=lambda c: c.__name__)
def test_every_example_passes_check(cls):
    report = check(cls())
    assert report.ok and report.targets == ["dreamerv2"], str(report)
    both = bridge.check(cls(), targets=["dreamerv2", "gym"])
    assert both.ok, str(both)


def test_check_fails_an_env_that_breaks_its_space_and_reports_lowering_refusals():
    class Liar(PointMass):
        def step(self, action):
            obs, reward, terminated, truncated, info = super().step(action)
            return obs.astype(np.float64), reward, terminated, truncated, info

    report = check(Liar())
    # the export itself refuses the float64 observation (dtype and shape are checked at every export)
    assert [p.check for p in report.errors] == ["export"]
    assert report.errors[0].message == "Liar step observation must have dtype float32, got dtype float64."
    refused = check(DictEndsAsTold([(False, False)], S.Box(-np.inf, np.inf, (1,), np.float32)))
    assert [p.message for p in refused.errors] == [
        "action[0] must have finite bounds for DreamerV2's NormalizeAction (it passes unbounded "
        "dims through unscaled), got [-inf, inf]."
    ]
    assert check(DictEndsAsTold([(False, False)], S.Box(-np.inf, np.inf, (1,), np.float32)), action_bounds=(-4, 4)).ok


def test_soft_one_hot_is_refused_by_the_chain_and_does_not_advance_the_env():
    env = DictEndsAsTold([(False, False)])
    chain = to_dreamerv2(env, seed=0)
    chain.reset()
    soft = {"action": np.array([0.5, 0.5, 0.0], np.float32)}
    with raises_exactly(
        ContractError,
        "the DreamerV2 chain's action['action'] must be a one-hot numpy array of shape (3,) (one 1, every other "
        "value 0), got array([0.5, 0.5, 0. ], shape=(3,), dtype=float32). Send np.eye(3, dtype=np.float32)[index] "
        "for an index in [0, 2].",
    ):
        chain.step(soft)
    assert env.actions == []
    chain.step({"action": np.array([0.0, 0.0, 1.0], np.float32)})
    assert env.actions == [1]  # index 2 of Discrete(3, start=-1)


def test_out_of_range_continuous_action_raises_before_the_env_moves():
    env = DictEndsAsTold([(False, False)], S.Box(-2.0, 2.0, (2,), np.float32))
    chain = to_dreamerv2(env)
    chain.reset()
    text = (
        "the Dreamer-ready action must be a float array of shape (2,) inside [low, high] = [-2.0, 2.0], "
        "got array([0., 3.], shape=(2,), dtype=float32). Send values in [-1, 1] through DreamerV2's NormalizeAction."
    )
    with raises_exactly(ContractError, text):
        chain.step({"action": np.array([0.0, 1.5], np.float32)})
    assert env.actions == []


def test_failed_export_leaves_nothing_half_wrapped():
    env = DictEndsAsTold([(False, False)], S.Tuple([S.Discrete(2), S.Box(-1, 1, (1,))]))
    before = dict(vars(env))
    with pytest.raises(ConversionError):
        to_dreamerv2(env)
    with pytest.raises(ConversionError):
        to_dreamerv2(env, parallel="thread")
    assert vars(env) == before
    with raises_exactly(
        SpecError,
        "to_dreamerv2 parallel must be one of [None, 'thread', 'process'], got 'fork'. Pass "
        "one of [None, 'thread', 'process'].",
    ):
        to_dreamerv2(GridWorld(), parallel="fork")


def test_episode_ends_time_out_is_last_only_termination_both():
    ends = [(False, False), (False, True), (True, False), (True, True)]
    one_hot = {"action": np.array([1.0, 0.0, 0.0], np.float32)}
    rows = []
    for end in ends:  # one episode per ending: a step after the end is refused (bridge.guard)
        chain = to_dreamerv2(DictEndsAsTold([end]))
        first = chain.reset()
        assert (first["reward"], first["is_first"], first["is_last"], first["is_terminal"]) == (0.0, True, False, False)
        o = chain.step(one_hot)
        rows.append((o["is_first"], o["is_last"], o["is_terminal"]))
    assert rows == [(False, False, False), (False, True, False), (False, True, True), (False, True, True)]
    assert all(type(v) is bool for row in rows for v in row)
    cut = to_dreamerv2(DictEndsAsTold([(False, False)]), time_limit=2)
    cut.reset()
    assert [(o["is_last"], o["is_terminal"]) for o in (cut.step(one_hot) for _ in range(2))] == [
        (False, False),
        (True, False),
    ]


def test_every_observation_key_reaches_dreamerv2s_encoder(tmp_path):
    ready = to_dreamer_ready(Awkward())
    chain = wrap_chain(ready)
    shapes = {k: tuple(v.shape) for k, v in chain.obs_space.items()}
    user = ["column", "scalar", "plane", "mode", "switches", "camera", "body/joints"]
    assert all(len(shapes[k]) in (1, 3) for k in user)
    config = dreamer_config(ready, {"logdir": str(tmp_path / "unused")})
    encoder = common.Encoder(shapes, **config.encoder)
    decoder = common.Decoder(shapes, **config.decoder)
    assert encoder.cnn_keys == decoder.cnn_keys == ["camera"]
    assert sorted(encoder.mlp_keys) == sorted(decoder.mlp_keys) == sorted(k for k in user if k != "camera")
    assert config.encoder.mlp_keys == "^(column|scalar|plane|mode|switches|body/joints)$"
    assert _layers(chain)[1]._keys == []  # ResizeImage touches no vector (the camera is 64x64 already)
    # the traps we remove: DreamerV2's defaults over the raw shapes drop the column, scalar and plane,
    # and ResizeImage would "resize" the 2-D plane and the column as if they were images
    raw = {"column": (4, 1), "scalar": (), "plane": (3, 5), "reward": ()}
    assert common.Encoder(raw, **api.defaults.encoder).mlp_keys == []
    raw_env = type("Raw", (), {"obs_space": {k: gym.spaces.Box(-1, 1, v, np.float32) for k, v in raw.items()}})()
    assert common.ResizeImage(raw_env)._keys == ["column", "plane"]


def test_derived_config_and_config_errors(tmp_path):
    ready = to_dreamer_ready(GridWorld())
    config = dreamer_config(ready, {"dataset": {"batch": 4}, "rssm.deter": 16}, steps=50, logdir=str(tmp_path / "x"))
    # prefill 25 (half the steps): one eval chunk of the 25 steps after it
    assert (config.dataset.batch, config.rssm.deter, config.steps, config.eval_every) == (4, 16, 50, 25)
    assert config.precision == 32 and config.log_keys_video == ("action",)
    assert (config.encoder.cnn_keys, config.encoder.mlp_keys) == ("^$", "^(vector)$")
    assert dreamer_config(to_dreamer_ready(MultiModal())).log_keys_video == ("image",)
    assert dreamer_config(ready, {"encoder.mlp_keys": ".*"}).encoder.mlp_keys == ".*"  # explicit wins
    with raises_exactly(
        SpecError,
        "DreamerV2 config key 'datset.batch' must be a key of dreamerv2/configs.yaml 'defaults', "
        "got 'datset.batch'. Did you mean 'dataset.batch', 'dataset.length'?",
    ):
        dreamer_config(ready, {"datset": {"batch": 4}})
    with raises_exactly(
        SpecError,
        "DreamerV2 config dataset.batch must be an int >= 1, got 'many'. Pass a whole number in range.",
    ):
        dreamer_config(ready, {"dataset.batch": "many"})


def _tape(space, seed, n):
    rng = np.random.default_rng(seed)
    if isinstance(space, S.Box):  # multiples of 1/8: exact through NormalizeAction's float32 map
        return [(rng.integers(-8, 9, space.shape) / 8).astype(space.dtype) for _ in range(n)]
    return [space.sample(rng) for _ in range(n)]


def _dreamer_action(ready, action):
    index = ready.encode_action(action)
    if ready.action_lowering.discrete:
        one_hot = np.zeros(ready.action_space.n, np.float32)
        one_hot[index] = 1.0
        return {"action": one_hot}
    low, high = (b.astype(np.float64) for b in ready.action_lowering.bounds)
    return {"action": ((np.asarray(index, np.float64) - low) / (high - low) * 2 - 1).astype(np.float32)}


def _streams(make, seed, tape):
    neutral, exported, ready = make(), to_gym(make()), to_dreamer_ready(make(), seed=seed)
    chain = wrap_chain(ready)
    views = {"neutral": [], "gym": [], "dreamerv2": []}
    obs, _ = neutral.reset(seed=seed)
    views["neutral"].append((obs, 0.0, False, False))
    views["gym"].append((exported.decode_observation(exported.reset(seed=seed)), 0.0, False, False))
    views["dreamerv2"].append((ready.decode_observation(chain.reset()), 0.0, False, False))
    for action in tape:
        obs, reward, terminated, truncated, _ = neutral.step(action)
        views["neutral"].append((obs, float(reward), terminated, truncated and not terminated))
        g_obs, g_reward, done, info = exported.step(action)
        views["gym"].append(
            (exported.decode_observation(g_obs), g_reward, info["is_terminal"], info["TimeLimit.truncated"])
        )
        d_obs = chain.step(_dreamer_action(ready, action))
        views["dreamerv2"].append(
            (
                ready.decode_observation(d_obs),
                d_obs["reward"],
                d_obs["is_terminal"],
                d_obs["is_last"] and not d_obs["is_terminal"],
            )
        )
        assert done == d_obs["is_last"] == (terminated or truncated)
        if terminated or truncated:
            views["neutral"].append((neutral.reset()[0], 0.0, False, False))
            views["gym"].append((exported.decode_observation(exported.reset()), 0.0, False, False))
            views["dreamerv2"].append((ready.decode_observation(chain.reset()), 0.0, False, False))
    return views


def _same(a, b):
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (np.ndarray, np.generic)):
        b = np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("cls", EXAMPLES, ids=lambda c: c.__name__)
def test_differential_one_seed_one_tape_three_identical_streams(cls):
    make = lambda: TimeLimit(cls(), 12)  # noqa: E731 - a factory per view
    views = _streams(make, 3, _tape(make().action_space, 3, 40))
    ends = sum(1 for row in views["neutral"] if row[2] or row[3])
    assert ends >= 3 and len(views["neutral"]) == len(views["gym"]) == len(views["dreamerv2"])
    for i, (n, g, d) in enumerate(zip(views["neutral"], views["gym"], views["dreamerv2"])):
        assert _same(n[0], g[0]) and _same(n[0], d[0]), (cls.__name__, i)
        assert n[1:] == g[1:] == d[1:], (cls.__name__, i, n[1:], g[1:], d[1:])


@pytest.mark.timeout(120)  # a dead worker must fail this test, not hang CI
@pytest.mark.parametrize("parallel", ["thread", "process"])
def test_parallel_builds_the_whole_chain_in_the_worker(parallel):
    env = "envbridge/GridWorld-v0" if parallel == "process" else GridWorld()
    remote = to_dreamerv2(env, parallel=parallel, seed=5)
    local = to_dreamerv2(GridWorld(), seed=5)
    try:
        assert isinstance(remote, common.Async)
        assert list(remote.act_space) == ["action"] and remote.act_space["action"].shape == (4,)
        assert _same(remote.reset(blocking=True)["vector"], local.reset()["vector"])
        for index in [0, 3, 1, 2, 2]:
            action = {"action": np.eye(4, dtype=np.float32)[index]}
            a, b = remote.step(action, blocking=True), local.step(action)
            assert _same(a["vector"], b["vector"]) and (a["reward"], a["is_last"]) == (b["reward"], b["is_last"])
    finally:
        remote.close()

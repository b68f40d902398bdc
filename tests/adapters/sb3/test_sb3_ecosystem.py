"""The SB3 exports behave as SB3's own DummyVecEnv does (issue 29, SB3 side): list actions, the
exact-cast rule, buildable Dict keys, sub-env attributes and methods, HER on the batch, one env
instance per slot, and the batched VecEnv's render, set_attr, set_options, reset_infos and infos."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

require("stable_baselines3")

from bridge.adapters.sb3 import make_vec_env  # noqa: E402
from stable_baselines3 import HerReplayBuffer  # noqa: E402
from stable_baselines3.common.policies import MultiInputActorCriticPolicy  # noqa: E402
from stable_baselines3.common.vec_env.base_vec_env import tile_images  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.examples import GoalReach, GridWorld, PointMass  # noqa: E402

PATHS = ["scalar", "batched"]


def _vec(env_cls, path: str, n: int = 3, **kwargs):
    """SB3's DummyVecEnv over scalar exports, or the batched VecEnv over a bridge.SyncVectorEnv."""
    if path == "scalar":
        return make_vec_env(lambda: env_cls(**kwargs), n_envs=n, seed=0)
    return make_vec_env(bridge.SyncVectorEnv([lambda: env_cls(**kwargs)] * n), seed=0)


@pytest.mark.parametrize("path", PATHS)
def test_a_list_of_per_env_actions_steps_like_an_array(path):
    listed, arrayed = _vec(GridWorld, path), _vec(GridWorld, path)
    assert np.array_equal(listed.reset(), arrayed.reset())
    for actions in ([0, 1, 2], [3, 3, 0], [np.int64(1), 2, 0]):
        got, want = listed.step(list(actions)), arrayed.step(np.array(actions))
        for a, b in zip(got[:3], want[:3]):
            assert np.array_equal(a, b)
    listed.close(), arrayed.close()


@pytest.mark.parametrize("path", PATHS)
def test_float64_actions_are_taken_when_float32_holds_them_exactly(path):
    vec = _vec(PointMass, path, n=2)
    vec.reset()
    vec.step(np.array([[0.5, -0.25], [0.0, 1.0]], dtype=np.float64))  # exact in float32: accepted
    with raises_exactly(
        bridge.ContractError,
        "actions must hold values float32 represents exactly (a cast that rounds is refused), "
        "got dtype float64 values that round. Round them yourself: .astype(np.float32).",
    ):
        vec.step(np.array([[0.1, 0.0], [0.0, 0.0]], dtype=np.float64))
    vec.close()


class Arm(bridge.Env):
    """A nested Dict observation: flattened to keys SB3's MultiInputPolicy can build."""

    def __init__(self):
        box = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = spaces.Dict({"arm": spaces.Dict({"angle": box, "speed": box}), "pos": box})
        self.action_space = spaces.Discrete(2)

    def _obs(self):
        z = np.zeros(2, np.float32)
        return {"arm": {"angle": z, "speed": z}, "pos": z}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action):
        return self._obs(), 0.0, False, False, {}


@pytest.mark.parametrize("path", PATHS)
def test_nested_dict_keys_build_sb3s_multi_input_policy_as_the_check_advises(path):
    vec = _vec(Arm, path, n=2)
    assert sorted(vec.observation_space.spaces) == ["arm/angle", "arm/speed", "pos"]
    policy = MultiInputActorCriticPolicy(vec.observation_space, vec.action_space, lambda _: 1e-3)
    assert sorted(policy.features_extractor.extractors) == ["arm/angle", "arm/speed", "pos"]
    report = bridge.check(Arm(), targets=["sb3"])
    assert [p.fix for p in report.problems if p.check == "policy"] == [
        "Train with e.g. PPO('MultiInputPolicy', vec_env)."
    ]
    vec.close()


class Dotted(Arm):
    def __init__(self):
        super().__init__()
        self.observation_space = spaces.Dict({"a.b": spaces.Box(-1.0, 1.0, (2,), np.float32)})

    def _obs(self):
        return {"a.b": np.zeros(2, np.float32)}


def test_the_check_refuses_a_key_multi_input_policy_cannot_build():
    report = bridge.check(Dotted(), targets=["sb3"])
    found = [(p.message, p.fix) for p in report.problems if p.check == "policy"]
    assert found == [
        (
            "observation key 'a.b' must not contain '.' (SB3's MultiInputPolicy builds one torch module per key), "
            "got 'a.b'.",
            "Rename the key, e.g. with '_' or '/'.",
        )
    ]


@pytest.mark.parametrize("path", PATHS)
def test_get_attr_set_attr_and_env_method_reach_the_user_env(path):
    vec = _vec(GridWorld, path, size=6)
    vec.reset()
    assert vec.get_attr("size") == [6, 6, 6]
    vec.set_attr("size", 7, indices=1)
    assert vec.get_attr("size") == [6, 7, 6] and vec.get_attr("size", indices=[1, 2]) == [7, 6]
    assert vec.env_method("_obs", indices=0)[0].dtype == np.float32
    assert vec.has_attr("goal") and not vec.has_attr("no_such_attribute")
    vec.close()


def test_her_relabels_through_the_batched_vec_envs_compute_reward():
    vec = make_vec_env(bridge.SyncVectorEnv([lambda: bridge.TimeLimit(GoalReach(), 5)] * 2), seed=0)
    buffer = HerReplayBuffer(64, vec.observation_space, vec.action_space, env=vec, n_envs=2, n_sampled_goal=2)
    obs = vec.reset()
    vec.action_space.seed(0)
    for _ in range(12):
        actions = np.stack([vec.action_space.sample() for _ in range(2)])
        new_obs, rewards, dones, infos = vec.step(actions)
        buffer.add(obs, new_obs, actions, rewards, dones, infos)
        obs = new_obs
    sample = buffer.sample(8)  # relabelled goals: rewards recomputed by the user env's compute_reward
    assert sample.rewards.shape == (8, 1)
    vec.close()


def test_one_env_instance_in_several_slots_is_refused_like_sb3_does():
    env = GridWorld()
    text = (
        "env 1 must be its own instance (every slot steps its env once a batch), got the instance of env 0 again. "
        "Pass a factory that builds a new env on every call, e.g. lambda: MyEnv(), not lambda: env."
    )
    with raises_exactly(bridge.SpecError, text):
        make_vec_env(lambda: env, n_envs=3)
    with raises_exactly(bridge.SpecError, text):
        bridge.SyncVectorEnv([lambda: env] * 3)
    assert isinstance(bridge.SpecError("x"), ValueError)  # SB3 raises ValueError: except clauses still work


def test_the_batched_vec_env_renders_resets_and_reports_like_dummy_vec_env():
    vec = make_vec_env(bridge.SyncVectorEnv([lambda: GridWorld(render_mode="rgb_array")] * 2), seed=0)
    obs = vec.reset()
    assert [info["distance"] for info in vec.reset_infos] == [type_checked(i["distance"]) for i in vec.reset_infos]
    frame = vec.render()
    assert np.array_equal(frame, tile_images(vec.get_images())) and frame.dtype == np.uint8
    assert [image.shape for image in vec.get_images()] == [(80, 80, 3)] * 2
    ended = set()
    for _ in range(12):  # a walk straight to the goal takes at most 8 steps on the 5x5 grid: each env ends
        obs, _, dones, infos = vec.step(toward_the_goal(obs))
        assert all(info["TimeLimit.truncated"] is False for info in infos)  # on every env
        assert all(type(info["distance"]) is int for info in infos)  # not a numpy scalar
        for i in np.flatnonzero(dones):
            ended.add(i)
            assert "terminal_observation" in infos[i] and type(vec.reset_infos[i]["distance"]) is int
    assert ended == {0, 1}
    with raises_exactly(
        bridge.SpecError,
        "set_options options must be one options dict for every env of a batched VecEnv (they reset as one batch), "
        "got 2 differing dicts. Pass one dict for every env, or build scalar envs (make_vec_env(factory, n_envs)) "
        "for per-env options.",
    ):
        vec.set_options([{"a": 1}, {"a": 2}])
    vec.set_options([{}, {}])
    vec.close()


def toward_the_goal(obs):
    """GridWorld's action (0 up, 1 down, 2 left, 3 right) that moves each agent one cell nearer its
    goal: x first, then y (an observation row is agent x, y, goal x, y)."""
    ax, ay, gx, gy = obs.T
    return np.where(ax != gx, np.where(gx > ax, 3, 2), np.where(gy > ay, 1, 0))


def type_checked(value):
    assert type(value) is int
    return value


class DictAction(Arm):
    def __init__(self):
        super().__init__()
        self.action_space = spaces.Dict({"a": spaces.Discrete(2), "b": spaces.Discrete(3)})


def test_a_dict_action_is_refused_when_the_batched_vec_env_is_built():
    with pytest.raises(bridge.ConversionError) as caught:
        make_vec_env(bridge.SyncVectorEnv([DictAction] * 2))
    assert str(caught.value).startswith("action space for SB3 must be a single Box, Discrete, MultiDiscrete")

"""to_gym: the gym 0.23.1 API, lossless spaces, episode ends, seeding, invalid actions, registry."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from support import raises_exactly, require
from toy_envs.scripted import EndsAsTold

gym = require("gym")
env_checker = require("gym.utils.env_checker")

from bridge.adapters.gym import GymEnv, register, to_gym, to_gym_space  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.env import TimeLimit  # noqa: E402
from bridge.errors import ContractError, ConversionError  # noqa: E402
from bridge.examples import CartPole, GoalReach, GridWorld, MultiModal, PixelGrid, PointMass  # noqa: E402

EXAMPLES = [GridWorld, PointMass, PixelGrid, MultiModal, GoalReach, CartPole]


@pytest.mark.parametrize("cls", EXAMPLES, ids=lambda c: c.__name__)
def test_every_example_passes_gyms_own_checker_and_the_gym_profile(cls):
    report = bridge.check(cls(), targets=["gym"])
    assert report.ok, str(report)
    env_checker.check_env(gym.wrappers.OrderEnforcing(to_gym(cls())), warn=False)


def test_the_gym_profile_fails_an_env_that_breaks_its_observation_space():
    class Liar(CartPole):
        def step(self, action):
            obs, reward, terminated, truncated, info = super().step(action)
            return obs.astype(np.float64), reward, terminated, truncated, info

    report = bridge.check(Liar(), targets=["gym"])
    messages = [p.message for p in report.for_target("gym")]
    assert not report.ok
    # the export refuses the float64 observation itself (dtype and shape are checked at every export)
    assert messages[0] == "Liar step observation must have dtype float32, got dtype float64."
    assert report.for_target("gym")[0].fix == "Cast it with .astype(np.float32)."


def test_spaces_convert_losslessly_and_keep_dict_order():
    space = spaces.Dict(
        z=spaces.Box(-np.inf, 2.0, (2, 3), np.float64),
        a=spaces.Tuple([spaces.Discrete(3, start=-1), spaces.MultiBinary((2, 2))]),
        m=spaces.MultiDiscrete(np.array([[2, 3], [4, 5]])),
        img=spaces.Image(8, 6, 1),
    )
    out = to_gym_space(space)
    assert list(out.spaces) == ["z", "a", "m", "img"]
    z = out["z"]
    assert (z.shape, z.dtype) == ((2, 3), np.float64) and np.all(z.low == -np.inf) and np.all(z.high == 2.0)
    d, mb = out["a"].spaces
    assert (d.n, d.start) == (3, -1) and mb.shape == (2, 2) and mb.dtype == np.int8
    assert out["m"].nvec.tolist() == [[2, 3], [4, 5]] and out["m"].dtype == np.int64
    assert (out["img"].shape, out["img"].dtype, int(out["img"].high.max())) == ((8, 6, 1), np.uint8, 255)


def test_multidiscrete_with_start_is_refused_with_the_path():
    space = spaces.Dict(
        pos=spaces.Tuple([spaces.Discrete(2), spaces.MultiDiscrete(np.array([3, 3]), np.array([1, 0]))])
    )
    text = (
        "observation['pos'][1] must be a MultiDiscrete with start 0 for gym 0.23 (its MultiDiscrete has no start), "
        "got start=[1, 0]. Shift the values to start at 0 in the env, or use a Tuple of Discrete(n, start)."
    )
    with raises_exactly(ConversionError, text):
        to_gym_space(space)


def test_step_returns_the_gym_4_tuple_and_maps_episode_ends():
    env = to_gym(EndsAsTold([(False, False), (False, True), (True, False), (True, True)]))
    env.reset(seed=0)
    rows = []
    for _ in range(4):
        obs, reward, done, info = env.step(0)
        assert isinstance(reward, float) and isinstance(done, bool) and obs.dtype == np.float32
        rows.append((done, info["TimeLimit.truncated"], info["is_terminal"], info["t"]))
    # neither; truncated; terminated; both (termination wins)
    assert rows == [(False, False, False, 1), (True, True, False, 2), (True, False, True, 3), (True, False, True, 4)]


def test_neutral_time_limit_through_gym_make_is_a_time_out_not_a_termination():
    register("envbridge-test/Scripted-v0", lambda **kw: EndsAsTold([(False, False)] * 5), max_episode_steps=2)
    env = gym.make("envbridge-test/Scripted-v0")
    env.reset(seed=1)
    assert env.step(1)[2] is False
    _, _, done, info = env.step(1)
    assert done and info["TimeLimit.truncated"] and not info["is_terminal"]
    with pytest.raises(AssertionError, match="Cannot call env.step"):
        gym.make("envbridge-test/Scripted-v0").step(0)  # gym.make's own OrderEnforcing


def test_register_passes_kwargs_and_sets_the_spec():
    register("envbridge-test/Grid-v0", "bridge.examples.gridworld:GridWorld", kwargs={"size": 3})
    env = gym.make("envbridge-test/Grid-v0")
    assert env.spec.id == "envbridge-test/Grid-v0" and env.unwrapped.neutral.size == 3
    assert float(env.observation_space.high.max()) == 2.0


def test_one_generator_reset_seed_and_legacy_seed_reach_the_neutral_env():
    neutral = GridWorld()
    env = to_gym(neutral)
    first = env.reset(seed=7)
    assert env.np_random is neutral.np_random and neutral.np_random_seed == 7
    assert np.array_equal(env.reset(seed=7), first)
    assert env.seed(7) == [7]
    assert np.array_equal(env.reset(), first)  # the pending seed applies once
    expected, _ = GridWorld().reset(seed=7)
    assert np.array_equal(first, expected)
    obs, info = env.reset(seed=3, return_info=True)
    assert info["distance"] == int(np.abs(obs[2:] - obs[:2]).sum())


def test_invalid_action_raises_and_does_not_advance_the_env():
    neutral = EndsAsTold([(False, False)] * 5)
    env = to_gym(neutral)
    env.reset(seed=0)
    with raises_exactly(ContractError, "action must lie in [-1, 1], got 2. Pick one of the 3 values from -1."):
        env.step(2)
    with raises_exactly(
        ContractError,
        "action must be an integer scalar, got 0.5. Pass a Python int or a numpy integer "
        "(floats and bools are refused).",
    ):
        env.step(0.5)
    assert neutral.t == 0 and neutral.actions == []
    env.step(np.array(-1))  # a 0-d integer array is a valid gym action
    assert neutral.actions == [-1]


def test_box_actions_accept_lists_and_same_kind_casts_only():
    neutral = EndsAsTold([(False, False)] * 5, spaces.Box(-1.0, 1.0, (2,), np.float32))
    env = to_gym(neutral)
    env.reset(seed=0)
    env.step([0.5, -0.25])
    assert neutral.actions[-1].dtype == np.float32 and neutral.actions[-1].tolist() == [0.5, -0.25]
    with raises_exactly(
        ContractError,
        "action[1] must lie in [-1.0, 1.0], got 3.0. Clip it into the bounds or widen the space (NaN is never inside).",
    ):
        env.step(np.array([0.0, 3.0]))
    assert len(neutral.actions) == 1
    unchecked = to_gym(EndsAsTold([(False, False)] * 5, spaces.Box(-1.0, 1.0, (2,), np.float32)), check_actions=False)
    unchecked.reset()
    unchecked.step(np.array([0.0, 3.0]))  # the opt-out: no validation


def test_step_before_reset_and_render_mode_mismatch_are_contract_errors():
    env = to_gym(GridWorld(render_mode="rgb_array"))
    with raises_exactly(ContractError, "Cannot call env.step() before calling reset()"):  # gym's words (OrderError)
        env.step(0)
    env.reset(seed=0)
    assert env.render(mode="rgb_array").shape == (80, 80, 3)
    text = (
        "render(mode='human') must ask for the neutral env's render_mode 'rgb_array', got 'human'. "
        "Neutral envs fix the mode at construction: build the env with render_mode=... and render with that mode."
    )
    with raises_exactly(ContractError, text):
        env.render()
    assert env.metadata["render.modes"] == ["rgb_array", "ansi"]


def test_discrete_observations_are_python_ints_and_decode_back():
    env = to_gym(MultiModal())
    obs = env.reset(seed=0)
    assert isinstance(obs, OrderedDict) and type(obs["discrete"]) is int
    assert env.observation_space.contains(obs)
    neutral, _ = MultiModal().reset(seed=0)
    back = env.decode_observation(obs)
    assert back["discrete"] == neutral["discrete"] and back["discrete"].dtype == np.int64
    assert np.array_equal(back["image"], neutral["image"])


def test_lazy_bridge_to_gym_and_registered_ids():
    assert bridge.to_gym is to_gym
    env = to_gym("envbridge/GridWorld-v0")
    assert isinstance(env, GymEnv) and isinstance(env.neutral, TimeLimit) and env.neutral.max_episode_steps == 100

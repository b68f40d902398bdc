"""The RLlib export: registration through RLlib's env registry, the lowering RLlib needs, refusals
(whole messages), the batched export in vector_entry_point mode, the check profile."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")
ray = require("ray")

from bridge.adapters.rllib import register, to_rllib, to_rllib_vector  # noqa: E402
from bridge.adapters.rllib.train import config_for  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.errors import ConversionError, SpecError  # noqa: E402
from bridge.examples import CartPoleVector, GridWorld  # noqa: E402
from bridge.registry import EXAMPLE_IDS  # noqa: E402


class _Spaces(bridge.Env):
    def __init__(self, observation_space, action_space):
        self.observation_space, self.action_space = observation_space, action_space

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(self.np_random), {}

    def step(self, action):
        return self.observation_space.sample(self.np_random), 0.0, True, False, {}


def _box(shape, dtype=np.float32):
    return spaces.Box(-1, 1, shape, dtype)


def test_the_lowering_rllib_needs():
    offset = to_rllib(
        _Spaces(spaces.Discrete(3, start=1), spaces.MultiDiscrete([[3, 2], [2, 2]], start=[[1, 5], [0, 0]]))
    )
    assert offset.observation_space == gymnasium.spaces.Discrete(3)
    assert offset.action_space == gymnasium.spaces.MultiDiscrete([3, 2, 2, 2])
    image = to_rllib("envbridge/PixelGrid-v0")  # HWC, float32 with the same values
    obs, _ = image.reset(seed=0)
    assert image.observation_space == gymnasium.spaces.Box(0.0, 255.0, (64, 64, 3), np.float32)
    assert obs.dtype == np.float32 and np.array_equal(obs, image.neutral.unwrapped._obs().astype(np.float32))
    assert to_rllib(_Spaces(_box((2,), np.float64), _box((2,)))).observation_space.dtype == np.float32
    flat = to_rllib(_Spaces(_box((2,)), _box((2, 3))))  # n-D float Box action: presented flat, lossless
    assert flat.action_space == gymnasium.spaces.Box(-1, 1, (6,), np.float32)
    flat.reset(seed=0)
    flat.step(np.linspace(-1, 1, 6, dtype=np.float32))


def test_rllib_refuses_integer_and_nd_box_actions():
    with raises_exactly(
        ConversionError,
        "action space for RLlib must be a float Box (RLlib has no action distribution for integer Box actions), "
        "got Box(0, 3, (2,), int64). Declare a MultiDiscrete (or Discrete) action, or a float Box and round in the env.",
    ):
        to_rllib(_Spaces(_box((2,)), spaces.Box(0, 3, (2,), np.int64)))
    with raises_exactly(
        ConversionError,
        "action['arm'] space for RLlib must be a 1-D Box (RLlib's DiagGaussian takes a vector of actions), "
        "got Box(-1.0, 1.0, (2, 2), float32). Declare Box(..., shape=(4,)) and reshape inside the env.",
    ):
        to_rllib(_Spaces(_box((2,)), spaces.Dict(arm=_box((2, 2)), grip=spaces.Discrete(2))))


def test_a_vector_env_class_is_refused_in_sync_mode_with_the_fix():
    name = register(CartPoleVector, name="cpv-sync")
    creator = ray.tune.registry._global_registry.get(ray.tune.registry.ENV_CREATOR, name)
    with raises_exactly(
        SpecError,
        "the RLlib env 'cpv-sync' must run in gym_env_vectorize_mode='vector_entry_point' (it is a bridge.VectorEnv), "
        "got gym_env_vectorize_mode='sync'. Call config.env_runners(gym_env_vectorize_mode='vector_entry_point').",
    ):
        creator({})


def grid_of(size=4):
    return GridWorld(size=size)


def test_the_creator_refuses_an_env_config_that_is_not_the_envs_keyword_arguments():
    name = register("envbridge/GridWorld-v0")
    creator = ray.tune.registry._global_registry.get(ray.tune.registry.ENV_CREATOR, name)
    for env_config, text in [
        (
            {"nope": 1},
            "to_rllib env kwargs must be keyword arguments GridWorld takes (size, render_mode), got ['nope']. "
            "Pass only those (the make kwargs, or RLlib's env_config).",
        ),
        (
            [1, 2],
            "the RLlib env 'envbridge/GridWorld-v0' env_config must be a dict of the env's keyword arguments, "
            "got [1, 2]. Pass config.environment('envbridge/GridWorld-v0', env_config={...}).",
        ),
        (
            "size=3",
            "the RLlib env 'envbridge/GridWorld-v0' env_config must be a dict of the env's keyword arguments, "
            "got 'size=3'. Pass config.environment('envbridge/GridWorld-v0', env_config={...}).",
        ),
    ]:
        with raises_exactly(SpecError, text):
            creator(env_config)
    factory = register(grid_of, name="grid-factory")
    with raises_exactly(
        SpecError,
        "to_rllib env kwargs must be keyword arguments grid_of takes (size), got ['render', 'sz']. "
        "Pass only those (the make kwargs, or RLlib's env_config).",
    ):
        ray.tune.registry._global_registry.get(ray.tune.registry.ENV_CREATOR, factory)({"sz": 3, "render": 1})
    assert creator({"size": 3}).neutral.unwrapped.size == 3


def test_the_batched_export_is_next_step_and_one_numpy_call():
    vec = to_rllib_vector(CartPoleVector(num_envs=64))
    assert vec.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    obs, _ = vec.reset(seed=3)
    assert obs.shape == (64, 4) and obs.dtype == np.float32
    obs, rewards, terminated, truncated, _ = vec.step(np.zeros(64, np.int64))
    assert rewards.shape == (64,) and terminated.dtype == np.bool_


@pytest.mark.slow
def test_env_config_reaches_the_factory_in_every_runner_and_batched_envs_run(ray_local):
    from bridge.examples.gridworld import GridWorld as Grid

    config = config_for(Grid, env_runners=1, env_config={"size": 3}, train_batch_size_per_learner=64, minibatch_size=32)
    algo = config.build_algo()
    try:
        sizes = algo.env_runner_group.foreach_env_runner(
            lambda r: int(r.env.unwrapped.envs[0].unwrapped.neutral.unwrapped.size), local_env_runner=False
        )
        assert sizes == [3]
    finally:
        algo.stop()
    config = config_for(
        CartPoleVector,
        env_runners=1,
        envs_per_runner=16,
        vectorize_mode="vector_entry_point",
        train_batch_size_per_learner=256,
        minibatch_size=64,
        num_epochs=1,
    )
    algo = config.build_algo()
    try:
        kinds = algo.env_runner_group.foreach_env_runner(
            lambda r: (type(r.env.unwrapped).__name__, r.num_envs), local_env_runner=False
        )
        assert kinds == [("RLlibVectorEnv", 16)]
        assert algo.train()["env_runners"]["num_env_steps_sampled"] >= 256
    finally:
        algo.stop()


@pytest.mark.parametrize("env_id", sorted(EXAMPLE_IDS))
def test_every_example_passes_the_rllib_profile(env_id):
    report = bridge.check(env_id, targets=["rllib"])
    assert [p for p in report.problems if p.severity in ("error", "warning")] == []


def test_a_registered_id_needs_no_import_and_a_bad_source_is_named():
    assert register("envbridge/GridWorld-v0") == "envbridge/GridWorld-v0"
    assert register(GridWorld) == "bridge.examples.gridworld.GridWorld"
    with raises_exactly(
        SpecError,
        "rllib.register source must be a bridge.Env, a gym, Gymnasium or dm_env env, its class, a factory, a "
        "registered id, module:attr or path/to/file.py:attr, or a bridge.VectorEnv, got int. Pass e.g. 'envbridge/GridWorld-v0', or subclass "
        "bridge.Env.",
    ):
        register(3)

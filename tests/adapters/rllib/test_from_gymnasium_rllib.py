"""A Gymnasium env brought in by from_gymnasium reaches RLlib: the export steps as the native env,
and PPO takes a training step on ``gymnasium:CartPole-v1`` named through the one resolver (small:
the driver samples, one 64-step batch)."""

from __future__ import annotations

import numpy as np
import pytest
from support import require

gymnasium = require("gymnasium")
ray = require("ray")

from bridge.adapters.rllib import to_rllib  # noqa: E402
from bridge.adapters.rllib.train import config_for  # noqa: E402

import bridge  # noqa: E402


def test_to_rllib_of_from_gymnasium_steps_as_the_native_env():
    native, export = gymnasium.make("CartPole-v1"), to_rllib(bridge.from_gymnasium("CartPole-v1"))
    a, b = native.reset(seed=1)[0], export.reset(seed=1)[0]
    assert a.dtype == b.dtype and np.array_equal(a, b)
    for action in np.random.default_rng(0).integers(0, 2, 100):
        x, y = native.step(np.int64(action)), export.step(np.int64(action))
        assert np.array_equal(x[0], y[0]) and x[1:4] == y[1:4]
        if x[2] or x[3]:
            assert np.array_equal(native.reset()[0], export.reset()[0])


@pytest.mark.slow
def test_ppo_trains_on_the_gymnasium_scheme(ray_local):
    config = config_for("gymnasium:CartPole-v1", env_runners=0, train_batch_size_per_learner=64, minibatch_size=32)
    algo = config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 64

"""DreamerV2's ``api.train`` on MATLAB's usual continuous action, ``rlNumericSpec([1 1])``: the cart-pole
``rlFunctionEnv`` with a ``[1 1]`` force (and a ``[4 1]`` float64 observation) passes the dreamerv2
check and then trains (it crashed inside TensorFlow on the rank-2 action before the flat presentation)."""

from __future__ import annotations

import numpy as np
import pytest
from support import require

require("gym")
require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import replay_episodes, to_dreamer_ready, train  # noqa: E402
from bridge.adapters.matlab import examples  # noqa: E402

import bridge  # noqa: E402


@pytest.mark.slow
def test_dreamerv2_trains_on_a_matlab_1x1_continuous_action(tmp_path):
    env = examples.make_cartpole("continuous", MaxStepsPerEpisode=10)
    assert env.action_space.shape == (1, 1) and env.observation_space.shape == (4, 1)
    report = bridge.check(env, targets=["dreamerv2"])
    assert report.ok, report
    assert to_dreamer_ready(env).action_space.shape == (1,)
    logdir = train(env, {"steps": 41, "prefill": 30, "train_every": 10, "log_every": 10}, logdir=str(tmp_path), seed=0)
    assert (tmp_path / "variables.pkl").stat().st_size > 0  # saved only after a training step ran
    episodes = replay_episodes(logdir)
    assert episodes and all(ep["action"].shape[1:] == (1,) for ep in episodes)
    assert all(np.abs(ep["action"]).max() <= 1.0 for ep in episodes)

"""An env that raises inside a remote env runner: envbridge's message (env id, step, cause) comes out
of ``train`` through Ray's ActorDiedError; with RLlib's fault tolerance training goes on and the
fault is reported once."""

from __future__ import annotations

import os

import pytest
from support import raises_exactly, require

ray = require("ray")
require("torch")

from bridge.adapters.rllib import EnvRunnerFault, train_iteration  # noqa: E402
from bridge.adapters.rllib.train import config_for  # noqa: E402
from toy_envs.rllib_envs import FailOnce  # noqa: E402

from bridge.errors import ContractError  # noqa: E402

pytestmark = pytest.mark.slow
MESSAGE = (
    "FailOnce step() at step 10 must run without raising, got ValueError: boom. Fix the env; the original "
    "exception and its traceback are chained as __cause__."
)


def _config(tmp_path, restart):
    config = config_for(
        FailOnce,
        env_runners=2,
        env_config={"fail_at": 30, "marker": os.path.join(str(tmp_path), "failed")},
        train_batch_size_per_learner=200,
        minibatch_size=64,
        num_epochs=1,
    )
    return config.fault_tolerance(restart_failed_env_runners=restart, delay_between_env_runner_restarts_s=0.5)


def test_the_env_message_comes_through_rays_wrapping(ray_local, tmp_path):
    algo = _config(tmp_path, restart=False).build_algo()
    try:
        with raises_exactly(ContractError, MESSAGE) as caught:
            train_iteration(algo)
        assert isinstance(caught.value.__cause__, ray.exceptions.RayError)
    finally:
        algo.stop()


def test_with_fault_tolerance_training_goes_on_and_the_fault_is_reported_once(ray_local, tmp_path):
    algo = _config(tmp_path, restart=True).build_algo()
    try:
        faults = []
        with pytest.warns(EnvRunnerFault) as warned:
            for _ in range(4):
                faults += train_iteration(algo)["envbridge_faults"]
        assert faults == [f"ContractError: {MESSAGE}"]
        assert [str(w.message) for w in warned] == [f"an env runner restarted after: ContractError: {MESSAGE}"]
        assert algo.env_runner_group.num_healthy_remote_workers() >= 1
    finally:
        algo.stop()

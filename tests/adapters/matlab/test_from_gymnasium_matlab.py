"""A Gymnasium env brought in by from_gymnasium reaches the MATLAB facade: ``sim`` runs Gymnasium's
CartPole-v1 exactly as the native env runs under the same policy and seed (modern era)."""

from __future__ import annotations

import numpy as np
from support import require

gymnasium = require("gymnasium")

from bridge.adapters.matlab import rlSimulationOptions, sim  # noqa: E402

import bridge  # noqa: E402


def _lean(obs) -> int:
    return int(np.asarray(obs).reshape(-1)[2] > 0)  # push towards the side the pole leans to


def test_sim_of_from_gymnasium_equals_the_native_run():
    experience = sim(
        bridge.from_gymnasium("CartPole-v1"), lambda obs: float(_lean(obs)), rlSimulationOptions(MaxSteps=300), seed=2
    )[0]
    native = gymnasium.make("CartPole-v1")
    obs, _ = native.reset(seed=2)
    observations, rewards, done = [obs], [], False
    while not done and len(rewards) < 300:
        obs, reward, terminated, truncated, _ = native.step(_lean(obs))
        observations.append(obs)
        rewards.append(reward)
        done = terminated or truncated
    assert experience.NumSteps == len(rewards) > 20 and experience.Reward.tolist() == rewards
    (channel,) = experience.Observation.values()
    assert np.array_equal(np.asarray(channel, np.float32).reshape(len(observations), 4), np.array(observations))
    assert experience.IsDone[-1] == (1 if terminated else 2)

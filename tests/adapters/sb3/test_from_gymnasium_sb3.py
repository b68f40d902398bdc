"""A Gymnasium env brought in by from_gymnasium trains in SB3 through the export exactly as the
native env does: PPO ends with bit-identical weights (same seed).

The issue asks for 20k steps; measured here on one torch thread that is ~48 s per run with SB3's
default PPO (n_steps=2048), so the test trains 1,024 steps in 8 rollouts of 128 (8 updates; CartPole's
episodes end inside them, so resets and their seeds are in the run too), which is enough for a
difference in any observation, reward, flag or reset to reach the weights (the 20k-step run was
measured bit-identical too, see the report of the importers branch)."""

from __future__ import annotations

import pytest
from support import require

gymnasium = require("gymnasium")
stable_baselines3 = require("stable_baselines3")
torch = require("torch")

import bridge  # noqa: E402

pytestmark = pytest.mark.slow

PPO_KWARGS = {"n_steps": 128, "batch_size": 64, "n_epochs": 1, "policy_kwargs": {"net_arch": [32, 32]}}


@pytest.fixture(autouse=True)
def _one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _weights(env):
    model = stable_baselines3.PPO("MlpPolicy", env, seed=0, device="cpu", **PPO_KWARGS)
    model.learn(1024)
    return model.policy.state_dict()


def test_ppo_on_from_gymnasium_ends_bit_identical_to_ppo_on_the_native_env():
    native = _weights(gymnasium.make("CartPole-v1"))
    imported = _weights(bridge.to_sb3(bridge.from_gymnasium("CartPole-v1")))
    assert list(native) == list(imported)
    assert all(torch.equal(native[k], imported[k]) for k in native)
    # the comparison can fail: a 10-step time limit changes the episodes, and so the weights
    other = _weights(bridge.to_sb3(bridge.from_gymnasium("CartPole-v1", max_episode_steps=10)))
    assert not all(torch.equal(native[k], other[k]) for k in native)

"""TorchRL on the Gymnasium export: ``GymWrapper(to_gymnasium(env))`` passes TorchRL's own
``check_env_specs`` and a short collector run, for every example env (docs/gymnasium-sb3.md, TorchRL)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from support import ERA, require

if ERA == "modern":  # the modern tox env installs torchrl (pinned in compat/constraints-modern.txt): missing, it fails
    import torchrl  # noqa: F401
else:
    require("torchrl")

from bridge.adapters.gymnasium import to_gymnasium  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.envs import GymWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from bridge.examples import EXAMPLE_IDS  # noqa: E402

logging.getLogger("torchrl").setLevel(logging.WARNING)  # its INFO lines ("check_env_specs succeeded!")


@pytest.mark.parametrize("env_id", sorted(EXAMPLE_IDS))
def test_gym_wrapper_check_env_specs_and_a_collector_run(env_id):
    env = GymWrapper(to_gymnasium(env_id))
    check_env_specs(env, seed=0)
    first = env.reset(seed=3)
    own, _ = to_gymnasium(env_id).reset(seed=3)
    pairs = own.items() if isinstance(own, dict) else [("observation", own)]
    for key, value in pairs:  # the same first observation; TorchRL presents a Discrete one-hot
        got, want = first[key].numpy(), np.asarray(value)
        np.testing.assert_array_equal(got.argmax(-1) if got.shape != want.shape else got, want)
    collector = Collector(env, policy=None, frames_per_batch=16, total_frames=32)
    try:
        frames = [batch.numel() for batch in collector]
    finally:
        collector.shutdown()
    assert frames == [16, 16]
    env.close()

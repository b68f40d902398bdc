"""The MATLAB cart-pole through the DreamerV2 chain (legacy era): DreamerV2's pre-flight check."""

from __future__ import annotations

import numpy as np
from support import raises_exactly, require

gym = require("gym")
dreamerv2 = require("dreamerv2")

from bridge.adapters import dreamerv2 as bridge_dreamerv2  # noqa: E402
from bridge.adapters.gym import to_gym  # noqa: E402
from bridge.adapters.matlab import examples as cp  # noqa: E402
from bridge.adapters.matlab import rlSimulationOptions, sim  # noqa: E402

from bridge.errors import ConversionError  # noqa: E402


def test_single_precision_cartpole_passes_the_dreamerv2_preflight_check():
    env = cp.make_cartpole("discrete", MaxStepsPerEpisode=500, DataType="single")
    report = bridge_dreamerv2.check(env)
    assert report.ok, str(report)
    assert (
        sim(env, lambda obs: 10.0 if obs[2, 0] > 0 else -10.0, rlSimulationOptions(MaxSteps=50), seed=0)[0].NumSteps
        > 10
    )


def test_dreamerv2_chain_steps_the_facade():
    chain = bridge_dreamerv2.to_dreamerv2(
        cp.make_cartpole("discrete", MaxStepsPerEpisode=500, DataType="single"), seed=0
    )
    obs = chain.reset()
    assert obs["is_first"] and obs["vector"].shape == (4,) and obs["vector"].dtype == np.float32
    obs = chain.step({"action": np.array([0.0, 1.0], dtype=np.float32)})
    assert obs["reward"] == 1.0 and not obs["is_last"]


def test_matlab_default_double_is_refused_by_dreamerv2_not_rounded():
    with raises_exactly(
        ConversionError,
        "observation must have dtype float32 or float16 (DreamerV2 computes in float32), got dtype float64. "
        "Declare the Box with dtype=np.float32 and cast in the env.",
    ):
        bridge_dreamerv2.to_dreamerv2(cp.make_cartpole("discrete"))


def test_gym_023_export_of_the_facade():
    export = to_gym(cp.make_cartpole("discrete", MaxStepsPerEpisode=5))
    export.reset(seed=0)
    dones = [export.step(1)[2] for _ in range(5)]
    assert dones == [False] * 4 + [True]

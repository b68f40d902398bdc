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


def test_matlab_default_double_reaches_dreamerv2_as_float32_or_is_refused_on_request():
    # the one float policy: DreamerV2 computes in float32, so "double" is presented as float32
    neutral = cp.make_cartpole("discrete")
    ready = bridge_dreamerv2.to_dreamer_ready(cp.make_cartpole("discrete"), seed=3)
    want = neutral.reset(seed=3)[0]
    got = ready.reset()["vector"]
    assert got.dtype == np.float32 and np.array_equal(got, want.astype(np.float32).reshape(-1))
    assert ready.observation_lowering.roundings == ("observation: float64 presented as float32",)
    with raises_exactly(
        ConversionError,
        "observation must have dtype float32 or float16 with float64_as_float32=False (DreamerV2 computes in "
        "float32), got dtype float64. Leave float64_as_float32 at True (the default), or declare float32 "
        'observations (dtype=np.float32 in a Box; DataType="single" in an rlNumericSpec).',
    ):
        bridge_dreamerv2.to_dreamerv2(cp.make_cartpole("discrete"), float64_as_float32=False)


def test_gym_023_export_of_the_facade():
    export = to_gym(cp.make_cartpole("discrete", MaxStepsPerEpisode=5))
    export.reset(seed=0)
    dones = [export.step(1)[2] for _ in range(5)]
    assert dones == [False] * 4 + [True]

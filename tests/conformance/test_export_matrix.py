"""The export matrix: every source through every export and view of this era, bit-identical or a
documented refusal (docs/export-matrix.md lists the refusals; this test holds the table).

Scalar sources -- every example, the MATLAB cart-pole (discrete and continuous), an rlFunctionEnv
with rlFiniteSetSpec channels, a 16x16-image env -- are recorded here and replayed through every
view (the committed tapes of both eras go through the same views in test_cross_era.py). Batched
sources -- CartPoleVector and the MATLAB vector cart-pole, discrete and continuous -- go through
every vector export of the era in both autoreset modes, and must give the neutral stream exactly.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from support import ERA
from toy_envs import matrix

import bridge
from bridge import runtimes
from bridge.conformance import available_views, record, verify
from bridge.registry import EXAMPLE_IDS

matrix.register()
SOURCES = sorted(EXAMPLE_IDS) + sorted(matrix.MATRIX_IDS)
REFUSALS = matrix.REFUSALS
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("env_id", SOURCES)
def test_every_scalar_source_agrees_through_every_view_or_is_a_documented_refusal(env_id):
    tape = record(env_id, seed=7, steps=120)
    status = available_views()
    results = verify(lambda: bridge.make(env_id), tape, snapshot_at=40)
    for view, verdict in results.items():
        if status[view]:
            assert verdict.kind == "unavailable", (view, verdict)
            continue
        refusal = REFUSALS.get((env_id, view))
        if refusal is None:
            assert verdict.agrees, str(verdict)
        else:
            assert verdict.kind == "refused" and verdict.detail.startswith(refusal), str(verdict)


def test_the_documented_refusals_are_in_the_docs():
    with open(os.path.join(HERE, "..", "..", "docs", "export-matrix.md")) as f:
        text = f.read()
    for (env_id, view), refusal in REFUSALS.items():
        assert f"`{env_id}`" in text and f"| {view} |" in text and refusal.split(": ", 1)[1] in text


def _vector_exports():
    """Each vector export of this era: name -> (build(neutral) -> export, mode it presents)."""
    exports = {}
    here = runtimes.available()
    if ERA == "modern" or "gymnasium" in here:
        from bridge.adapters.gymnasium import to_gymnasium_vector

        for mode in ("next-step", "same-step"):
            exports[f"gymnasium-{mode}"] = (lambda v, m=mode: to_gymnasium_vector(v, autoreset_mode=m), mode)
    if ERA == "modern" or "sb3" in here:
        from bridge.adapters.sb3 import make_vec_env

        exports["sb3"] = (lambda v: make_vec_env(v, n_envs=v.num_envs, float64_as_float32=False), "same-step")
    return exports


VECTOR_EXPORTS = _vector_exports()


@pytest.mark.skipif(not VECTOR_EXPORTS, reason="this era has no vector export (DreamerV2 steps one env per worker)")
@pytest.mark.parametrize("export_name", sorted(VECTOR_EXPORTS))
@pytest.mark.parametrize("source", sorted(matrix.vector_sources()))
def test_every_vector_source_gives_the_neutral_stream_through_every_vector_export(source, export_name):
    build_export, mode = VECTOR_EXPORTS[export_name]
    make = matrix.vector_sources()[source]
    reference = make()
    reference.autoreset_mode = mode
    export = build_export(make())
    neutral_obs = reference.reset(seed=3)[0]
    if export_name == "sb3":
        export.seed(3)
        obs = export.reset()
    else:
        obs = export.reset(seed=3)[0]
    decode = export.observation_lowering.decode_batch
    np.testing.assert_array_equal(decode(obs), neutral_obs)
    sampler = reference.action_space
    rng = np.random.default_rng(11)
    ends = 0
    for _ in range(60):
        actions = sampler.sample(rng)
        want = reference.step(actions)
        runtime_actions = export.action_lowering.encode_batch(actions)
        if export_name == "sb3":
            obs, rewards, dones, infos = export.step(runtime_actions)
            np.testing.assert_array_equal(dones, want[2] | want[3])
            for i in np.flatnonzero(dones):
                final = {k: v for k, v in infos[i].items() if k == "terminal_observation"}["terminal_observation"]
                np.testing.assert_array_equal(export.observation_lowering.decode(final), want[4]["final_obs"][i])
        else:
            obs, rewards, terminated, truncated, infos = export.step(runtime_actions)
            np.testing.assert_array_equal(terminated, want[2])
            np.testing.assert_array_equal(truncated, want[3])
            if mode == "same-step":  # Gymnasium's layout: the ended envs' final observations, one each
                ended = want[2] | want[3]
                assert ("final_obs" in infos) == bool(ended.any())
                for i in np.flatnonzero(ended):
                    final = export.observation_lowering.decode(infos["final_obs"][i])
                    np.testing.assert_array_equal(final, want[4]["final_obs"][i])
        np.testing.assert_array_equal(decode(obs), want[0])
        expected_rewards = want[1].astype(np.float32) if export_name == "sb3" else want[1]  # SB3 keeps float32
        assert rewards.dtype == expected_rewards.dtype and np.array_equal(rewards, expected_rewards)
        ends += int(np.sum(want[2] | want[3]))
    export.close()
    assert ends >= 4  # autoreset happened in every slot's lifetime

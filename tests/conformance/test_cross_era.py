"""Cross-era conformance: tapes of every example, recorded once under each era's stack and committed
(``tapes/py39-numpy1/`` and ``tapes/py311-numpy2/``), replayed here through every export this
interpreter has. Each era therefore verifies the other era's recordings, and its own.

The rule is bit-identical: observations (dtype, shape, bytes), Python-float rewards and bool flags.
The one deliberate exception is structural, not numeric: runtimes with a single "done" cannot say
"terminated and truncated", so for them a both-flags step is expected as terminated only (the
episode-end table in docs/episode-ends.md). Re-record (only when an example deliberately changes):
``PYTHONPATH=tests python tests/conformance/test_cross_era.py --write [--force]`` under each era's
interpreter (``--write`` adds missing tapes; ``--force`` records every one again).
"""

from __future__ import annotations

import glob
import os
import sys

import numpy as np
import pytest
from support import ERA
from toy_envs import matrix

import bridge
from bridge.conformance import Tape, available_views, record, verify
from bridge.examples import EXAMPLE_IDS

matrix.register()
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tapes")
SOURCES = list(EXAMPLE_IDS) + list(matrix.MATRIX_IDS)  # the export matrix's scalar sources
STAMP = f"py{sys.version_info[0]}{sys.version_info[1]}-numpy{np.__version__.split('.')[0]}"
# the views each era's tox env must be able to run; a missing one fails instead of skipping
ERA_VIEWS = {
    "modern": {"neutral", "gymnasium", "sb3", "matlab"},
    "rllib": {"neutral", "gymnasium", "rllib", "matlab"},
    "legacy": {"neutral", "gym", "dreamerv2", "matlab"},
}
TAPES = sorted(glob.glob(os.path.join(HERE, "*", "*.npz")))


def _name(env_id: str) -> str:
    return env_id.replace("/", "__")


def test_both_eras_have_a_tape_of_every_source():
    for era_dir in ("py39-numpy1", "py311-numpy2"):
        have = {os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, era_dir, "*.npz"))}
        assert have == {_name(e) for e in SOURCES}, era_dir


def test_this_era_has_its_views():
    status = available_views()
    missing = {v: status.get(v, "unknown") for v in ERA_VIEWS.get(ERA, {"neutral"}) if status.get(v, "unknown")}
    assert not missing, missing


@pytest.mark.parametrize("path", TAPES, ids=[os.path.relpath(p, HERE) for p in TAPES])
def test_tape_replays_identically_through_every_export_here(path):
    tape = Tape.load(path)
    results = verify(lambda: bridge.make(tape.env_id), tape, snapshot_at=len(tape.actions) // 3)
    failures = {k: str(v) for k, v in results.items() if v.failed}
    assert not failures, failures
    required = ERA_VIEWS.get(ERA, {"neutral"}) - {v for (e, v) in matrix.REFUSALS if e == tape.env_id}
    assert all(results[v].agrees for v in required), {v: results[v] for v in required}


if __name__ == "__main__" and "--write" in sys.argv:
    out = os.path.join(HERE, STAMP)
    os.makedirs(out, exist_ok=True)
    for env_id in SOURCES:
        path = os.path.join(out, _name(env_id) + ".npz")
        if os.path.exists(path) and "--force" not in sys.argv:
            continue  # keep a committed tape; --force records it again
        record(env_id, seed=0, steps=150).save(path)
        print("wrote", path)

"""``bridge.check(export)`` works for every export of every runtime installed here, scalar and
batched: it checks the neutral env (or VectorEnv) with that export's options, and passes on the
examples."""

from __future__ import annotations

import pytest

import bridge
from bridge import runtimes
from bridge.examples import CartPoleVector

EXPORTS = [
    (row.name, name, kind)
    for row in runtimes.RUNTIMES.values()
    for name, kind in ((row.export, "scalar"), (row.batch_export, "batch"))
    if name is not None
]


@pytest.mark.parametrize("runtime, name, kind", EXPORTS, ids=[f"{r}-{n}" for r, n, _ in EXPORTS])
def test_check_of_an_export_reports_on_its_env_with_its_options(runtime, name, kind):
    if runtimes.probe(runtime):
        pytest.skip(f"{runtime} is not installed here (not this era)")
    row = runtimes.get(runtime)
    export = runtimes.load(row.exports[name])
    if kind == "batch":
        built = export(CartPoleVector(num_envs=2))
    elif runtime == "dreamerv2":
        built = runtimes.load("bridge.adapters.dreamerv2.export:to_dreamer_ready")("envbridge/GridWorld-v0")
    else:
        built = export("envbridge/GridWorld-v0")
    try:
        report = bridge.check(built, targets=[runtime])
    finally:
        built.close()
    assert report.targets == ["core", runtime] and report.ok, str(report)

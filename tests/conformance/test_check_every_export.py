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


class NoSeed(bridge.Env):
    """A reset that never calls super().reset(seed=seed): every export's guard refuses it."""

    def __init__(self):
        import numpy as np

        from bridge import spaces

        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self._zeros = np.zeros(2, np.float32)

    def reset(self, *, seed=None, options=None):
        return self._zeros.copy(), {}

    def step(self, action):
        return self._zeros.copy(), 0.0, False, False, {}


def test_check_always_reports_a_reset_that_does_not_seed_in_every_era():
    report = bridge.check(NoSeed)  # every runtime installed here: none may raise instead of reporting
    assert report.targets == ["core"] + list(runtimes.available())
    unseeded = (
        "NoSeed.reset(seed=0) must seed the env's Generator (env.np_random), got a reset that did not call "
        "super().reset(seed=seed)."
    )
    core = [(p.severity, p.message, p.fix) for p in report.for_target("core")]
    assert core == [("error", unseeded, "Call super().reset(seed=seed) first in your reset().")]
    assert not report.ok
    for target in report.targets[1:]:  # each export met it in its own guard, reported once per seed
        messages = [p.message for p in report.for_target(target) if p.severity == "error"]
        assert len(messages) == len(set(messages)), (target, messages)

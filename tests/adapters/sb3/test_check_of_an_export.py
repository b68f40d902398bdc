"""``bridge.check`` checks what ``envbridge check`` checks (every target installed here) and takes
the export the user will train with, or its options."""

from __future__ import annotations

import numpy as np
from support import require

require("stable_baselines3")

from bridge.adapters.gymnasium import to_gymnasium  # noqa: E402

import bridge  # noqa: E402
from bridge import runtimes, spaces  # noqa: E402


class Throttle(bridge.Env):
    """A continuous action in [0, 2]: SB3 advises exposing it as [-1, 1]."""

    def __init__(self):
        self.observation_space = spaces.Box(-5.0, 5.0, (2,), np.float32)
        self.action_space = spaces.Box(0.0, 2.0, (1,), np.float32)
        self.x = np.zeros(2, np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x.copy(), {}

    def step(self, action):
        self.x = np.clip(self.x + 0.1 * float(action[0]), -5, 5).astype(np.float32)
        return self.x.copy(), float(-abs(self.x[0])), False, False, {}


ADVICE = (
    "rescale the action Box [0.0, 2.0] to [-1, 1] for SB3, which squashes/clips actions to the Box.",
    "Export with to_sb3(env, normalize_actions=True), which exposes the action as [-1, 1].",
)


def _advice(report):
    return [(p.message, p.fix) for p in report.problems if p.message.startswith("rescale the action Box")]


def test_check_without_targets_checks_every_target_installed_here():
    report = bridge.check(Throttle())
    assert report.targets == ["core"] + runtimes.available()
    assert {"gymnasium", "sb3"} <= set(report.targets)
    assert _advice(report) == [ADVICE]  # the default export: SB3 would see [0, 2]


def test_check_of_an_export_uses_its_options():
    export = to_gymnasium(Throttle(), normalize_actions=True)
    report = bridge.check(export)
    assert report.env_name == "Throttle"
    assert report.targets == ["core"] + runtimes.available()
    assert _advice(report) == [] and report.ok


def test_check_takes_the_options_per_target():
    report = bridge.check(Throttle(), targets=["sb3"], options={"sb3": {"normalize_actions": True}})
    assert report.targets == ["core", "sb3"] and _advice(report) == []


def test_the_callers_options_override_the_exports():
    export = to_gymnasium(Throttle(), normalize_actions=True)
    report = bridge.check(export, targets=["sb3"], options={"sb3": {"normalize_actions": False}})
    assert _advice(report) == [ADVICE]

"""The user-facing conformance mixin, used exactly as the README shows."""

from __future__ import annotations

import pytest

import bridge
from bridge.conformance.suite import ConformanceSuite
from bridge.examples import GridWorld


class TestGridWorldConformance(ConformanceSuite):
    steps = 120

    def make_env(self):
        return bridge.TimeLimit(GridWorld(), 30)


class _Broken(GridWorld):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated, truncated, {"episode": 1}


def test_the_mixin_fails_a_broken_env():
    class Suite(ConformanceSuite):
        targets = ["core"]

        def make_env(self):
            return _Broken()

    with pytest.raises(AssertionError, match="step info must not use the key 'episode'"):
        Suite().test_core_and_export_checks()

"""Check messages for a MATLAB-style function env speak its author's terms (Info, rng, the
functions, DataType), not a Python class's (self.np_random, get_state, dtype=np.float32)."""

from __future__ import annotations

import numpy as np
from bridge.adapters.matlab import rlFiniteSetSpec, rlFunctionEnv, rlNumericSpec

import bridge

OBS = rlNumericSpec([1, 1], DataType="single")
ACT = rlFiniteSetSpec([-1.0, 1.0])
_hidden = {"position": 0.0}  # module state the functions should not use


_outside = np.random.default_rng(0)  # a generator of the module: reset(seed=...) cannot reach it


def _reset_from_global_random():
    return np.array([[_outside.uniform(-1, 1)]], np.float32), {"position": 0.0}


def _step(action, info):
    position = info["position"] + float(action)
    return np.array([[position]], np.float32), 1.0, abs(position) > 5, {"position": position}


def _reset_hidden():
    _hidden["position"] = 0.0
    return np.array([[0.0]], np.float32), {}


def _step_hidden(action, info):
    _hidden["position"] += float(action)
    position = _hidden["position"]
    return np.array([[position]], np.float32), position, abs(position) > 3, {}


def _errors(env):
    report = bridge.check(env, targets="core")
    return [(p.message, p.fix) for p in report.problems if p.severity == "error"]


def test_global_randomness_is_told_to_use_the_rng_argument():
    global _outside
    _outside = np.random.default_rng(0)
    errors = _errors(rlFunctionEnv(OBS, ACT, _step, _reset_from_global_random))
    assert errors[0] == (
        "reset(seed=s) must reproduce the same trajectory, got observation[0, 0] 0.62654048204422 instead of "
        "-0.9180529713630676 at the seeded reset.",
        "Draw all randomness from the rng argument of your step and reset functions (a parameter named rng), "
        "not from np.random or random.",
    )


def test_state_outside_info_is_told_to_keep_it_in_info():
    errors = _errors(bridge.TimeLimit(rlFunctionEnv(OBS, ACT, _step_hidden, _reset_hidden), 10))
    assert errors == [
        (
            "replay after restore_state (determinism 'strong', 211-action tape, 22-step detour) must be "
            "bit-identical, got observation[0, 0] -3.0 instead of -2.0 at step 1 after the restore.",
            "Keep every simulation value in Info (LoggedSignals), which your step and reset functions return, "
            "or pass determinism='weak' to rlFunctionEnv.",
        )
    ]


def test_a_class_env_keeps_the_class_terms():
    class Hidden(bridge.Env):
        determinism = "strong"

        def __init__(self):
            self.observation_space = bridge.spaces.Box(-9.0, 9.0, (1,), np.float32)
            self.action_space = bridge.spaces.Discrete(2)
            self.position, self.secret = 0.0, 0.0

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.position = self.secret = 0.0
            return np.array([0.0], np.float32), {}

        def step(self, action):
            self.secret += 1.0
            self.position = self.secret
            return np.array([self.position], np.float32), 0.0, self.secret > 3, False, {}

        def get_state(self):
            return {"position": self.position}

        def set_state(self, state):
            self.position = state["position"]

    assert _errors(bridge.TimeLimit(Hidden(), 10))[0][1] == (
        "Put every simulation field in get_state(), or declare determinism = 'weak'."
    )

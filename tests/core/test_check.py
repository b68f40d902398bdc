"""``bridge.check``: every example passes; one deliberately broken env per core check, asserting
the whole problem message and fix."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge import spaces
from bridge.examples import EXAMPLE_IDS


class Good(bridge.Env):
    """A tiny valid env; each Broken* subclass below breaks exactly one contract."""

    determinism = "strong"
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 10.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.pos = np.zeros(2, dtype=np.float32)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = np.array([self.np_random.uniform(0, 1), 0.0], dtype=np.float32)
        self.t = 0
        return self.pos.copy(), {}

    def step(self, action):
        self.t += 1
        self.pos[1] = min(self.pos[1] + float(action), 10.0)
        return self.pos.copy(), 1.0, self.t >= 7, False, {}

    def get_state(self):
        return {"pos": self.pos.copy(), "t": self.t}

    def set_state(self, state):
        self.pos, self.t = np.array(state["pos"], dtype=np.float32), int(state["t"])


class BadSpace(Good):
    def __init__(self):
        super().__init__()
        self.action_space = (0, 1)


class BadRenderMode(Good):
    render_mode = "human"


class BadDeterminism(Good):
    determinism = "always"


class BareReset(Good):
    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed)[0]


class WrongDtype(Good):
    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        return obs.astype(np.float64), info


class ReservedInfoKey(Good):
    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed)[0], {"episode": 1}


class FourTuple(Good):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated or truncated, info


class NumpyReward(Good):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, np.float32(reward), terminated, truncated, info


class NanReward(Good):
    def step(self, action):
        obs, _, terminated, truncated, info = super().step(action)
        return obs, float("nan"), terminated, truncated, info


class NumpyFlags(Good):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, np.bool_(terminated), truncated, info


class ListInfo(Good):
    def step(self, action):
        obs, reward, terminated, truncated, _ = super().step(action)
        return obs, reward, terminated, truncated, []


class ObsOutOfBounds(Good):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        obs[0] = 11.0
        return obs, reward, terminated, truncated, info


class GlobalRandom(Good):
    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = np.array([np.random.uniform(0, 1), 0.0], dtype=np.float32)
        self.t = 0
        return self.pos.copy(), {}


class Aliasing(Good):
    def step(self, action):
        _, reward, terminated, truncated, info = super().step(action)
        return self.pos, reward, terminated, truncated, info


class ForgetfulSnapshot(Good):
    def get_state(self):
        return {"pos": self.pos.copy()}

    def set_state(self, state):
        self.pos = np.array(state["pos"], dtype=np.float32)


class WeakButBroken(ForgetfulSnapshot):
    determinism = "weak"

    def set_state(self, state):
        pass


class Raising(Good):
    def step(self, action):
        raise ValueError("boom")


class GoalBase(Good):
    def __init__(self):
        super().__init__()
        box = spaces.Box(0.0, 10.0, (2,), np.float32)
        self.observation_space = spaces.Dict(observation=box, achieved_goal=box, desired_goal=box)

    def _goal_obs(self, pos):
        return {"observation": pos, "achieved_goal": pos.copy(), "desired_goal": np.full(2, 5.0, dtype=np.float32)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = np.zeros(2, dtype=np.float32), 0
        return self._goal_obs(self.pos.copy()), {}

    def step(self, action):
        pos, _, terminated, truncated, info = super().step(action)
        obs = self._goal_obs(pos)
        return (
            obs,
            float(self.compute_reward(obs["achieved_goal"], obs["desired_goal"], info)),
            terminated,
            truncated,
            info,
        )

    def compute_reward(self, achieved_goal, desired_goal, info):
        return -np.abs(np.asarray(achieved_goal) - desired_goal).sum(axis=-1)


class GoalNotBatched(GoalBase):
    def compute_reward(self, achieved_goal, desired_goal, info):
        return -float(np.abs(np.asarray(achieved_goal) - desired_goal).sum())


class GoalWrongReward(GoalBase):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward + 1.0, terminated, truncated, info


@pytest.mark.parametrize("env_id", sorted(EXAMPLE_IDS))
def test_every_example_passes(env_id):
    report = bridge.check(env_id, targets="core")
    assert report.ok, str(report)
    assert report.problems == []


def test_a_good_env_passes_and_the_report_reads_well():
    bridge.register("test/Good-v0", Good)  # registered: the determinism check can build a fresh one
    report = bridge.check("test/Good-v0", targets="core")
    assert report.ok and report.targets == ["core"]
    assert str(report) == "envbridge check: test/Good-v0\n  core       pass  (0 problems)\nOK"


def test_an_instance_without_a_spec_passes_with_an_info_about_the_fresh_instance():
    report = bridge.check(Good(), targets="core")
    assert report.ok and not report.errors and not report.warnings
    assert [(p.severity, p.message, p.fix) for p in report.problems] == [
        (
            "info",
            "skipped the fresh-instance replay (determinism 'strong'), which needs a new env to restore the snapshot into: the env has no registered spec and bridge.check was given no factory.",
            "Check the env by its registered id (bridge.check('my/Env-v0')), or give bridge.check a factory.",
        )
    ]


CASES = [
    (BadSpace, "env.action_space must be a bridge.spaces.Space, got tuple.", "Build it from bridge.spaces."),
    (
        BadRenderMode,
        "env.render_mode must be None or one of metadata['render_modes'] ['ansi'], got human.",
        "List the mode in metadata['render_modes'].",
    ),
    (
        BadDeterminism,
        "env.determinism must be one of ('strong', 'weak', 'none'), got always.",
        "Declare the snapshot contract.",
    ),
    (
        BareReset,
        "env.reset() must return a tuple (observation, info), got array([0.6369617, 0.       ], shape=(2,), dtype=float32).",
        "Return obs, info.",
    ),
    (WrongDtype, "reset observation must have dtype float32, got dtype float64.", "Cast it with .astype(np.float32)."),
    (
        ReservedInfoKey,
        "reset info must not use the key 'episode' (reserved for SB3's Monitor), got ['episode'].",
        "Rename the key.",
    ),
    (
        FourTuple,
        "env.step() must return a 5-tuple (obs, reward, terminated, truncated, info), got 4.",
        "Split done into terminated and truncated.",
    ),
    (
        NumpyReward,
        "step reward must be a Python float (a numpy scalar is a defect), got numpy float32 1.0.",
        "Return float(reward).",
    ),
    (NanReward, "step reward must be finite, got nan.", "Guard the reward computation against NaN and inf."),
    (NumpyFlags, "step terminated must be a Python bool, got numpy bool False.", "Return bool(terminated)."),
    (ListInfo, "step info must be a dict, got list.", "Return {} when there is nothing to report."),
    (
        ObsOutOfBounds,
        "step observation[0] must lie in [0.0, 10.0], got 11.0.",
        "Clip it into the bounds or widen the space (NaN is never inside).",
    ),
    (
        GlobalRandom,
        "reset(seed=s) must reproduce the same trajectory, got observation[0] 0.1467558890581131 instead of 0.7203245162963867 at the seeded reset.",
        "Draw all randomness from self.np_random after super().reset(seed=seed).",
        2,
    ),
    (
        Aliasing,
        "observation 1 must stay unchanged after later steps, got it was mutated in place.",
        "Return a copy (e.g. self.pos.copy()), not an internal buffer.",
    ),
    (
        ForgetfulSnapshot,
        "replay after restore_state (determinism 'strong', 211-action tape, 22-step detour) must be bit-identical, got terminated True instead of False at step 5 after the restore.",
        "Put every simulation field in get_state(), or declare determinism = 'weak'.",
    ),
    (
        WeakButBroken,
        "restore_state() must bring back the simulation state (determinism 'weak'), got get_state() differs after restore.",
        "Make set_state() the inverse of get_state().",
    ),
    (Raising, "env.step(action) must run without raising, got ValueError: boom.", "Fix the exception in the env."),
    (
        GoalNotBatched,
        "compute_reward on a batch must return shape (4,) equal to the step rewards [-9.0, -8.0, -7.0, -7.0], got array(-31., shape=(), dtype=float64).",
        "Reduce over the last axis only (axis=-1).",
    ),
    (
        GoalWrongReward,
        "compute_reward(achieved_goal, desired_goal, info) must equal the step reward -8.0, got -9.0.",
        "Compute the step reward with compute_reward.",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0].__name__ for c in CASES])
def test_each_broken_env_gets_exactly_its_problem(case):
    env_cls, text, fix = case[:3]
    count = case[3] if len(case) > 3 else 1  # a global RNG also breaks the snapshot replay: both are real
    np.random.seed(1)  # GlobalRandom draws from it: the same values, hence the same message, every run
    report = bridge.check(env_cls(), targets="core")
    assert not report.ok
    first = report.errors[0]
    assert (first.target, first.severity) == ("core", "error")
    assert (first.message, first.fix) == (text, fix)
    assert len(report.errors) == count, [p.message for p in report.errors]
    assert not report.warnings
    # an unregistered env has no fresh instance; the check says so when it gets that far
    assert all(p.severity == "info" and "fresh-instance" in p.message for p in report.problems if p.severity != "error")


def test_json_report_names_targets_and_problems():
    report = bridge.check(NumpyReward(), targets="core")
    data = report.to_dict()
    assert data["ok"] is False and data["targets"] == {"core": False}
    assert data["problems"][0]["check"] == "reward"


def test_an_unknown_target_is_a_spec_error():
    with pytest.raises(bridge.SpecError, match=r"^check target must be one of \["):
        bridge.check(Good(), targets=["nope"])

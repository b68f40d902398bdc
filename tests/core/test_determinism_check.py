"""The determinism check catches what a snapshot forgot but the instance still holds: a goal drawn at
reset, a parameter drawn in __init__ from the global RNG, hidden state whose period divides the old
200-action tape, a forgotten step counter in a 20-step episode; it names the field and the step;
the seeding check names a reset that does not reseed. Whole messages."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge import spaces
from bridge.checker.determinism import DETOUR, TAPE_LENGTH, make_fresh
from bridge.errors import SpecError

STRONG_FIX = "Put every simulation field in get_state(), or declare determinism = 'weak'."
FRESH_FIX = (
    "Put every field that __init__ and reset() set in get_state() (a goal, a parameter, a step counter), so that "
    "a fresh env restored from the snapshot continues the same way, or declare determinism = 'weak'."
)
SAME = f"replay after restore_state (determinism 'strong', {TAPE_LENGTH}-action tape, {DETOUR}-step detour) must be bit-identical"


class Walk(bridge.Env):
    """A point on a line moved by the action; never ends by itself. Subclasses hide one field."""

    determinism = "strong"

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1e6, 1e6, (2,), np.float64)
        self.action_space = spaces.Discrete(3, start=-1)
        self.pos, self.t = 0.0, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = float(self.np_random.integers(0, 10)), 0
        return self._obs(), {}

    def _obs(self):
        return np.array([self.pos, 0.0])

    def _move(self, action):
        self.pos += int(action)
        self.t += 1

    def step(self, action):
        self._move(action)
        return self._obs(), -abs(self.pos), False, False, {}

    def get_state(self):
        return {"pos": self.pos, "t": self.t}

    def set_state(self, state):
        self.pos, self.t = float(state["pos"]), int(state["t"])


class HiddenGoal(Walk):
    """A goal drawn at reset is in the observation, not in the snapshot."""

    def __init__(self):
        super().__init__()
        self.observation_space = spaces.Dict(
            pos=spaces.Box(-1e6, 1e6, (1,), np.float64), goal=spaces.Box(0, 9, (2,), np.int64)
        )
        self.goal = np.zeros(2, np.int64)

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        self.goal = self.np_random.integers(0, 10, size=2)
        return self._obs(), info

    def _obs(self):
        return {"pos": np.array([self.pos]), "goal": self.goal.copy()}


class InitParameter(Walk):
    """A wind drawn in __init__ from numpy's global RNG moves the point; the snapshot omits it."""

    def __init__(self):
        super().__init__()
        self.wind = float(np.random.uniform(-1, 1))

    def _move(self, action):
        super()._move(action)
        self.pos += self.wind


class HiddenPeriod(Walk):
    """A phase of period 100 (it divides the old 200-action tape) drives the reward."""

    phase = 0

    def reset(self, *, seed=None, options=None):
        self.phase = 0
        return super().reset(seed=seed)

    def _move(self, action):
        super()._move(action)
        self.phase = (self.phase + 1) % 100

    def step(self, action):
        obs, _, terminated, truncated, info = super().step(action)
        return obs, float(self.phase), terminated, truncated, info


class ForgetsTheStepCounter(Walk):
    """20-step episodes, counted by t, which the snapshot forgets."""

    def step(self, action):
        obs, reward, _, _, info = super().step(action)
        return obs, reward, False, self.t >= 20, info

    def get_state(self):
        return {"pos": self.pos}

    def set_state(self, state):
        self.pos = float(state["pos"])


class NoReseed(Walk):
    """Seeds its generator once in __init__ and never in reset (no super().reset(seed=seed))."""

    def __init__(self):
        super().__init__()
        self.np_random = np.random.default_rng(123)

    def reset(self, *, seed=None, options=None):
        self.pos, self.t = float(self.np_random.integers(0, 10)), 0
        return self._obs(), {}


for cls in (Walk, HiddenGoal, InitParameter, HiddenPeriod, ForgetsTheStepCounter, NoReseed):
    bridge.register(f"test/{cls.__name__}-v0", cls)
bridge.register("test/CappedWalk-v0", Walk, max_episode_steps=100)


def _errors(env_id):
    np.random.seed(3)  # InitParameter draws from it: the same values, hence the same message
    report = bridge.check(env_id, targets="core")
    return [(p.message, p.fix) for p in report.problems], report


def test_an_honest_env_passes_with_a_fresh_instance_too():
    for env_id in ("test/Walk-v0", "test/CappedWalk-v0"):
        problems, _ = _errors(env_id)
        assert problems == []


@pytest.mark.parametrize(
    "env_id, message, fix",
    [
        (
            "test/HiddenGoal-v0",
            "replay in a fresh instance (from the registered spec 'test/HiddenGoal-v0') after restore_state (determinism 'strong', 211-action tape) must be bit-identical, got observation['goal'][0] 5 instead of 6 at step 1 after the restore.",
            FRESH_FIX,
        ),
        (
            "test/InitParameter-v0",
            "replay in a fresh instance (from the registered spec 'test/InitParameter-v0') after restore_state (determinism 'strong', 211-action tape) must be bit-identical, got observation[0] 5.127466281280263 instead of 4.8127664411932045 at step 1 after the restore.",
            FRESH_FIX,
        ),
        (
            "test/HiddenPeriod-v0",
            f"{SAME}, got reward 41.0 instead of 8.0 at step 1 after the restore.",
            STRONG_FIX,
        ),
        (
            "test/ForgetsTheStepCounter-v0",
            f"{SAME}, got truncated False instead of True at step 13 after the restore.",
            STRONG_FIX,
        ),
    ],
    ids=["goal-drawn-at-reset", "parameter-from-global-rng-in-init", "period-dividing-200", "forgotten-step-counter"],
)
def test_a_forgotten_field_is_caught_naming_field_and_step(env_id, message, fix):
    problems, report = _errors(env_id)
    assert problems == [(message, fix)]
    assert report.problems[0].check == "determinism"


def test_a_reset_that_does_not_reseed_is_named_as_such():
    problems, _ = _errors("test/NoReseed-v0")
    assert problems[0] == (
        "reset(seed=s) must reseed the env's generator through super().reset(seed=seed), got a reset that left self.np_random as it was (observation[0] 5.0 instead of 6.0 at the seeded reset).",
        "Call super().reset(seed=seed) first in reset().",
    )


def test_a_factory_given_to_check_builds_the_fresh_instance():
    report = bridge.check(HiddenGoal, targets="core")
    assert report.make_env is HiddenGoal
    assert [p.message for p in report.problems] == [
        "replay in a fresh instance (from the factory given to bridge.check) after restore_state (determinism 'strong', 211-action tape) must be bit-identical, got observation['goal'][0] 5 instead of 6 at step 1 after the restore."
    ]


def test_a_spec_that_builds_another_stack_is_not_used():
    env = bridge.TimeLimit(bridge.make("test/CappedWalk-v0").unwrapped, 5)
    fresh, why = make_fresh(env)
    assert fresh is None
    assert (
        why
        == "none: the instance from the registered spec 'test/CappedWalk-v0' is TimeLimit(100)[Walk], not TimeLimit(5)[Walk] with the same spaces"
    )
    report = bridge.check(env, targets="core")
    assert [(p.severity, p.message) for p in report.problems] == [
        (
            "info",
            "skipped the fresh-instance replay (determinism 'strong'), which needs a new env to restore the snapshot into: "
            "the instance from the registered spec 'test/CappedWalk-v0' is TimeLimit(100)[Walk], not TimeLimit(5)[Walk] with the same spaces.",
        )
    ]


class WeakIgnoresItsState(Walk):
    determinism = "weak"

    def set_state(self, state):
        pass


bridge.register("test/WeakIgnoresItsState-v0", WeakIgnoresItsState, max_episode_steps=50)


def test_a_weak_env_inside_a_time_limit_is_compared_at_every_level():
    # the TimeLimit's own counter is restored; the inner env's fields are not: still a failure
    problems, _ = _errors("test/WeakIgnoresItsState-v0")
    assert problems == [
        (
            "restore_state() must bring back the simulation state (determinism 'weak'), got get_state() differs after restore.",
            "Make set_state() the inverse of get_state().",
        )
    ]


def test_a_factory_that_builds_no_env_is_refused():
    with pytest.raises(SpecError) as e:
        bridge.check(lambda: "CartPole-v1")
    assert str(e.value) == (
        "env must be a bridge.Env, a gym, Gymnasium or dm_env env, its class, a factory, a registered id, "
        "module:attr or path/to/file.py:attr, or a bridge.VectorEnv, got a str from test_a_factory_that_builds_no_env_is_refused.<locals>.<lambda>(). "
        "Pass e.g. 'envbridge/GridWorld-v0', or subclass bridge.Env."
    )


def test_without_a_fresh_instance_a_goal_drawn_at_reset_is_caught_at_a_reset_boundary():
    # an instance that is neither registered nor given with a factory: no fresh instance, so the same
    # one is reset (a new goal is drawn) before the restore; the goal the snapshot forgot shows
    report = bridge.check(HiddenGoal(), targets="core")
    assert [(p.severity, p.message, p.fix) for p in report.problems] == [
        (
            "error",
            "replay after reset() then restore_state (determinism 'strong', 211-action tape) must be bit-identical, "
            "got observation['goal'][0] 3 instead of 6 at step 1 after the restore.",
            FRESH_FIX,
        ),
        (
            "info",
            "skipped the fresh-instance replay (determinism 'strong'), which needs a new env to restore the snapshot "
            "into: the env has no registered spec and bridge.check was given no factory.",
            "Check the env by its registered id (bridge.check('my/Env-v0')), or give bridge.check a factory.",
        ),
    ]
    assert [p.severity for p in bridge.check(Walk(), targets="core").problems] == ["info"]  # honest: the note only

"""The bad-input table's rows (docs/bad-input.md): the faulty Probe env, the row registry, core rows.

A row builds an export (or the neutral env, or an rlFunctionEnv), brings it to the point of the bad
input, and returns the bad call and a state function: ``bridge.snapshot.to_json`` of ``clone_state()``
plus the export's own counters. ``test_bad_input.py`` asserts the whole message and that the state
did not change. Rows needing a framework ``require`` it inside the row (skip outside its era, fail
inside it); this module holds the rows every era runs (neutral env, rlFunctionEnv).

Faulty user envs compute their outputs from the pre-step state and commit last (the usual shape of
a bug in the output expression), so a refused output must leave everything as it was: a guard that
let a counter or flag move would fail the state comparison.
"""

from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional, Tuple

import numpy as np

import bridge
from bridge import spaces
from bridge.errors import ContractError, SpecError
from bridge.snapshot import to_json


class Probe(bridge.Env):
    """Box(2,) observation, Box or Discrete action; terminates at step ``end_at``; ``fault`` spoils one output."""

    determinism = "strong"

    def __init__(self, fault: Optional[str] = None, discrete: bool = False, end_at: int = 100) -> None:
        self.observation_space = spaces.Box(-10.0, 10.0, (2,), np.float32)
        self.action_space = spaces.Discrete(3) if discrete else spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.fault, self.end_at = fault, end_at
        self.pos, self.t = np.zeros(2, np.float32), 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if self.fault == "reset_raises":
            raise KeyError("level-3")
        if self.fault == "bare_reset":
            return self.pos.copy()  # before drawing: the bug is in the output only
        self.pos, self.t = np.array([self.np_random.integers(0, 3), 0.0], np.float32), 0
        return self.pos.copy(), {}

    def step(self, action):
        if self.fault == "raises" and self.t == 2:
            raise ZeroDivisionError("division by zero")
        move = (
            np.array([float(action) - 1.0, 0.0], np.float32) if np.ndim(action) == 0 else np.asarray(action, np.float32)
        )
        pos, t = np.clip(self.pos + move, -10.0, 10.0).astype(np.float32), self.t + 1
        out = [pos.copy(), 0.5, t >= self.end_at, False, {}]
        spoil = {
            "obs_outside": lambda: out.__setitem__(0, np.full(2, 99.0, np.float32)),
            "obs_dtype": lambda: out.__setitem__(0, pos.astype(np.float64)),
            "nan_reward": lambda: out.__setitem__(1, float("nan")),
            "numpy_reward": lambda: out.__setitem__(1, np.float32(0.5)),
            "numpy_bools": lambda: out.__setitem__(2, np.bool_(t >= self.end_at)),
            "four_tuple": lambda: out.pop(3),
        }.get(self.fault)
        if spoil is not None:
            spoil()
            return tuple(out)  # returned before committing: the bug is in the output only
        self.pos, self.t = pos, t
        return tuple(out)

    def get_state(self):
        return {"pos": self.pos.copy(), "t": self.t}

    def set_state(self, state):
        self.pos, self.t = np.array(state["pos"], np.float32), int(state["t"])


class Row(NamedTuple):
    id: str
    where: str  # where it is caught, for the docs table
    error: type
    message: str
    build: Callable[[], Tuple[Callable[[], Any], Callable[[], str]]]  # -> (bad call, state)
    strict: bool = False  # the row needs strict=True
    cause: Optional[type] = None  # the chained original exception


ROWS: List[Row] = []


def row(id: str, where: str, error: type, text: str, *, strict: bool = False, cause: Optional[type] = None):
    def register(build):
        ROWS.append(Row(id, where, error, text, build, strict, cause))
        return build

    return register


def _json(*parts: Any) -> str:
    return to_json(list(parts))


def _steps(env: Any, action: Any, n: int) -> None:
    for _ in range(n):
        env.step(action)


BOX = np.zeros(2, np.float32)
DEFAULT_ACT = "Sample from env.action_space or clip the action into its bounds."
NEUTRAL_ACT = "Clip it into the bounds or widen the space (NaN is never inside)."

# -- the neutral env ---------------------------------------------------------------------------


@row(
    "neutral/restore-other-class",
    "Env.restore_state",
    ContractError,
    "snapshot must come from bad_input_table.Probe, got bridge.examples.gridworld.GridWorld. "
    "Restore snapshots only into the env class that made them.",
)
def _neutral_restore():
    env, other = Probe(), bridge.examples.GridWorld()
    env.reset(seed=0)
    other.reset(seed=0)
    return (lambda: env.restore_state(other.clone_state())), (lambda: _json(env.clone_state()))


@row(
    "neutral/restore-bare-into-timelimit",
    "Wrapper.restore_state",
    ContractError,
    "snapshot must come from bridge.env.TimeLimit, got bad_input_table.Probe. "
    "Restore snapshots only into the wrapper stack that made them.",
)
def _neutral_restore_wrapper():
    env = bridge.TimeLimit(Probe(), 5)
    env.reset(seed=0)
    bare = Probe()
    bare.reset(seed=1)
    return (lambda: env.restore_state(bare.clone_state())), (lambda: _json(env.clone_state()))


@row(
    "neutral/reset-negative-seed",
    "Env.reset",
    SpecError,
    "reset seed must be a non-negative int or None, got -1. Pass e.g. seed=0.",
)
def _neutral_seed():
    env = Probe()
    env.reset(seed=0)
    return (lambda: env.reset(seed=-1)), (lambda: _json(env.clone_state()))


# -- rlFunctionEnv (the MATLAB facade; both eras) ----------------------------------------------


def _matlab(step: Any = None, act: Any = None, validate: bool = True) -> Any:
    """An rlFunctionEnv over a [2 1] observation in [-5, 5]; Info["t"] counts steps; done at t == 3."""
    from bridge.adapters.matlab import rlFiniteSetSpec, rlFunctionEnv, rlNumericSpec

    def reset_fcn():
        return np.zeros((2, 1)), {"t": 0}

    def step_fcn(Action, Info):
        t = Info["t"] + 1
        return np.full((2, 1), 0.5), 1.0, t >= 3, {"t": t}

    observation = rlNumericSpec([2, 1], LowerLimit=-5, UpperLimit=5)
    return rlFunctionEnv(observation, act or rlFiniteSetSpec([-1, 1]), step or step_fcn, reset_fcn, validate=validate)


def _bad_from_second_step(*outputs: Any) -> Callable[..., Any]:
    """A StepFcn that is fine on its first call (so validateEnvironment passes) and bad after."""

    def step_fcn(Action, Info):
        if Info["t"] == 0:
            return np.zeros((2, 1)), 1.0, False, {"t": 1}
        if not outputs:
            raise ZeroDivisionError("division by zero")
        return tuple(outputs) + (Info,)

    return step_fcn


def _matlab_case(env: Any, steps: int, bad: Callable[[Any], Any], reset: bool = True, action: Any = 0):
    if reset:
        env.reset(seed=0)
    _steps(env, action, steps)
    return (lambda: bad(env)), (lambda: _json(env.clone_state()))


@row(
    "rlFunctionEnv/action-outside-finite-set",
    "rlFunctionEnv.step (action check)",
    ContractError,
    "action must lie in [0, 1] (an index into the rlFiniteSetSpec Elements [-1.0, 1.0]), got 2. "
    "Pass the element's index; env.to_neutral_action(value) converts an element value.",
)
def _m_finite():
    return _matlab_case(_matlab(), 1, lambda e: e.step(2))


@row(
    "rlFunctionEnv/action-element-value-not-index",
    "rlFunctionEnv.step (action check)",
    ContractError,
    "action must be an integer scalar (an index into the rlFiniteSetSpec Elements [-1.0, 1.0]), got -1.0. "
    "Pass the element's index; env.to_neutral_action(value) converts an element value.",
)
def _m_value():
    return _matlab_case(_matlab(), 1, lambda e: e.step(-1.0))


@row(
    "rlFunctionEnv/numeric-action-out-of-bounds",
    "rlFunctionEnv.step (action check)",
    ContractError,
    f"action[0, 0] must lie in [-1.0, 1.0], got 3.0. {NEUTRAL_ACT}",
)
def _m_numeric():
    from bridge.adapters.matlab import rlNumericSpec

    env = _matlab(act=rlNumericSpec([1, 1], LowerLimit=-1, UpperLimit=1))
    return _matlab_case(env, 1, lambda e: e.step(np.full((1, 1), 3.0)), action=np.zeros((1, 1)))


@row(
    "rlFunctionEnv/stepfcn-three-outputs",
    "rlFunctionEnv.step (output conversion)",
    ContractError,
    "StepFcn must return 4 outputs (NextObservation, Reward, IsDone, Info), got 3 outputs. "
    "End it with: return next_observation, reward, is_done, info.",
)
def _m_three():
    def step_fcn(Action, Info):
        if Info["t"] == 0:
            return np.zeros((2, 1)), 1.0, False, {"t": 1}
        return np.zeros((2, 1)), 1.0, False

    return _matlab_case(_matlab(step_fcn), 1, lambda e: e.step(0))


@row(
    "rlFunctionEnv/observation-outside-spec",
    "rlFunctionEnv.step (output conversion)",
    ContractError,
    "StepFcn output NextObservation[0, 0] must lie in [LowerLimit, UpperLimit] = [-5.0, 5.0], got 9.0. "
    "Keep the value inside the spec's limits, or widen them.",
)
def _m_obs():
    return _matlab_case(_matlab(_bad_from_second_step(np.full((2, 1), 9.0), 1.0, False)), 1, lambda e: e.step(0))


@row(
    "rlFunctionEnv/observation-wrong-shape",
    "rlFunctionEnv.step (output conversion)",
    ContractError,
    "StepFcn output NextObservation must have size [2 1], got size [5 1]. "
    "Return 2 values shaped [2 1] (the spec's Dimension).",
)
def _m_shape():
    return _matlab_case(_matlab(_bad_from_second_step(np.zeros(5), 1.0, False)), 1, lambda e: e.step(0))


@row(
    "rlFunctionEnv/nan-reward",
    "rlFunctionEnv.step (output conversion)",
    ContractError,
    "StepFcn output Reward must be finite, got nan. Guard the reward computation against NaN and inf.",
)
def _m_nan():
    return _matlab_case(_matlab(_bad_from_second_step(np.zeros((2, 1)), float("nan"), False)), 1, lambda e: e.step(0))


@row(
    "rlFunctionEnv/step-before-reset",
    "bridge.guard (rlFunctionEnv)",
    ContractError,
    "rlFunctionEnv step() must come after reset(), got step() before the first reset(). Call env.reset() first.",
)
def _m_before():
    return _matlab_case(_matlab(validate=False), 0, lambda e: e.step(0), reset=False)


@row(
    "rlFunctionEnv/step-after-isdone",
    "bridge.guard (rlFunctionEnv)",
    ContractError,
    "rlFunctionEnv step() must come after reset() once an episode has ended, got step() after terminated=True "
    "at step 3. Call env.reset() when terminated or truncated is True.",
)
def _m_after_done():
    return _matlab_case(_matlab(), 3, lambda e: e.step(0))


@row(
    "rlFunctionEnv/step-after-close",
    "bridge.guard (rlFunctionEnv)",
    ContractError,
    "rlFunctionEnv step() must not be called after close(), got step() on a closed env. Make a new env.",
)
def _m_closed():
    env = _matlab()
    env.reset(seed=0)
    env.close()
    return _matlab_case(env, 0, lambda e: e.step(0), reset=False)


@row(
    "rlFunctionEnv/stepfcn-raises",
    "bridge.guard (rlFunctionEnv)",
    ContractError,
    "rlFunctionEnv step() at step 2 must run without raising, got ZeroDivisionError: division by zero. "
    "Fix the env; the original exception and its traceback are chained as __cause__.",
    cause=ZeroDivisionError,
)
def _m_raises():
    return _matlab_case(_matlab(_bad_from_second_step()), 1, lambda e: e.step(0))

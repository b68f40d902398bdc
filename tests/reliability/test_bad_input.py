"""The bad-input table (docs/bad-input.md): one row per bad input, the whole message, state unchanged.

Each row builds an export (or the neutral env, or an rlFunctionEnv), brings it to the point of the
bad input, and asserts that the bad call raises exactly the documented error and that the bit-exact
state (``bridge.snapshot.to_json`` of ``clone_state()`` plus the export's own counters) is what it
was before. Rows that need a framework ``require`` it inside the row, so the module runs in every
era: core rows everywhere, gymnasium rows in modern, gym/DreamerV2 rows in legacy.

Faulty user envs compute their outputs from the pre-step state and commit last (the usual shape of
a bug in the output expression), so a refused output must leave everything as it was: a guard that
let a counter or flag move would fail the state comparison.
"""

from __future__ import annotations

import os
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

import numpy as np
import pytest
from support import raises_exactly, require

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
        move = np.array([float(action) - 1.0, 0.0], np.float32) if np.ndim(action) == 0 else np.asarray(action, np.float32)
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
    "snapshot must come from test_bad_input.Probe, got bridge.examples.gridworld.GridWorld. "
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
    "snapshot must come from bridge.env.TimeLimit, got test_bad_input.Probe. "
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


# -- to_gymnasium (modern era) -----------------------------------------------------------------


def _gymnasium(env: Any, steps: int = 0, reset: bool = True, **options: Any) -> Any:
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    export = to_gymnasium(env, **options)
    if reset:
        export.reset(seed=0)
    action = 0 if isinstance(env.action_space, spaces.Discrete) else BOX
    _steps(export, action, steps)
    return export


def _gymnasium_case(export: Any, bad: Callable[[Any], Any]):
    return (lambda: bad(export)), (lambda: _json(export.clone_state()))


for _id, _action, _text in [
    ("action-wrong-shape", np.zeros(3, np.float32), "action must have shape (2,), got shape (3,). Reshape it to the action space's shape."),
    (
        "action-wrong-dtype",
        np.zeros(2, np.float64),
        "action must have a dtype that casts safely to float32, got dtype float64. Cast it with .astype(np.float32).",
    ),
    ("action-out-of-bounds", np.array([2.0, 0.0], np.float32), f"action[0] must lie in [-1.0, 1.0], got 2.0. {DEFAULT_ACT}"),
    ("action-nan", np.array([np.nan, 0.0], np.float32), f"action[0] must lie in [-1.0, 1.0], got nan. {DEFAULT_ACT}"),
    (
        "action-list",
        [0.0, 0.0],
        "action must be a numpy array of dtype float32 and shape (2,), got [0.0, 0.0]. "
        "Pass np.asarray(action, dtype=np.float32).",
    ),
]:
    row(f"gymnasium/{_id}", "to_gymnasium step (action check)", ContractError, _text)(
        lambda a=_action: _gymnasium_case(_gymnasium(Probe(), 1), lambda e: e.step(a))
    )


@row(
    "gymnasium/discrete-action-out-of-range",
    "to_gymnasium step (action check)",
    ContractError,
    f"action must lie in [0, 2], got 3. {DEFAULT_ACT}",
)
def _g_discrete():
    return _gymnasium_case(_gymnasium(Probe(discrete=True), 1), lambda e: e.step(3))


_OUTPUT_ROWS = [
    (
        "observation-outside-space",
        "obs_outside",
        True,
        "Probe step observation[0] must lie in [-10.0, 10.0], got 99.0. "
        "Clip it into the bounds or widen the space (NaN is never inside).",
    ),
    (
        "observation-wrong-dtype",
        "obs_dtype",
        True,
        "Probe step observation must have dtype float32, got dtype float64. Cast it with .astype(np.float32).",
    ),
    ("nan-reward", "nan_reward", False, "Probe step reward must be finite, got nan. Guard the reward computation against NaN and inf."),
    (
        "numpy-scalar-reward",
        "numpy_reward",
        False,
        "Probe step reward must be a Python float (a numpy scalar is a defect), got numpy float32 0.5. Return float(reward).",
    ),
    ("numpy-bool-flags", "numpy_bools", False, "Probe step terminated must be a Python bool, got numpy bool False. Return bool(terminated)."),
    (
        "step-4-tuple",
        "four_tuple",
        False,
        "Probe step() must return a 5-tuple (obs, reward, terminated, truncated, info), got a 4-tuple. "
        "Split done into terminated and truncated.",
    ),
]

for _id, _fault, _strict, _text in _OUTPUT_ROWS:
    row(f"gymnasium/{_id}", "bridge.guard (to_gymnasium)", ContractError, _text, strict=_strict)(
        lambda f=_fault, s=_strict: _gymnasium_case(_gymnasium(Probe(f), 0, strict=s), lambda e: e.step(BOX))
    )


@row(
    "gymnasium/reset-bare-observation",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "Probe reset() must return a tuple (observation, info), got array([0., 0.], shape=(2,), dtype=float32). "
    "Return obs, info.",
)
def _g_bare():
    return _gymnasium_case(_gymnasium(Probe("bare_reset"), reset=False), lambda e: e.reset())


@row(
    "gymnasium/step-before-reset",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "gymnasium env step() must come after reset(), got step() before the first reset(). Call env.reset() first.",
)
def _g_before():
    return _gymnasium_case(_gymnasium(Probe(), reset=False), lambda e: e.step(BOX))


@row(
    "gymnasium/step-after-terminated",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "gymnasium env step() must come after reset() once an episode has ended, got step() after terminated=True "
    "at step 1. Call env.reset() when terminated or truncated is True.",
)
def _g_terminated():
    return _gymnasium_case(_gymnasium(Probe(end_at=1), 1), lambda e: e.step(BOX))


@row(
    "gymnasium/step-after-truncated",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "gymnasium env step() must come after reset() once an episode has ended, got step() after truncated=True "
    "at step 2. Call env.reset() when terminated or truncated is True.",
)
def _g_truncated():
    return _gymnasium_case(_gymnasium(bridge.TimeLimit(Probe(), 2), 2), lambda e: e.step(BOX))


@row(
    "gymnasium/step-after-close",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "gymnasium env step() must not be called after close(), got step() on a closed env. Make a new env.",
)
def _g_closed():
    export = _gymnasium(Probe(), 1)
    export.close()
    return _gymnasium_case(export, lambda e: e.step(BOX))


@row(
    "gymnasium/reset-after-close",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "gymnasium env reset() must not be called after close(), got reset() on a closed env. Make a new env.",
)
def _g_reset_closed():
    export = _gymnasium(Probe(), 1)
    export.close()
    return _gymnasium_case(export, lambda e: e.reset(seed=3))


@row(
    "gymnasium/user-step-raises",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "Probe step() at step 3 must run without raising, got ZeroDivisionError: division by zero. "
    "Fix the env; the original exception and its traceback are chained as __cause__.",
    cause=ZeroDivisionError,
)
def _g_raises():
    return _gymnasium_case(_gymnasium(Probe("raises"), 2), lambda e: e.step(BOX))


@row(
    "gymnasium/user-reset-raises",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "Probe reset() must run without raising, got KeyError: 'level-3'. "
    "Fix the env; the original exception and its traceback are chained as __cause__.",
    cause=KeyError,
)
def _g_reset_raises():
    export = _gymnasium(Probe(), 1)
    export.neutral.fault = "reset_raises"
    return _gymnasium_case(export, lambda e: e.reset())


@row(
    "gymnasium/user-step-raises-registered-id",
    "bridge.guard (to_gymnasium)",
    ContractError,
    "bad-input/Probe-v0 step() at step 3 must run without raising, got ZeroDivisionError: division by zero. "
    "Fix the env; the original exception and its traceback are chained as __cause__.",
    cause=ZeroDivisionError,
)
def _g_raises_id():
    from bridge.registry import register

    register("bad-input/Probe-v0", Probe, kwargs={"fault": "raises"})
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    export = to_gymnasium("bad-input/Probe-v0")
    export.reset(seed=0)
    _steps(export, BOX, 2)
    return _gymnasium_case(export, lambda e: e.step(BOX))


@row(
    "gymnasium/restore-other-env-class",
    "Env.restore_state (via the export)",
    ContractError,
    "snapshot must come from test_bad_input.Probe, got bridge.examples.pointmass.PointMass. "
    "Restore snapshots only into the env class that made them.",
)
def _g_restore():
    export, other = _gymnasium(Probe(), 1), _gymnasium(bridge.examples.PointMass(), 1)
    return _gymnasium_case(export, lambda e: e.restore_state(other.clone_state()))


# -- to_gym (legacy era) -----------------------------------------------------------------------


def _gym(env: Any, steps: int = 0, reset: bool = True, **options: Any) -> Any:
    require("gym")
    from bridge.adapters.gym import to_gym

    export = to_gym(env, **options)
    if reset:
        export.reset(seed=0)
    _steps(export, 0 if isinstance(env.action_space, spaces.Discrete) else BOX, steps)
    return export


def _gym_case(export: Any, bad: Callable[[Any], Any]):
    return (lambda: bad(export)), (lambda: _json(export.env.clone_state(), list(export.last_flags)))


for _id, _action, _text in [
    ("action-wrong-shape", np.zeros(3, np.float32), "action must have shape (2,), got shape (3,). Reshape it to (2,)."),
    ("action-out-of-bounds", np.array([2.0, 0.0], np.float32), f"action[0] must lie in [-1.0, 1.0], got 2.0. {NEUTRAL_ACT}"),
    ("action-nan", np.array([np.nan, 0.0], np.float32), f"action[0] must lie in [-1.0, 1.0], got nan. {NEUTRAL_ACT}"),
]:
    row(f"gym/{_id}", "to_gym step (action check)", ContractError, _text)(
        lambda a=_action: _gym_case(_gym(Probe(), 1), lambda e: e.step(a))
    )

for _id, _fault, _strict, _text in _OUTPUT_ROWS:
    row(f"gym/{_id}", "bridge.guard (to_gym)", ContractError, _text, strict=_strict)(
        lambda f=_fault, s=_strict: _gym_case(_gym(Probe(f), 0, strict=s), lambda e: e.step(BOX))
    )


@row(
    "gym/step-before-reset",
    "bridge.guard (to_gym)",
    ContractError,
    "gym env step() must come after reset(), got step() before the first reset(). Call env.reset() first.",
)
def _gym_before():
    return _gym_case(_gym(Probe(), reset=False), lambda e: e.step(BOX))


@row(
    "gym/step-after-done-strict",
    "bridge.guard (to_gym)",
    ContractError,
    "gym env step() must come after reset() once an episode has ended, got step() after terminated=True "
    "at step 1. Call env.reset() when terminated or truncated is True.",
    strict=True,
)
def _gym_after_done():
    return _gym_case(_gym(Probe(end_at=1), 1, strict=True), lambda e: e.step(BOX))


@row(
    "gym/step-after-close",
    "bridge.guard (to_gym)",
    ContractError,
    "gym env step() must not be called after close(), got step() on a closed env. Make a new env.",
)
def _gym_closed():
    export = _gym(Probe(), 1)
    export.close()
    return _gym_case(export, lambda e: e.step(BOX))


@row(
    "gym/user-step-raises",
    "bridge.guard (to_gym)",
    ContractError,
    "Probe step() at step 3 must run without raising, got ZeroDivisionError: division by zero. "
    "Fix the env; the original exception and its traceback are chained as __cause__.",
    cause=ZeroDivisionError,
)
def _gym_raises():
    return _gym_case(_gym(Probe("raises"), 2), lambda e: e.step(BOX))


@row(
    "gym/user-reset-raises",
    "bridge.guard (to_gym)",
    ContractError,
    "Probe reset() must run without raising, got KeyError: 'level-3'. "
    "Fix the env; the original exception and its traceback are chained as __cause__.",
    cause=KeyError,
)
def _gym_reset_raises():
    export = _gym(Probe(), 1)
    export.env.fault = "reset_raises"
    return _gym_case(export, lambda e: e.reset())


# -- the to_dreamerv2 chain (legacy era) -------------------------------------------------------


def _chain(env: Any, steps: int = 0, reset: bool = True, **options: Any) -> Tuple[Any, Any]:
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import to_dreamer_ready, wrap_chain

    ready = to_dreamer_ready(env, **options)
    chain = wrap_chain(ready)  # what to_dreamerv2 builds: GymWrapper, ResizeImage, OneHot/Normalize, TimeLimit
    if reset:
        chain.reset()
    discrete = isinstance(env.action_space, spaces.Discrete)
    action = {"action": np.eye(3, dtype=np.float32)[1] if discrete else np.zeros(2, np.float32)}
    _steps(chain, action, steps)
    return chain, ready


def _chain_case(built: Tuple[Any, Any], bad: Callable[[Any], Any]):
    chain, ready = built
    state = lambda: _json(ready.env.clone_state(), ready.step_count, list(ready.last_flags))  # noqa: E731
    return (lambda: bad(chain)), state


ONE_HOT = {"action": np.eye(3, dtype=np.float32)[1]}
SOFT = {"action": np.array([0.5, 0.5, 0.0], np.float32)}


@row("dreamerv2/soft-one-hot", "DreamerV2's OneHotAction", ValueError, f"Invalid one-hot action:\n{SOFT}")
def _d_soft():
    return _chain_case(_chain(Probe(discrete=True), 1), lambda c: c.step(SOFT))


READY_ACT = (
    "the Dreamer-ready action must be a float array of shape (2,) inside [low, high] = [-1.0, 1.0], got {}. "
    "Send values in [-1, 1] through DreamerV2's NormalizeAction."
)

for _id, _action, _where, _error, _text in [
    (
        "continuous-out-of-range",
        np.array([3.0, 0.0], np.float32),
        "Dreamer-ready env (action decode)",
        ContractError,
        READY_ACT.format("array([3., 0.], shape=(2,), dtype=float32)"),
    ),
    (
        "continuous-nan",
        np.array([np.nan, 0.0], np.float32),
        "Dreamer-ready env (action decode)",
        ContractError,
        READY_ACT.format("array([nan,  0.], shape=(2,), dtype=float32)"),
    ),
    (  # DreamerV2's NormalizeAction scales the action with numpy before anything of ours sees it
        "continuous-wrong-shape",
        np.zeros(3, np.float32),
        "DreamerV2's NormalizeAction (numpy)",
        ValueError,
        "operands could not be broadcast together with shapes (3,) (2,) ",
    ),
]:
    row(f"dreamerv2/{_id}", _where, _error, _text)(
        lambda a=_action: _chain_case(_chain(Probe(), 1), lambda c: c.step({"action": a}))
    )

for _id, _fault, _strict, _text in _OUTPUT_ROWS:
    row(f"dreamerv2/{_id}", "bridge.guard (Dreamer-ready env)", ContractError, _text, strict=_strict)(
        lambda f=_fault, s=_strict: _chain_case(_chain(Probe(f, discrete=True), 0, strict=s), lambda c: c.step(ONE_HOT))
    )


@row(
    "dreamerv2/step-before-reset-chain",
    "DreamerV2's TimeLimit (an assert: gone under python -O)",
    AssertionError,
    "Must reset environment.",
)
def _d_before_chain():
    return _chain_case(_chain(Probe(discrete=True), reset=False), lambda c: c.step(ONE_HOT))


@row(
    "dreamerv2/step-before-reset",
    "bridge.guard (Dreamer-ready env, under GymWrapper)",
    ContractError,
    "DreamerV2 env step() must come after reset(), got step() before the first reset(). Call env.reset() first.",
)
def _d_before():
    built = _chain(Probe(discrete=True), reset=False)
    return _chain_case(built, lambda c: built[1].step(1))


@row(
    "dreamerv2/step-after-end",
    "bridge.guard (Dreamer-ready env)",
    ContractError,
    "DreamerV2 env step() must come after reset() once an episode has ended, got step() after terminated=True "
    "at step 1. Call env.reset() when terminated or truncated is True.",
)
def _d_after_end():
    return _chain_case(_chain(Probe(discrete=True, end_at=1), 1), lambda c: c.step(ONE_HOT))


@row(
    "dreamerv2/step-after-close",
    "bridge.guard (Dreamer-ready env)",
    ContractError,
    "DreamerV2 env step() must not be called after close(), got step() on a closed env. Make a new env.",
)
def _d_closed():
    built = _chain(Probe(discrete=True), 1)
    built[0].close()
    return _chain_case(built, lambda c: c.step(ONE_HOT))


@row(
    "dreamerv2/user-step-raises",
    "bridge.guard (Dreamer-ready env)",
    ContractError,
    "Probe step() at step 3 must run without raising, got ZeroDivisionError: division by zero. "
    "Fix the env; the original exception and its traceback are chained as __cause__.",
    cause=ZeroDivisionError,
)
def _d_raises():
    return _chain_case(_chain(Probe("raises", discrete=True), 2), lambda c: c.step(ONE_HOT))


# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ROWS, ids=[r.id for r in ROWS])
def test_bad_input_raises_the_whole_message_and_changes_nothing(case: Row):
    bad, state = case.build()
    before = state()
    with raises_exactly(case.error, case.message) as caught:
        bad()
    assert state() == before
    if case.cause is not None:
        assert type(caught.value.__cause__) is case.cause



def test_docs_table_lists_every_row_with_its_whole_message():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "bad-input.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    table = {line.split("|")[1].strip(" `"): line for line in lines if line.startswith("| `")}
    missing = [r.id for r in ROWS if r.id not in table]
    assert not missing, f"docs/bad-input.md lacks rows {missing}"
    for r in ROWS:
        shown = r.message.replace("|", "\\|").replace("\n", "\\n")
        assert shown in table[r.id], f"docs/bad-input.md row {r.id} does not show its message {shown!r}"
        assert f"`{r.error.__name__}`" in table[r.id], r.id
        assert ("yes" if r.strict else "no") == table[r.id].split("|")[4].strip(), r.id


def test_the_guard_state_machine_without_any_framework():
    from bridge.guard import Guard

    env = Probe(end_at=2)
    guard = Guard(env, "probe env")
    guard.reset(env.reset, seed=0)
    assert guard.step(env.step, BOX)[2:4] == (False, False)
    assert guard.step(env.step, BOX)[2] is True
    with raises_exactly(
        ContractError,
        "probe env step() must come after reset() once an episode has ended, got step() after terminated=True at "
        "step 2. Call env.reset() when terminated or truncated is True.",
    ):
        guard.step(env.step, BOX)
    guard.reset(env.reset)  # reset recovers
    assert guard.steps == 0 and guard.step(env.step, BOX)[2] is False


def test_a_refused_output_ends_the_episode_until_reset():
    from bridge.guard import Guard

    env = Probe("numpy_reward")
    guard = Guard(env, "probe env")
    guard.reset(env.reset, seed=0)
    with pytest.raises(ContractError):
        guard.step(env.step, BOX)
    with raises_exactly(
        ContractError,
        "probe env step() must come after reset() once an episode has ended, got step() after a refused step() "
        "output at step 1. Call env.reset() when terminated or truncated is True.",
    ):
        guard.step(env.step, BOX)
    env.fault = None
    guard.reset(env.reset)
    assert type(guard.step(env.step, BOX)[1]) is float


def test_a_bridge_error_from_inside_the_env_passes_through_unchanged():
    from bridge.guard import Guard

    inner = bridge.TimeLimit(Probe(), 3)
    guard = Guard(inner, "probe env")
    guard.reset(inner.reset, seed=0)
    text = "snapshot must come from bridge.env.TimeLimit, got None. Restore snapshots only into the wrapper stack that made them."

    def step(action):
        inner.restore_state({"class": None})

    with raises_exactly(ContractError, text) as caught:
        guard.step(step, BOX)
    assert caught.value.__cause__ is None


def test_gym_warns_on_a_step_past_the_end_by_default_like_gyms_own_envs():
    _gym_export = _gym(Probe(end_at=1), 1)
    text = (
        "gym env step() must come after reset() once an episode has ended, got step() after terminated=True at "
        "step 1. Call env.reset() when terminated or truncated is True."
    )
    with pytest.warns(UserWarning) as warned:
        _gym_export.step(BOX)
    assert [str(w.message) for w in warned] == [text]

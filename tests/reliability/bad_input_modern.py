"""Bad-input rows through ``to_gymnasium`` (modern era; each row requires gymnasium)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from bad_input_table import BOX, DEFAULT_ACT, Probe, _json, _steps, row
from support import require

import bridge
from bridge import spaces
from bridge.errors import ContractError


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
    (
        "action-wrong-shape",
        np.zeros(3, np.float32),
        "action must have shape (2,), got shape (3,). Reshape it to the action space's shape.",
    ),
    (
        "action-wrong-dtype",
        np.full(2, 0.1, np.float64),
        "action must hold values float32 represents exactly (a cast that rounds is refused), got dtype float64 values that round. Round them yourself: .astype(np.float32).",
    ),
    (
        "action-out-of-bounds",
        np.array([2.0, 0.0], np.float32),
        f"action[0] must lie in [-1.0, 1.0], got 2.0. {DEFAULT_ACT}",
    ),
    ("action-nan", np.array([np.nan, 0.0], np.float32), f"action[0] must lie in [-1.0, 1.0], got nan. {DEFAULT_ACT}"),
    (  # issue 40: zero-valued strings, objects and records said "dtype <U1 values that round"
        "action-strings",
        np.zeros(2, "<U1"),
        "action must hold numbers, got dtype <U1. Cast it with .astype(np.float32).",
    ),
    (
        "action-objects",
        np.zeros(2, object),
        "action must hold numbers, got dtype object. Cast it with .astype(np.float32).",
    ),
    (
        "action-records",
        np.zeros(2, [("a", "f4")]),
        "action must hold numbers, got dtype [('a', '<f4')]. Cast it with .astype(np.float32).",
    ),
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


OUTPUT_ROWS = [
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
        False,  # dtype and shape are checked at every export by default; bounds need strict=True
        "Probe step observation must have dtype float32, got dtype float64. Cast it with .astype(np.float32).",
    ),
    (
        "nan-reward",
        "nan_reward",
        False,
        "Probe step reward must be finite, got nan. Guard the reward computation against NaN and inf.",
    ),
    (
        "numpy-scalar-reward",
        "numpy_reward",
        False,
        "Probe step reward must be a Python float (a numpy scalar is a defect), got numpy float32 0.5. Return float(reward).",
    ),
    (
        "numpy-bool-flags",
        "numpy_bools",
        False,
        "Probe step terminated must be a Python bool, got numpy bool False. Return bool(terminated).",
    ),
    (
        "step-4-tuple",
        "four_tuple",
        False,
        "Probe step() must return a 5-tuple (obs, reward, terminated, truncated, info), got a 4-tuple. "
        "Split done into terminated and truncated.",
    ),
]

for _id, _fault, _strict, _text in OUTPUT_ROWS:
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
    "snapshot must come from bad_input_table.Probe, got bridge.examples.pointmass.PointMass. "
    "Restore snapshots only into the env class that made them.",
)
def _g_restore():
    export, other = _gymnasium(Probe(), 1), _gymnasium(bridge.examples.PointMass(), 1)
    return _gymnasium_case(export, lambda e: e.restore_state(other.clone_state()))

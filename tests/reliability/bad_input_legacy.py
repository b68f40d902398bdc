"""Bad-input rows through ``to_gym`` and the ``to_dreamerv2`` chain (legacy era; rows require them)."""

from __future__ import annotations

from typing import Any, Callable, Tuple

import numpy as np
from bad_input_modern import OUTPUT_ROWS
from bad_input_table import BOX, NEUTRAL_ACT, Probe, _json, _steps, row
from support import require

from bridge import spaces
from bridge.errors import ContractError, OrderError

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
    return (lambda: bad(export)), (lambda: _json(export.neutral.clone_state(), list(export.last_flags)))


for _id, _action, _text in [
    ("action-wrong-shape", np.zeros(3, np.float32), "action must have shape (2,), got shape (3,). Reshape it to (2,)."),
    (
        "action-out-of-bounds",
        np.array([2.0, 0.0], np.float32),
        f"action[0] must lie in [-1.0, 1.0], got 2.0. {NEUTRAL_ACT}",
    ),
    ("action-nan", np.array([np.nan, 0.0], np.float32), f"action[0] must lie in [-1.0, 1.0], got nan. {NEUTRAL_ACT}"),
]:
    row(f"gym/{_id}", "to_gym step (action check)", ContractError, _text)(
        lambda a=_action: _gym_case(_gym(Probe(), 1), lambda e: e.step(a))
    )

for _id, _fault, _strict, _text in OUTPUT_ROWS:
    row(f"gym/{_id}", "bridge.guard (to_gym)", ContractError, _text, strict=_strict)(
        lambda f=_fault, s=_strict: _gym_case(_gym(Probe(f), 0, strict=s), lambda e: e.step(BOX))
    )


@row(
    "gym/step-before-reset",
    "bridge.guard (to_gym; gym's own words: its check_env compares them)",
    OrderError,
    "Cannot call env.step() before calling reset()",
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
    export.neutral.fault = "reset_raises"
    return _gym_case(export, lambda e: e.reset())


# -- the to_dreamerv2 chain (legacy era) -------------------------------------------------------


def _chain(env: Any, steps: int = 0, reset: bool = True, **options: Any) -> Tuple[Any, Any]:
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import to_dreamer_ready, wrap_chain

    ready = to_dreamer_ready(env, **options)
    chain = wrap_chain(
        ready
    )  # what to_dreamerv2 builds: GymWrapper, ResizeImage, OneHot/Normalize, TimeLimit, ChainActions
    if reset:
        chain.reset()
    discrete = isinstance(env.action_space, spaces.Discrete)
    action = {"action": np.eye(3, dtype=np.float32)[1] if discrete else np.zeros(2, np.float32)}
    _steps(chain, action, steps)
    return chain, ready


def _chain_case(built: Tuple[Any, Any], bad: Callable[[Any], Any]):
    chain, ready = built
    state = lambda: _json(ready.neutral.clone_state(), ready.steps, list(ready.last_flags))  # noqa: E731
    return (lambda: bad(chain)), state


ONE_HOT = {"action": np.eye(3, dtype=np.float32)[1]}
CHAIN = "bridge's ChainActions (outermost link of the chain)"
CHAIN_ONE_HOT = (
    "the DreamerV2 chain's action['action'] must be a one-hot numpy array of shape (3,) (one 1, every other "
    "value 0), got {}. Send np.eye(3, dtype=np.float32)[index] for an index in [0, 2]."
)
CHAIN_FLOAT = (
    "the DreamerV2 chain's action['action'] must be a float numpy array of shape (2,) (NormalizeAction maps "
    "[-1, 1] onto the bounds), got {}. Send np.asarray(value, dtype=np.float32) with one value per dimension."
)

# DreamerV2's OneHotAction argmaxes any length (a [0, 1] on Discrete(3) reached the env as 1) and
# indexes a scalar or 2-D one (IndexError); its NormalizeAction rescales with numpy (a list: TypeError,
# a wrong shape: a broadcast ValueError, strings: UFuncTypeError). ChainActions checks first.
for _id, _action, _text in [
    ("soft-one-hot", np.array([0.5, 0.5, 0.0], np.float32), "array([0.5, 0.5, 0. ], shape=(3,), dtype=float32)"),
    ("short-one-hot", np.array([0.0, 1.0], np.float32), "array([0., 1.], shape=(2,), dtype=float32)"),
    ("index-not-one-hot", 1, "1"),
    ("2d-one-hot", np.array([[0, 1, 0]]), "array([[0, 1, 0]], shape=(1, 3), dtype=int64)"),
    ("list-one-hot", [0, 1, 0], "[0, 1, 0]"),
]:
    row(f"dreamerv2/{_id}", CHAIN, ContractError, CHAIN_ONE_HOT.format(_text))(
        lambda a=_action: _chain_case(_chain(Probe(discrete=True), 1), lambda c: c.step({"action": a}))
    )

READY_ACT = (
    "the Dreamer-ready action must be a float array of shape (2,) inside [low, high] = [-1.0, 1.0], got {}. "
    "Send values in [-1, 1] through DreamerV2's NormalizeAction."
)

for _id, _action, _where, _text in [
    (
        "continuous-out-of-range",
        np.array([3.0, 0.0], np.float32),
        "Dreamer-ready env (action decode)",
        READY_ACT.format("array([3., 0.], shape=(2,), dtype=float32)"),
    ),
    (
        "continuous-nan",
        np.array([np.nan, 0.0], np.float32),
        "Dreamer-ready env (action decode)",
        READY_ACT.format("array([nan,  0.], shape=(2,), dtype=float32)"),
    ),
    (
        "continuous-wrong-shape",
        np.zeros(3, np.float32),
        CHAIN,
        CHAIN_FLOAT.format("array([0., 0., 0.], shape=(3,), dtype=float32)"),
    ),
    ("continuous-list", [0.5, -0.5], CHAIN, CHAIN_FLOAT.format("[0.5, -0.5]")),
    (
        "continuous-strings",
        np.array(["0.5", "0"]),
        CHAIN,
        CHAIN_FLOAT.format("array(['0.5', '0'], shape=(2,), dtype=<U3)"),
    ),
]:
    row(f"dreamerv2/{_id}", _where, ContractError, _text)(
        lambda a=_action: _chain_case(_chain(Probe(), 1), lambda c: c.step({"action": a}))
    )


@row(
    "dreamerv2/action-not-a-dict",
    CHAIN,
    ContractError,
    "the DreamerV2 chain's action must be a dict with the key 'action', got array([0., 0.], shape=(2,), "
    "dtype=float32). Pass {'action': value}, as DreamerV2's agent does.",
)
def _d_not_a_dict():
    return _chain_case(_chain(Probe(), 1), lambda c: c.step(np.zeros(2, np.float32)))


for _id, _fault, _strict, _text in OUTPUT_ROWS:
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
    "bridge.guard (Dreamer-ready env, under GymWrapper; gym's own words)",
    OrderError,
    "Cannot call env.step() before calling reset()",
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

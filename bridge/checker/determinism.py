"""The seeding and snapshot checks of the core profile: reproducible resets, and ``determinism``
promises verified by replaying a tape into the same instance and into a fresh one.

A check that restores right after its tape, into the env that made the snapshot, misses what the
snapshot forgot but the instance still holds: a goal drawn at reset, a parameter drawn in
``__init__``, a step counter or any hidden state whose period divides the tape length. So:

* the env runs :data:`PREFIX` actions, snapshots, runs the :data:`TAPE_LENGTH`-action tape (the
  truth), then a :data:`DETOUR` of other actions, and only then restores and replays the tape:
  211 + 22 = 233 steps, a prime, lie between snapshot and restore, so no hidden period shorter than
  that is back in phase;
* a fresh instance (from ``report.make_env`` when the caller gave a factory, else from the env's
  registered spec) is reset with another seed, restored from the snapshot after a JSON round trip,
  and must replay the tape the same way; when no fresh instance exists (an ``info`` problem says
  so), the same instance is reset (a reset boundary: what ``reset()`` sets is drawn anew), restored
  and must replay it the same way;
* every difference names its field (``observation['pos'][1]``, reward, terminated, truncated), the
  two values and the step, counted from 1 after the restore.
"""

from __future__ import annotations

import copy
from typing import Any, List, Optional, Tuple

import numpy as np

from bridge import snapshot as _snapshot
from bridge.checker.report import Report
from bridge.checker.stepping import T, _call, _equal, _run_tape
from bridge.env import Env, TimeLimit, Wrapper
from bridge.guard import env_id, unseeded_reset

__all__ = ["PREFIX", "TAPE_LENGTH", "DETOUR", "ACTIONS", "check_seeding", "check_snapshots", "make_fresh"]

PREFIX = 7  # actions before the snapshot: mid-episode
TAPE_LENGTH = 211  # prime
DETOUR = 22  # TAPE_LENGTH + DETOUR = 233, prime
SEEDING_STEPS = 20
ACTIONS = PREFIX + TAPE_LENGTH + DETOUR
# Fixes in the author's own terms (Env.authoring): a class env or a MATLAB-style function env.
_FIXES = {
    "class": {
        "strong": "Put every simulation field in get_state(), or declare determinism = 'weak'",
        "fresh": (
            "Put every field that __init__ and reset() set in get_state() (a goal, a parameter, a step "
            "counter), so that a fresh env restored from the snapshot continues the same way, or declare "
            "determinism = 'weak'"
        ),
        "randomness": "Draw all randomness from self.np_random after super().reset(seed=seed)",
        "plain": "Return plain data from get_state()",
    },
    "matlab-function": {
        "strong": (
            "Keep every simulation value in Info (LoggedSignals), which your step and reset functions "
            "return, or pass determinism='weak' to rlFunctionEnv"
        ),
        "fresh": (
            "Keep every value your functions use in Info (LoggedSignals), not in module globals or "
            "closures, so that a fresh env restored from the snapshot continues the same way, or pass "
            "determinism='weak' to rlFunctionEnv"
        ),
        "randomness": (
            "Draw all randomness from the rng argument of your step and reset functions (a parameter "
            "named rng), not from np.random or random"
        ),
        "plain": "Keep Info plain data (numbers, arrays, lists, dicts)",
    },
}


def _fix(env: Env, topic: str) -> str:
    return _FIXES.get(getattr(env.unwrapped, "authoring", "class"), _FIXES["class"])[topic]


def check_seeding(env: Env, report: Report, seed: int, actions: List[Any]) -> None:
    """``reset(seed=s)`` twice must give the same stream; say so plainly when reset never reseeds."""
    seen: set = set()
    first = [("reset", copy.deepcopy(env.reset(seed=seed)[0]))] + _run_tape(env, report, actions[:SEEDING_STEPS], seen)
    base = env.unwrapped
    generator = base._np_random  # not base.__dict__: it would slow the env's later attribute loads
    second = [("reset", copy.deepcopy(env.reset(seed=seed)[0]))] + _run_tape(env, report, actions[:SEEDING_STEPS], seen)
    reseeded = base._np_random is not generator and base._np_random_seed == seed
    found = first_difference(first, second, "after reset(seed=s)")
    if found is None:
        if not reseeded:  # the same stream without the seed: still what every export's guard refuses
            report.add(T, "error", *unseeded_reset(env_id(env), seed).parts, "seeding")
        return
    if not reseeded:
        report.add(
            T,
            "error",
            "reset(seed=s)",
            "reseed the env's generator through super().reset(seed=seed)",
            f"a reset that left self.np_random as it was ({found})",
            "Call super().reset(seed=seed) first in reset()",
            "seeding",
        )
    else:
        report.add(
            T,
            "error",
            "reset(seed=s)",
            "reproduce the same trajectory",
            found,
            _fix(env, "randomness"),
            "seeding",
        )


# -- snapshots -----------------------------------------------------------------------------------
def check_snapshots(env: Env, report: Report, seed: int, actions: List[Any]) -> None:
    """The ``determinism`` promise: "weak" restores get_state(), "strong" replays bit-identically
    into the same instance after a detour and into a fresh instance."""
    if env.determinism == "none":
        return
    env.reset(seed=seed)
    for action in actions[:PREFIX]:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    snap = _call(report, "env.clone_state()", env.clone_state)
    try:
        plain = _snapshot.from_json(_snapshot.to_json(snap))
    except Exception as e:
        report.add(
            T,
            "error",
            "clone_state()",
            "be plain data (dict, list, tuple, ndarray, scalars)",
            f"{type(e).__name__}: {e}",
            _fix(env, "plain"),
            "snapshot",
        )
        return
    tape = actions[PREFIX : PREFIX + TAPE_LENGTH]
    seen: set = set()
    if env.determinism == "weak":
        before = _snapshot.to_json(env.clone_state(include_rng=False))  # every level of a wrapper stack
        _run_tape(env, report, tape, seen)
        _call(report, "env.restore_state(snapshot)", env.restore_state, snap)
        if _snapshot.to_json(env.clone_state(include_rng=False)) != before:
            report.add(
                T,
                "error",
                "restore_state()",
                "bring back the simulation state (determinism 'weak')",
                "get_state() differs after restore",
                "Make set_state() the inverse of get_state()",
                "determinism",
            )
        return
    truth = _run_tape(env, report, tape, seen)
    _run_tape(env, report, actions[PREFIX + TAPE_LENGTH :], seen)  # the detour, off the record
    _call(report, "env.restore_state(snapshot)", env.restore_state, snap)
    found = first_difference(truth, _run_tape(env, report, tape, seen), "after the restore")
    if found is not None:
        subject = f"replay after restore_state (determinism 'strong', {TAPE_LENGTH}-action tape, {DETOUR}-step detour)"
        report.add(T, "error", subject, "be bit-identical", found, _fix(env, "strong"), "determinism")
        return
    _check_fresh(env, report, seed, plain, tape, truth)


def _check_fresh(env: Env, report: Report, seed: int, plain: Any, tape: List[Any], truth: List[tuple]) -> None:
    fresh, origin = make_fresh(env, report)
    if fresh is None:
        _check_reset_boundary(env, report, plain, tape, truth)
        why = origin[len("none: ") :] if origin.startswith("none: ") else origin
        report.note(
            T,
            "skipped the fresh-instance replay (determinism 'strong'), which needs a new env to restore "
            f"the snapshot into: {why}",
            "Check the env by its registered id (bridge.check('my/Env-v0')), or give bridge.check a factory",
            "determinism",
        )
        return
    try:
        _call(report, "a fresh env's reset(seed=...)", fresh.reset, seed=seed + 1)
        _call(report, "a fresh env's restore_state(snapshot)", fresh.restore_state, plain)
        found = first_difference(truth, _run_tape(fresh, report, tape, set()), "after the restore")
    finally:
        fresh.close()
    if found is not None:
        subject = f"replay in a fresh instance ({origin}) after restore_state (determinism 'strong', "
        subject += f"{TAPE_LENGTH}-action tape)"
        report.add(T, "error", subject, "be bit-identical", found, _fix(env, "fresh"), "determinism")


def _check_reset_boundary(env: Env, report: Report, plain: Any, tape: List[Any], truth: List[tuple]) -> None:
    """Without a fresh instance, the same one at a reset boundary: ``reset()`` draws what reset
    sets (a goal) anew, then the snapshot must bring the episode back whole."""
    env.reset()
    _call(report, "env.restore_state(snapshot)", env.restore_state, plain)
    found = first_difference(truth, _run_tape(env, report, tape, set()), "after the restore")
    if found is not None:
        subject = f"replay after reset() then restore_state (determinism 'strong', {TAPE_LENGTH}-action tape)"
        report.add(T, "error", subject, "be bit-identical", found, _fix(env, "fresh"), "determinism")


def make_fresh(env: Env, report: Optional[Report] = None) -> Tuple[Optional[Env], str]:
    """A new instance built like ``env``, and where it came from; ``(None, why not)`` otherwise.

    The factory is ``report.make_env`` when the caller of :func:`bridge.check` set one (a check of
    a callable), else ``env.unwrapped.spec.make`` (a registered env). The instance must have the
    same wrapper stack (types, TimeLimit caps) and spaces as ``env``, or it is not used.
    """
    factory = getattr(report, "make_env", None)
    spec = getattr(env.unwrapped, "spec", None)
    if callable(factory):
        build, origin = factory, "from the factory given to bridge.check"
    elif spec is not None and callable(getattr(spec, "make", None)):
        build, origin = spec.make, f"from the registered spec {getattr(spec, 'id', '?')!r}"
    else:
        return None, "none: the env has no registered spec and bridge.check was given no factory"
    try:
        fresh = build()
    except Exception as e:  # user code
        return None, f"none: building one {origin} raised {type(e).__name__}: {e}"
    if not isinstance(fresh, Env) or _stack(fresh) != _stack(env) or not _same_spaces(fresh, env):
        shown = _stack_text(fresh) if isinstance(fresh, Env) else type(fresh).__name__
        if isinstance(fresh, Env):
            fresh.close()
        return None, f"none: the instance {origin} is {shown}, not {_stack_text(env)} with the same spaces"
    return fresh, origin


def _stack(env: Env) -> List[tuple]:
    out = []
    while True:
        out.append((type(env), getattr(env, "max_episode_steps", None) if isinstance(env, TimeLimit) else None))
        if not isinstance(env, Wrapper):
            return out
        env = env.env


def _stack_text(env: Env) -> str:
    text = ""
    for kind, cap in reversed(_stack(env)):
        name = kind.__name__ + (f"({cap})" if cap is not None else "")
        text = f"{name}[{text}]" if text else name
    return text


def _same_spaces(a: Env, b: Env) -> bool:
    return a.observation_space == b.observation_space and a.action_space == b.action_space


# -- naming the first difference ------------------------------------------------------------------
def first_difference(expected: List[tuple], got: List[tuple], after: str) -> Optional[str]:
    """``"observation['pos'][1] 3.0 instead of 5.0 at step 2 after the restore"``, or None.

    Streams are what the tape runner returns: ``("reset", obs)`` entries and ``(obs, reward,
    terminated, truncated)`` steps; steps are counted from 1.
    """
    step = 0
    for want, have in zip(expected, got):
        is_reset = _is_reset(want)
        if is_reset:
            where = f"the reset after step {step} {after}" if step else "the seeded reset"
        else:
            step += 1
            where = f"step {step} {after}"
        if _is_reset(have) != is_reset:
            return (
                f"{'a reset' if not is_reset else 'a step'} instead of {'a reset' if is_reset else 'a step'} at {where}"
            )
        pairs = (
            [("observation", want[1], have[1])]
            if is_reset
            else list(zip(("observation", "reward", "terminated", "truncated"), want, have))
        )
        for field, a, b in pairs:
            found = _value_difference(field, a, b)
            if found is not None:
                return f"{found} at {where}"
    if len(expected) != len(got):
        return f"{len(got)} entries instead of {len(expected)} {after}"
    return None


def _is_reset(entry: tuple) -> bool:
    return isinstance(entry[0], str) and entry[0] == "reset"


def _value_difference(field: str, want: Any, have: Any) -> Optional[str]:
    """The first leaf where two nested values differ, as ``"<path> <got> instead of <expected>"``."""
    stack = [(field, want, have)]
    while stack:
        path, a, b = stack.pop()
        if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
            stack.extend((f"{path}[{k!r}]", a[k], b[k]) for k in reversed(list(a)))
        elif isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
            stack.extend((f"{path}[{i}]", x, y) for i, (x, y) in reversed(list(enumerate(zip(a, b)))))
        elif _equal(a, b):
            continue
        elif isinstance(a, (np.ndarray, np.generic)) and isinstance(b, (np.ndarray, np.generic)):
            return _array_difference(path, np.asarray(a), np.asarray(b))
        else:
            return f"{path} {_shown(b)} instead of {_shown(a)}"
    return None


def _array_difference(path: str, a: np.ndarray, b: np.ndarray) -> str:
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"{path} {b.dtype}{b.shape} instead of {a.dtype}{a.shape}"
    if a.ndim == 0:
        return f"{path} {b.item()!r} instead of {a.item()!r}"
    # by bytes, so -0.0 against 0.0 and NaN payloads count, as in _equal
    rows_a = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8).reshape(a.size, -1)
    rows_b = np.frombuffer(np.ascontiguousarray(b).tobytes(), np.uint8).reshape(b.size, -1)
    flat = int(np.argmax((rows_a != rows_b).any(axis=1)))
    index = tuple(int(i) for i in np.unravel_index(flat, a.shape))
    return f"{path}{list(index)} {b[index].item()!r} instead of {a[index].item()!r}"


def _shown(value: Any) -> str:
    if isinstance(value, np.generic):
        return f"{value.item()!r} ({value.dtype.name})"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

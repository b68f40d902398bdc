"""Running an env step by step for the checks: calls that report instead of raising, the step
output checks, and the tape runner shared by the core profile and the determinism checks."""

from __future__ import annotations

import copy
import math
from typing import Any, List, Optional

import numpy as np

from bridge.checker.report import Report
from bridge.env import Env

T = "core"


def _equal(a: Any, b: Any) -> bool:
    """Bit-identical comparison of nested observations (dtype and shape included)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _kind(value: Any) -> str:
    """Type and value, the same text under numpy 1.19 and 2.x."""
    if isinstance(value, np.generic):
        return f"numpy {value.dtype.name} {value.item()!r}"
    return f"{type(value).__name__} {value!r}"


class _Stop(Exception):
    """Raised inside the profile when a failure makes the remaining checks meaningless."""


def _call(report: Report, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # user code: report, never crash the checker
        report.add(
            T,
            "error",
            what,
            "run without raising",
            f"{type(e).__name__}: {e}",
            "Fix the exception in the env",
            "raises",
        )
        raise _Stop from e


def _check_info(report: Report, info: Any, where: str) -> None:
    if not isinstance(info, dict):
        report.add(
            T, "error", where, "be a dict", type(info).__name__, "Return {} when there is nothing to report", "info"
        )
    elif "episode" in info:
        report.add(
            T,
            "error",
            where,
            "not use the key 'episode' (reserved for SB3's Monitor)",
            sorted(info),
            "Rename the key",
            "info",
        )


def _check_step_output(env: Env, report: Report, out: Any, seen: set) -> Optional[tuple]:
    if not isinstance(out, tuple) or len(out) != 5:
        length = len(out) if isinstance(out, tuple) else type(out).__name__
        report.add(
            T,
            "error",
            "env.step()",
            "return a 5-tuple (obs, reward, terminated, truncated, info)",
            length,
            "Split done into terminated and truncated",
            "step",
        )
        raise _Stop
    obs, reward, terminated, truncated, info = out

    def once(key: str, *args: Any) -> None:
        if key not in seen:
            seen.add(key)
            report.add(T, "error", *args)

    found = env.observation_space.mismatch(obs, "step observation")
    if found is not None:
        once("obs", found[0], found[1], found[2], found[3], "observation")
    if isinstance(reward, np.generic):
        once(
            "reward",
            "step reward",
            "be a Python float (a numpy scalar is a defect)",
            _kind(reward),
            "Return float(reward)",
            "reward",
        )
    elif type(reward) is not float:
        once("reward", "step reward", "be a Python float", _kind(reward), "Return float(reward)", "reward")
    elif not math.isfinite(reward):
        once("reward", "step reward", "be finite", reward, "Guard the reward computation against NaN and inf", "reward")
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if type(flag) is not bool:
            once(name, f"step {name}", "be a Python bool", _kind(flag), f"Return bool({name})", "flags")
    if not isinstance(info, dict) or "episode" in info:
        if "info" not in seen:
            seen.add("info")
            _check_info(report, info, "step info")
    return out


def _run_tape(env: Env, report: Report, actions: List[Any], seen: set) -> List[tuple]:
    """Step through ``actions`` (resetting after episode ends); return the stream."""
    stream = []
    for action in actions:
        out = _check_step_output(env, report, _call(report, "env.step(action)", env.step, action), seen)
        obs, reward, terminated, truncated, _ = out
        stream.append((copy.deepcopy(obs), reward, terminated, truncated))
        if terminated or truncated:
            obs, _ = _call(report, "env.reset()", env.reset)
            stream.append(("reset", copy.deepcopy(obs)))
    return stream

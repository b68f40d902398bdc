"""The "gym" check profile: gym's own ``check_env`` plus the episode-end mapping."""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Dict

import numpy as np
from bridge.adapters.gym.export import gym, to_gym

from bridge.checker.report import Report
from bridge.env import Env, TimeLimit
from bridge.errors import ConversionError

# -- the "gym" check profile -------------------------------------------------------------------
T = "gym"


def _report_failure(report: Report, what: str, error: Exception, fix: str, check: str) -> None:
    parts = getattr(error, "parts", None)
    if parts is not None:
        report.add(T, "error", *parts, check=check)
    else:
        report.add(T, "error", what, "run without raising", f"{type(error).__name__}: {error}", fix, check)


def gym_profile(env: Env, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """gym's own ``check_env`` (behind gym.make's OrderEnforcing) plus the episode-end mapping."""
    try:
        exported = to_gym(env, **options)
    except ConversionError as e:
        _report_failure(report, "to_gym(env)", e, "Change the space", "spaces")
        return
    try:  # a submodule gym does not import by itself
        checker = importlib.import_module("gym.utils.env_checker").check_env
    except (ImportError, AttributeError):
        checker = None
        report.add(
            T,
            "warning",
            "gym.utils.env_checker.check_env",
            "exist in this gym",
            gym.__version__,
            "Install gym==0.23.1 to run gym's own checker",
            "check_env",
        )
    if checker is not None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                checker(gym.wrappers.OrderEnforcing(exported), warn=True)
            except Exception as e:  # gym's checker asserts; report what it says
                report.add(
                    T,
                    "error",
                    "gym.utils.env_checker.check_env",
                    "pass",
                    f"{type(e).__name__}: {e}",
                    "Fix what gym's checker names",
                    "check_env",
                )
        for w in caught:
            if "gym" in str(getattr(w, "filename", "")) and "WARN" in str(w.message):
                report.add(
                    T,
                    "warning",
                    "gym.utils.env_checker.check_env",
                    "not warn",
                    str(w.message).strip(),
                    "Consider gym's advice",
                    "check_env",
                )
    try:
        _check_episode_ends(env, report, seed)
    except Exception as e:  # user code raised: report, never crash the checker
        _report_failure(report, "the gym export", e, "Fix the exception in the env", "episode-end")


def _check_episode_ends(env: Env, report: Report, seed: int) -> None:
    rng = np.random.default_rng(seed)
    capped = to_gym(TimeLimit(env, 1))
    capped.reset(seed=seed)
    _, _, done, info = capped.step(env.action_space.sample(rng))
    terminated, truncated = capped.last_flags
    expected = {"done": True, "is_terminal": terminated, "TimeLimit.truncated": not terminated}
    got = {"done": done, "is_terminal": info.get("is_terminal"), "TimeLimit.truncated": info.get("TimeLimit.truncated")}
    if got != expected:
        report.add(
            T,
            "error",
            "a time-out step",
            f"map to {expected}",
            repr(got),
            "Report bugs in bridge.adapters.gym",
            "episode-end",
        )
    exported = to_gym(env)
    exported.reset(seed=seed)
    for _ in range(50):
        obs, _, done, info = exported.step(env.action_space.sample(rng))
        terminated, truncated = exported.last_flags
        if (done, info["is_terminal"], info["TimeLimit.truncated"]) != (
            terminated or truncated,
            terminated,
            truncated and not terminated,
        ):
            report.add(
                T,
                "error",
                "a step's episode-end flags",
                "follow done/is_terminal/TimeLimit.truncated",
                repr(info),
                "Report bugs in bridge.adapters.gym",
                "episode-end",
            )
            return
        if not exported.observation_space.contains(obs):
            report.add(
                T,
                "error",
                "a step observation",
                "lie in the gym observation_space",
                repr(obs)[:80],
                "Return observations of exactly the declared dtype, shape and bounds",
                "observation",
            )
            return
        if done:
            exported.reset()

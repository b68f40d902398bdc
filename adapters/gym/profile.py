"""The "gym" check profile: gym's own ``check_env`` plus the episode-end mapping."""

from __future__ import annotations

import importlib
from typing import Any, Dict

import numpy as np
from bridge.adapters._shared.profile import exported_or_reported, run_runtime_checker
from bridge.adapters.gym.export import gym, to_gym

from bridge.checker.report import Report
from bridge.env import Env, TimeLimit

# -- the "gym" check profile -------------------------------------------------------------------
T = "gym"


def gym_profile(env: Env, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """gym's own ``check_env`` (behind gym.make's OrderEnforcing) plus the episode-end mapping."""
    exported = exported_or_reported(to_gym, env, report, T, options, "to_gym(env)", "Change the space", "spaces")
    if exported is None:
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
        run_runtime_checker(
            report,
            T,
            "gym.utils.env_checker.check_env",
            lambda: checker(gym.wrappers.OrderEnforcing(exported), warn=True),
            keep=lambda w: "gym" in str(getattr(w, "filename", "")) and "WARN" in str(w.message),
        )
    try:
        _check_episode_ends(env, report, seed)
    except Exception as e:  # user code raised: report, never crash the checker
        report.add_exception(T, e, "the gym export", "Fix the exception in the env", "episode-end")


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

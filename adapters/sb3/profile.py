"""The "sb3" check profile: SB3's refusals, SB3's own ``check_env`` on ``to_sb3``'s export, advice."""

from __future__ import annotations

import contextlib
import io
from typing import Any, Dict

from bridge.adapters._shared.profile import announce_roundings, run_runtime_checker
from bridge.adapters.gymnasium.export import GymnasiumEnv
from bridge.adapters.gymnasium.profile import export_or_report
from bridge.adapters.sb3.lowering import policy_for, sb3_refusal

from bridge import spaces as ns
from bridge.checker.report import Report

T = "sb3"


def sb3_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """SB3's refusals, ``stable_baselines3.common.env_checker.check_env``, and policy advice."""
    from stable_baselines3.common.env_checker import check_env

    options = {"float64_as_float32": True, **options}  # what to_sb3 builds
    export = export_or_report(env, report, T, **options)
    if export is None:
        return
    error = sb3_refusal(export.neutral.action_space, export)
    if error is not None:
        report.add(T, "error", *error.parts, check="lowering")
        return
    with contextlib.redirect_stdout(io.StringIO()):  # SB3 prints a note about goal envs
        run_runtime_checker(
            report, T, "stable_baselines3.common.env_checker.check_env", lambda: check_env(export, warn=True)
        )
    _advise(export, report)
    export.reset(seed=seed)


def _advise(export: GymnasiumEnv, report: Report) -> None:
    announce_roundings(
        report,
        T,
        export.observation_lowering.roundings,
        "SB3's policies compute in float32",
        "to_sb3(env, float64_as_float32=False) keeps float64 if you need it",
    )
    policy = policy_for(export.observation_space)
    why = {
        "MultiInputPolicy": "a Dict observation",
        "CnnPolicy": "an image observation",
        "MlpPolicy": "a flat observation",
    }[policy]
    fix = f"Use e.g. PPO({policy!r}, vec_env)"
    report.add(T, "info", "the SB3 policy", f"be {policy!r} for {why}", repr(export.observation_space), fix, "policy")
    action = export.neutral.action_space
    if (
        type(action) is ns.Box
        and not export.normalize_actions
        and ((action.low != -1).any() or (action.high != 1).any())
    ):
        bounds = f"[{action.low.min()}, {action.high.max()}]"
        fix = "Export with to_gymnasium(env, normalize_actions=True)"
        report.add(
            T, "info", "the action Box for SB3", "be [-1, 1] (SB3 squashes/clips to the Box)", bounds, fix, "policy"
        )

"""The "sb3" check profile: SB3's refusals, SB3's own ``check_env`` on ``to_sb3``'s export, what
SB3's default CNN cannot convolve, advice.

Besides the export options, ``options`` may name the ``policy`` and ``policy_kwargs`` a model
would get (default: :func:`policy_for`'s policy, no kwargs, as ``envbridge train sb3`` uses).
"""

from __future__ import annotations

import contextlib
import io
from typing import Any, Dict

from bridge.adapters._shared.profile import announce_roundings, exported_or_reported, normalize_fix, run_runtime_checker
from bridge.adapters.gymnasium.export import GymnasiumEnv, to_gymnasium
from bridge.adapters.sb3.lowering import POLICY_REASONS, cnn_refusal, policy_for, sb3_refusal

from bridge import spaces as ns
from bridge.checker.report import Report

T = "sb3"


def sb3_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """SB3's refusals, ``stable_baselines3.common.env_checker.check_env``, and policy advice."""
    from stable_baselines3.common.env_checker import check_env

    options = {"float64_as_float32": True, **options}  # what to_sb3 builds
    policy, policy_kwargs = options.pop("policy", None), options.pop("policy_kwargs", None)
    export = exported_or_reported(to_gymnasium, env, report, T, options)
    if export is None:
        return
    error = sb3_refusal(export.neutral.action_space, export.action_space)
    if error is not None:
        report.add(T, "error", *error.parts, check="lowering")
        return
    named = policy is not None
    policy = policy or policy_for(export.observation_space)
    too_small = cnn_refusal(export.observation_space, policy, policy_kwargs)
    with contextlib.redirect_stdout(io.StringIO()):  # SB3 prints a note about goal envs
        run_runtime_checker(
            report,
            T,
            "stable_baselines3.common.env_checker.check_env",
            lambda: check_env(export, warn=True),
            # cnn_refusal decides with SB3's own classes: the error below says what SB3's "minimal
            # resolution" warning says, with the fixes, and under MlpPolicy or a custom extractor
            # (check options policy / policy_kwargs) the warning does not apply
            keep=lambda w: "minimal resolution for an image" not in str(w.message),
        )
    if too_small is not None:
        report.add(T, "error", *too_small.parts, check="cnn")
    # no policy advice beside the error (its fix is the advice) or for a policy the user named
    _advise(export, report, policy_advice=too_small is None and not named)
    export.reset(seed=seed)


def _advise(export: GymnasiumEnv, report: Report, policy_advice: bool) -> None:
    announce_roundings(
        report,
        T,
        export.observation_lowering.roundings,
        "SB3's policies compute in float32",
        "to_sb3(env, float64_as_float32=False) keeps float64 if you need it",
    )
    if policy_advice:
        _advise_policy(export, report)
    action = export.neutral.action_space
    if (
        type(action) is ns.Box
        and not export.options["normalize_actions"]
        and ((action.low != -1).any() or (action.high != 1).any())
    ):
        bounds = f"[{action.low.min()}, {action.high.max()}]"
        text = f"rescale the action Box {bounds} to [-1, 1] for SB3, which squashes/clips actions to the Box"
        report.note(T, text, normalize_fix(T), "policy")


def _advise_policy(export: GymnasiumEnv, report: Report) -> None:
    policy = policy_for(export.observation_space)
    dotted = [k for k in getattr(export.observation_space, "spaces", {}) if "." in k]
    if dotted:  # MultiInputPolicy would fail building a module per key: no advice that cannot build
        subject = f"observation key {dotted[0]!r}"
        expectation = "not contain '.' (SB3's MultiInputPolicy builds one torch module per key)"
        report.add(
            T, "error", subject, expectation, repr(dotted[0]), "Rename the key, e.g. with '_' or '/'", check="policy"
        )
        return
    why = POLICY_REASONS[policy]
    space = export.observation_space
    report.note(T, f"use {policy!r} for {why}: {space!r}", f"Train with e.g. PPO({policy!r}, vec_env)", "policy")

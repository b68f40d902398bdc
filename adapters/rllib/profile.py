"""The "rllib" check profile: RLlib's refusals, the checks RLlib's env creation applies, RLlib advice.

RLlib 2.60's single-agent env runner runs no env check of its own; what checks an env there is
Gymnasium's ``PassiveEnvChecker``, which RLlib's ``gym.make`` of the registered env adds. So the
profile runs Gymnasium's ``check_env`` (which includes the passive checks) on the RLlib export,
and advises what an RLlib user adds for this env: ``FlattenObservations`` for observations that
RLlib's default encoders cannot read, ``conv_filters`` for image sizes RLlib has no CNN for.
"""

from __future__ import annotations

from typing import Any, Dict

from bridge.adapters._shared.profile import announce_roundings, exported_or_reported, run_runtime_checker
from bridge.adapters.rllib.export import to_rllib
from bridge.adapters.rllib.lowering import needs_flatten, no_default_cnn

from bridge.checker.report import Report

T = "rllib"


def rllib_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """``to_rllib(env)``, Gymnasium's ``check_env`` on it, and RLlib advice (see module doc)."""
    from gymnasium.utils.env_checker import check_env

    export = exported_or_reported(to_rllib, env, report, T, options)
    if export is None:
        return
    run_runtime_checker(
        report, T, "gymnasium.utils.env_checker.check_env", lambda: check_env(export, skip_render_check=True)
    )
    announce_roundings(
        report,
        T,
        export.observation_lowering.roundings,
        "RLlib's torch modules compute in float32",
        "the RLlib export always presents float64 as float32",
    )
    space = export.observation_space
    connector = "config.env_runners(env_to_module_connector=lambda env, spaces, device: FlattenObservations())"
    if no_default_cnn(space):  # without a connector or filters, RLlib's module would not build
        report.note(
            T,
            f"RLlib's default CNN has no filters for images of {space.shape[0]}x{space.shape[1]}: add RLlib's "
            f"FlattenObservations connector (an MLP reads the image) or your own conv_filters",
            f"{connector} (envbridge train rllib adds it), or config.rl_module(model_config={{'conv_filters': "
            "[...]}) for a CNN",
            "cnn",
        )
    elif needs_flatten(space):
        report.note(
            T,
            f"add RLlib's FlattenObservations connector for this observation: {space!r}",
            f"{connector}; envbridge train rllib adds it",
            "connector",
        )
    export.reset(seed=seed)

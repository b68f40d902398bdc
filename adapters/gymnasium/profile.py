"""The "gymnasium" check profile: Gymnasium's own ``check_env`` on the export, as report entries.

Exceptions become errors and warnings become warnings; both keep the runtime's own words, with
an envbridge fix where we know one (:mod:`bridge.adapters._shared.profile`).
"""

from __future__ import annotations

from typing import Any, Dict

from bridge.adapters._shared.profile import exported_or_reported, run_runtime_checker
from bridge.adapters.gymnasium.export import to_gymnasium

from bridge.checker.report import Report

T = "gymnasium"


def gymnasium_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """Export ``env`` (with ``options``) and run ``gymnasium.utils.env_checker.check_env`` on it."""
    from gymnasium.utils.env_checker import check_env

    export = exported_or_reported(to_gymnasium, env, report, T, options)
    if export is None:
        return
    # without a spec Gymnasium cannot rebuild the env for other render modes (and warns so)
    run_runtime_checker(
        report,
        T,
        "gymnasium.utils.env_checker.check_env",
        lambda: check_env(export, skip_render_check=export.spec is None),
    )
    export.reset(seed=seed)

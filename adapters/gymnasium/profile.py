"""The "gymnasium" check profile: Gymnasium's own ``check_env`` on the export, as report entries.

Exceptions become errors and warnings become warnings; both keep the runtime's own words, with
an envbridge fix where we know one (:mod:`bridge.adapters._shared.profile`).
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Optional, Set

from bridge.adapters._shared.profile import clean_text, run_runtime_checker
from bridge.adapters.gymnasium.export import to_gymnasium
from bridge.adapters.importers.source import ForeignEnv

from bridge.checker.report import Report
from bridge.errors import ConversionError

T = "gymnasium"


def export_or_report(env: Any, report: Report, target: str, **options: Any) -> Optional[Any]:
    """``to_gymnasium(env)``, or None after recording the ConversionError as an error entry."""
    try:
        return to_gymnasium(env, **options)
    except ConversionError as e:
        report.add_exception(target, e, "the export", "See the message", "lowering")
        return None


def gymnasium_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """Export ``env`` (with ``options``) and run ``gymnasium.utils.env_checker.check_env`` on it."""
    from gymnasium.utils.env_checker import check_env

    export = export_or_report(env, report, T, **options)
    if export is None:
        return
    own = _own_warnings(env, check_env)
    # without a spec Gymnasium cannot rebuild the env for other render modes (and warns so); an
    # imported env's render modes are its own (its "human" would open a window), not the export's
    skip_render = export.spec is None or isinstance(env.unwrapped, ForeignEnv)
    run_runtime_checker(
        report,
        T,
        "gymnasium.utils.env_checker.check_env",
        lambda: check_env(export, skip_render_check=skip_render),
        keep=lambda w: clean_text(w.message) not in own,
    )
    if own:
        name = env.unwrapped.spec.id
        report.note(
            T,
            f"Gymnasium's check_env gives {name} itself the same {len(own)} warning(s) (its own declarations): "
            "left out here",
            "Nothing to do: they are about the env as its authors declared it, not about the export",
            "runtime-checker",
        )
    export.reset(seed=seed)


def _own_warnings(env: Any, check_env: Any) -> Set[str]:
    """The warnings Gymnasium's check_env gives the original of an env imported from Gymnasium
    (advice about its own declarations, which the user of the import cannot act on); empty otherwise."""
    original = env.unwrapped
    if not isinstance(original, ForeignEnv) or original.api != "gymnasium":
        return set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check_env(original.env.unwrapped, skip_render_check=True)
        except Exception:  # its errors are the export's to report, as they are
            pass
    return {clean_text(w.message) for w in caught}

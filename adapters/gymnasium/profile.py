"""The "gymnasium" check profile: Gymnasium's own ``check_env`` on the export, as report entries.

Exceptions become errors and warnings become warnings; both keep the runtime's own words, with
an envbridge fix where we know one. :func:`run_runtime_checker` is shared with the "sb3" profile.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, Callable, Dict, Optional

from bridge.adapters.gymnasium.export import to_gymnasium

from bridge.checker.report import Report
from bridge.errors import ConversionError

T = "gymnasium"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

# words in a runtime's warning -> what to do about it with envbridge
_FIXES = (
    (
        "symmetric and normalized",
        "Export with to_gymnasium(env, normalize_actions=True), which exposes the action as [-1, 1]",
    ),
    ("infinity", "Give the Box finite bounds if the values are bounded"),
    ("non-zero start", "Report this: envbridge lowers Discrete(start) to Discrete(n)"),
    ("render", "Declare metadata['render_modes'] and accept render_mode in the constructor"),
)


def _fix_for(text: str) -> str:
    for words, fix in _FIXES:
        if words in text:
            return fix
    return "Read the runtime's message; fix the neutral env, not the export"


def _clean(text: str) -> str:
    text = _ANSI.sub("", str(text)).strip()
    return text[len("WARN: ") :] if text.startswith("WARN: ") else text


def run_runtime_checker(report: Report, target: str, checker_name: str, run: Callable[[], Any]) -> bool:
    """Run a runtime's checker; record its exception (error) and warnings (warning). True if clean."""
    clean = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run()
        except Exception as e:  # the runtime's checker speaks through assertions and exceptions
            text = _clean(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
            report.add(target, "error", checker_name, "pass", text, _fix_for(text), "runtime-checker")
            clean = False
    seen = set()
    for w in caught:
        text = _clean(w.message)
        if text in seen:
            continue
        seen.add(text)
        report.add(target, "warning", checker_name, "pass without warnings", text, _fix_for(text), "runtime-checker")
        clean = False
    return clean


def export_or_report(env: Any, report: Report, target: str, **options: Any) -> Optional[Any]:
    """``to_gymnasium(env)``, or None after recording the ConversionError as an error entry."""
    try:
        return to_gymnasium(env, **options)
    except ConversionError as e:
        parts = getattr(e, "parts", ("the export", "succeed", str(e), "See the message"))
        report.add(target, "error", *parts, check="lowering")
        return None


def gymnasium_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """Export ``env`` (with ``options``) and run ``gymnasium.utils.env_checker.check_env`` on it."""
    from gymnasium.utils.env_checker import check_env

    export = export_or_report(env, report, T, **options)
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


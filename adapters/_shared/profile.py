"""What every runtime's check profile shares: running the runtime's own checker into a report."""

from __future__ import annotations

import re
import warnings
from typing import Any, Callable, Dict, Optional

from bridge import runtimes
from bridge.checker.report import Report
from bridge.errors import BridgeError, ConversionError

__all__ = ["exported_or_reported", "run_runtime_checker", "clean_text", "announce_roundings", "normalize_fix"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

# words in a runtime's warning -> what to do about it with envbridge ("{normalize}": the target's own)
_FIXES = (
    ("symmetric and normalized", "{normalize}"),
    ("infinity", "Give the Box finite bounds if the values are bounded"),
    ("non-zero start", "Report this: envbridge lowers Discrete(start) to Discrete(n)"),
    ("render", "Declare metadata['render_modes'] and accept render_mode in the constructor"),
)


def exported_or_reported(
    export: Callable[..., Any],
    env: Any,
    report: Report,
    target: str,
    options: Dict[str, Any],
    where: str = "the export",
    fix: str = "See the message",
    check: str = "lowering",
) -> Optional[Any]:
    """Every profile's first step: ``export(env, **options)``, or None after recording the
    ConversionError (a space the runtime cannot hold) as an error entry of ``target``."""
    try:
        return export(env, **options)
    except ConversionError as e:
        report.add_exception(target, e, where, fix, check)
        return None


def normalize_fix(target: str) -> str:
    """How to present a bounded Box action as [-1, 1] with ``target``'s own export (its era's)."""
    row = runtimes.get(target)
    if "normalize_actions" in row.options:
        return f"Export with {row.export}(env, normalize_actions=True), which exposes the action as [-1, 1]"
    why = row.refusals.get("normalize_actions", f"{row.export} has no normalize_actions").split(": ", 1)[-1]
    return f"Declare the action Box as [-1, 1] and rescale it in the env's step ({why})"


def _fix_for(text: str, target: str) -> str:
    for words, fix in _FIXES:
        if words in text:
            return normalize_fix(target) if fix == "{normalize}" else fix
    return "Read the runtime's message; fix the neutral env, not the export"


def clean_text(text: str) -> str:
    """A runtime's message without ANSI colour codes or its "WARN: " prefix."""
    text = _ANSI.sub("", str(text)).strip()
    return text[len("WARN: ") :] if text.startswith("WARN: ") else text


def run_runtime_checker(
    report: Report,
    target: str,
    checker_name: str,
    run: Callable[[], Any],
    keep: Optional[Callable[[Any], bool]] = None,
) -> bool:
    """Run a runtime's checker; record its exception (error) and warnings (warning). True if clean.

    An envbridge error raised from inside (the export refusing what the env did) is the env's own
    defect and is recorded with its own parts. ``keep(warning)`` filters the warnings recorded.
    """
    clean = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run()
        except BridgeError as e:
            report.add_exception(target, e, "the export", "Fix the env", "runtime-checker")
            clean = False
        except Exception as e:  # the runtime's checker speaks through assertions and exceptions
            text = clean_text(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
            report.add(target, "error", checker_name, "pass", text, _fix_for(text, target), "runtime-checker")
            clean = False
    seen = set()
    for w in caught:
        if keep is not None and not keep(w):
            continue
        text = clean_text(w.message)
        if text in seen:
            continue
        seen.add(text)
        report.add(
            target, "warning", checker_name, "pass without warnings", text, _fix_for(text, target), "runtime-checker"
        )
        clean = False
    return clean


def announce_roundings(report: Report, target: str, roundings: Any, why: str, keep: str) -> None:
    """Advise (severity "info") the announced roundings of an export's lowering (the one float
    policy): ``why`` the runtime rounds, ``keep`` how to opt out."""
    if roundings:
        report.note(target, f"{'; '.join(roundings)} ({why})", f"Nothing to do; {keep}", "dtype")

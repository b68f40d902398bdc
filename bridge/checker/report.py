"""The outcome of :func:`bridge.check`: a :class:`Report` of :class:`Problem` entries."""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any, Callable, List, Optional

from bridge.errors import _sentence, statement

__all__ = ["Problem", "Report", "SEVERITIES"]

SEVERITIES = ("error", "warning", "info")

# runtimes colour their warnings (gym's logger wraps them in yellow); a report is plain text and JSON
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Problem:
    """One finding: ``target``, ``severity`` ("error", "warning" or "info"), ``message`` and ``fix``."""

    def __init__(self, target: str, severity: str, message: str, fix: str, check: str = "") -> None:
        self.target, self.severity, self.check = target, severity, check
        self.message, self.fix = _ANSI.sub("", message), _ANSI.sub("", fix)

    def to_dict(self) -> dict:
        return {
            "target": self.target,
            "severity": self.severity,
            "check": self.check,
            "message": self.message,
            "fix": self.fix,
        }

    def __repr__(self) -> str:
        return f"Problem({self.target!r}, {self.severity!r}, {self.message!r})"


class Report:
    """The outcome of :func:`check`: the targets run and the problems found."""

    def __init__(self, env_name: str) -> None:
        self.env_name = env_name
        self.targets: List[str] = []
        self.problems: List[Problem] = []
        # the factory given to bridge.check, if any: the strong-determinism check builds a fresh instance
        self.make_env: Optional[Callable[[], Any]] = None

    def add(
        self, target: str, severity: str, subject: str, expectation: str, actual: Any, fix: str, check: str = ""
    ) -> Problem:
        """Record a problem phrased as the house sentence (the fix is kept apart)."""
        found = Problem(target, severity, statement(subject, expectation, actual), _sentence(fix), check)
        for known in self.problems:  # one finding once per target, however many checks met it
            if (known.target, known.severity, known.message, known.fix) == (target, severity, found.message, found.fix):
                return known
        self.problems.append(found)
        return found

    def note(self, target: str, text: str, fix: str, check: str = "") -> Problem:
        """Record advice (severity "info"), worded as advice rather than as a violation."""
        found = Problem(target, "info", _sentence(text), _sentence(fix), check)
        self.problems.append(found)
        return found

    def add_exception(self, target: str, error: BaseException, what: str, fix: str, check: str = "") -> Problem:
        """Record an exception: its own parts when it is one of ours, else ``<what> must run without
        raising, got <Type>: <message>`` with ``fix``."""
        parts = getattr(error, "parts", None)
        if parts is not None:
            return self.add(target, "error", *parts, check=check)
        return self.add(target, "error", what, "run without raising", f"{type(error).__name__}: {error}", fix, check)

    @property
    def ok(self) -> bool:
        """True when no problem is an error (warnings allowed)."""
        return not self.errors

    @property
    def errors(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> List[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def for_target(self, target: str) -> List[Problem]:
        return [p for p in self.problems if p.target == target]

    def to_dict(self) -> dict:
        return {
            "env": self.env_name,
            "ok": self.ok,
            "targets": {t: not any(p.severity == "error" for p in self.for_target(t)) for t in self.targets},
            "problems": [p.to_dict() for p in self.problems],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def __str__(self) -> str:
        lines = [f"envbridge check: {self.env_name}"]
        for target in self.targets:
            found = self.for_target(target)
            verdict = "FAIL" if any(p.severity == "error" for p in found) else "pass"
            lines.append(f"  {target:<10} {verdict}  ({len(found)} problem{'s' if len(found) != 1 else ''})")
            for p in found:
                wrapped = textwrap.wrap(p.message, 88)
                lines.append(f"    [{p.severity}] " + wrapped[0])
                lines.extend("              " + w for w in wrapped[1:])
                lines.append("      fix: " + p.fix)
        lines.append("OK" if self.ok else f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)")
        return "\n".join(lines)

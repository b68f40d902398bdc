"""``bridge.check``: run check profiles ("core", and one per export target) into a :class:`Report`.

Adapters add a profile with :func:`register_profile`; naming a target in ``check(env, targets=[...])``
imports the adapter that registers it. A missing framework becomes an error entry with the pip fix.
"""

from __future__ import annotations

import importlib
import json
import textwrap
from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from bridge.errors import MissingDependencyError, SpecError, _sentence, message, statement

__all__ = ["Problem", "Report", "check", "register_profile", "PROFILES", "TARGETS"]


class Problem:
    """One finding: ``target``, ``severity`` ("error" or "warning"), ``message`` and ``fix``."""

    def __init__(self, target: str, severity: str, message: str, fix: str, check: str = "") -> None:
        self.target, self.severity, self.message, self.fix, self.check = target, severity, message, fix, check

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

    def add(
        self, target: str, severity: str, subject: str, expectation: str, actual: Any, fix: str, check: str = ""
    ) -> Problem:
        """Record a problem phrased as the house sentence (the fix is kept apart)."""
        found = Problem(target, severity, statement(subject, expectation, actual), _sentence(fix), check)
        self.problems.append(found)
        return found

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


Profile = Callable[[Any, Report, int], None]
PROFILES: Dict[str, Profile] = {}

# target -> (module that registers its profile, pip extra that provides its framework)
TARGETS: Dict[str, tuple] = {
    "core": ("bridge.checker.core", None),
    "gymnasium": ("bridge.adapters.gymnasium", "gymnasium"),
    "sb3": ("bridge.adapters.sb3", "sb3"),
    "gym": ("bridge.adapters.gym", "legacy"),
    "dreamerv2": ("bridge.adapters.dreamerv2", "legacy"),
    "matlab": ("bridge.adapters.matlab", None),
}


def register_profile(name: str, profile: Profile) -> None:
    """Add (or replace) the check profile for ``name``: ``profile(env, report, seed)``."""
    PROFILES[name] = profile


def _load(target: str, report: Report) -> Optional[Profile]:
    if target not in PROFILES:
        if target not in TARGETS:
            raise SpecError(message("check target", f"be one of {sorted(TARGETS)}", target, "Pick known targets"))
        module, extra = TARGETS[target]
        try:
            importlib.import_module(module)
        except (MissingDependencyError, ImportError) as e:
            fix = f"pip install 'envbridge[{extra}]'" if extra else "Reinstall envbridge"
            report.add(
                target,
                "error",
                f"the {target} target",
                "have its framework installed",
                f"{type(e).__name__}: {e}",
                fix,
                "import",
            )
            return None
    return PROFILES.get(target)


def check(env: Any, *, targets: Union[None, str, Iterable[str]] = None, seed: int = 0) -> Report:
    """Check ``env`` (a bridge.Env, or a registered id) against the core contract and ``targets``.

    Args:
        env: the environment, or an id for :func:`bridge.make`.
        targets: profile names besides "core" (e.g. ``["gymnasium", "sb3"]``); core always runs.
        seed: the seed for resets and for the action tapes.
    """
    if isinstance(env, str):
        from bridge.registry import make

        name, env = env, make(env)
    else:
        unwrapped = getattr(env, "unwrapped", env)
        name = getattr(getattr(unwrapped, "spec", None), "id", None) or type(unwrapped).__name__
    wanted = ["core"] + [t for t in ([targets] if isinstance(targets, str) else list(targets or [])) if t != "core"]
    report = Report(name)
    for target in wanted:
        report.targets.append(target)
        profile = _load(target, report)
        if profile is not None:
            profile(env, report, seed)
    return report

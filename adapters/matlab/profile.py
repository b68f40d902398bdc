"""The "matlab" check profile: what ``validateEnvironment`` and a MATLAB user would see.

* an rlFunctionEnv: runs validateEnvironment and checks that Info snapshots as plain data;
* any other bridge.Env: describes its spaces as MATLAB specs ("info" entries; a space MATLAB cannot
  express is an error naming the path), runs validateEnvironment over the neutral contract, and warns that
  MATLAB's one IsDone flag cannot tell truncation from termination inside a step function.
"""

from __future__ import annotations

from typing import Any, Dict

from bridge.adapters.matlab.function_env import unwrap_function_env
from bridge.adapters.matlab.validation import getActionInfo, getObservationInfo, validateEnvironment

from bridge.checker.report import Report
from bridge.env import TimeLimit

T = "matlab"


def _record(report: Report, error: Exception, check: str) -> None:
    parts = getattr(error, "parts", None)
    if parts is None:
        report.add(
            T,
            "error",
            "the env",
            "pass validateEnvironment",
            f"{type(error).__name__}: {error}",
            "Fix the exception in the env",
            check,
        )
    else:
        report.add(T, "error", *parts, check=check)


def _shown(specs: Any) -> str:
    return "[" + ", ".join(repr(s) for s in specs) + "]" if isinstance(specs, list) else repr(specs)


def _truncates(env: Any) -> bool:
    while env is not None:
        if isinstance(env, TimeLimit):
            return True
        env = getattr(env, "env", None)
    return False


def matlab_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """Add the "matlab" findings for ``env`` to ``report``."""
    function_env = unwrap_function_env(env)
    if function_env is None:
        for name, getter in (("observation", getObservationInfo), ("action", getActionInfo)):
            try:
                specs = getter(env)
            except Exception as e:  # ConversionError: MATLAB has no spec for this space
                _record(report, e, f"{name} specs")
                continue
            report.note(
                T,
                f"the {name}Info MATLAB reads from the neutral space: {_shown(specs)}",
                f"get{name.capitalize()}Info(env) returns it; to port the env, pass these specs to rlFunctionEnv",
                f"{name} specs",
            )
    try:
        env.reset(seed=seed)
        validateEnvironment(env)
    except Exception as e:  # user code: report, never crash the checker
        _record(report, e, "validateEnvironment")
        return
    if function_env is not None and function_env.determinism != "none":
        try:
            env.clone_state()
        except Exception as e:
            _record(report, e, "snapshot")
    if _truncates(env):
        report.add(
            T,
            "warning",
            "episode ends",
            "keep truncation apart from termination for MATLAB",
            "one IsDone flag (a TimeLimit truncates this env)",
            "sim's experience records truncation as IsDone=2 and termination as 1; a StepFcn port sees only IsDone",
            "episode-end",
        )

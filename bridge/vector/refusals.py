"""The VectorEnv base's lifecycle refusals, as (subject, expectation, actual, fix) parts."""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.spaces.base import Mismatch

__all__ = ["mode_change", "closed", "partial_reset", "ended", "not_a_step"]


def mode_change(name: str, mode: str, current: str) -> Mismatch:
    return (
        f"{name}.autoreset_mode",
        "change only before reset()",
        f"{mode!r} while episodes run in {current!r} mode",
        "Set it before the first reset(), or reset() right after setting it",
    )


def closed(name: str, method: str) -> Mismatch:
    return (f"{name} {method}()", "not be called after close()", f"{method}() on a closed env", "Make a new env")


def partial_reset(name: str, never_reset: bool, why: str) -> Mismatch:
    got = "reset_mask before the first reset()" if never_reset else f"reset_mask after {why}"
    expectation = "come after a full reset() (the other rows need observations)"
    return (f"{name} reset()", expectation, got, "Call reset() first")


def ended(name: str, ended: np.ndarray) -> Mismatch:
    """A "disabled"-mode step while sub-envs whose episode ended were not reset."""
    return (
        f"{name} step()",
        "step only sub-envs whose episode runs (autoreset_mode='disabled')",
        f"a step of sub-env(s) {np.flatnonzero(ended).tolist()}, whose episode ended",
        "Reset them first: reset(options={'reset_mask': terminated | truncated})",
    )


def not_a_step(name: str, out: Any) -> Mismatch:
    got = f"a {len(out)}-tuple" if isinstance(out, tuple) else type(out).__name__
    expectation = "return a 5-tuple (obs, rewards, terminated, truncated, infos)"
    return (f"{name} step_envs()", expectation, got, "Return obs, rewards, terminated, truncated, infos")

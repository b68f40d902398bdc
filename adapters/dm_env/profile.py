"""The "dm_env" check profile: specs validate every value, and the discount rule of episode ends."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from bridge.adapters._shared.profile import exported_or_reported
from bridge.adapters.dm_env.export import to_dm_env
from bridge.compat import optional_import

from bridge.checker.report import Report
from bridge.env import Env, TimeLimit

T = "dm_env"
tree = optional_import("tree", "the dm_env check")


def dm_env_profile(env: Env, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """Every TimeStep validates against the export's specs; LAST steps carry the discount rule."""
    exported = exported_or_reported(to_dm_env, env, report, T, options, "to_dm_env(env)", "Change the space", "spaces")
    if exported is None:
        return
    try:
        _check_steps(env, exported, report, seed)
    except Exception as e:  # user code raised: report, never crash the checker
        report.add_exception(T, e, "the dm_env export", "Fix the exception in the env", "episode-end")


def _check_steps(env: Env, exported: Any, report: Report, seed: int) -> None:
    rng = np.random.default_rng(seed)
    capped = to_dm_env(TimeLimit(env, 1))
    capped.reset(seed=seed)
    step = capped.step(capped.action_lowering.encode(env.action_space.sample(rng)))
    terminated, _ = capped.last_flags
    if not step.last() or step.discount != (0.0 if terminated else 1.0):
        got = f"step_type={step.step_type!r}, discount={step.discount!r}"
        report.add(T, "error", "a time-out step", "be LAST with discount 1 (0 if terminated)", got, _BUG, "episode-end")
    spec = exported.observation_spec()
    step = exported.reset(seed=seed)
    for _ in range(50):
        try:
            tree.map_structure(lambda s, v: s.validate(v), spec, step.observation)
        except ValueError as e:
            fix = "Return observations of exactly the declared dtype, shape and bounds"
            report.add(
                T, "error", "a step observation", "validate against observation_spec()", str(e), fix, "observation"
            )
            return
        if step.last():
            terminated, truncated = exported.last_flags
            if step.discount != (0.0 if terminated else 1.0):
                got = f"discount={step.discount!r} with terminated={terminated}, truncated={truncated}"
                report.add(T, "error", "a LAST step", "have discount 0 if terminated, else 1", got, _BUG, "episode-end")
                return
        step = exported.step(exported.action_lowering.encode(env.action_space.sample(rng)))


_BUG = "Report bugs in bridge.adapters.dm_env"

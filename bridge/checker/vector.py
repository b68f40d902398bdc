"""``bridge.check`` of a :class:`bridge.VectorEnv` or of a batched export (``make_vec_env``,
``to_gymnasium_vector``, ``to_rllib_vector``).

The core part: the single spaces are bridge spaces; ``reset(seed=s)`` twice gives the same batch;
the same action batches then give the same observations, rewards and flags (the base checks every
output as it goes: a refused one is an error here). A runtime part per target: its batched export
is built over a fresh VectorEnv (when the source can build one: a class or a factory) and steps
the same batches in its own terms; a ConversionError or a refused step is that target's error. A
VectorEnv instance, or the VectorEnv inside an export, is checked through itself and its own export
only (building another export over it would change what the user's export presents).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import numpy as np

from bridge import runtimes, spaces
from bridge.checker.report import Report
from bridge.vector import VectorEnv

__all__ = ["check_vector"]

T = "core"
STEPS = 8


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


def _run(vec: VectorEnv, seed: int, actions: List[Any]) -> List[Any]:
    trace: List[Any] = [vec.reset(seed=seed)[0]]
    for batch in actions:
        obs, rewards, terminated, truncated, _ = vec.step(batch)
        trace.append((obs, rewards, terminated, truncated))
    return trace


def _core(vec: VectorEnv, report: Report, seed: int) -> Optional[List[Any]]:
    for name in ("single_observation_space", "single_action_space"):
        if not isinstance(getattr(vec, name, None), spaces.Space):
            got = type(getattr(vec, name, None)).__name__
            report.add(
                T, "error", f"VectorEnv.{name}", "be a bridge.spaces.Space", got, "Declare it in __init__", "spaces"
            )
            return None
    rng = np.random.default_rng(seed)
    actions = [vec.action_space.sample(rng) for _ in range(STEPS)]
    try:
        first, second = _run(vec, seed, actions), _run(vec, seed, actions)
    except Exception as e:  # the base's own checks speak through ContractError
        report.add_exception(T, e, "the VectorEnv", "Fix the VectorEnv", "raises")
        return None
    if not all(_same(a, b) for a, b in zip(first, second)):
        fix = "Draw every random number from self.np_random (seeded by reset(seed=...)) or from the seeds given"
        report.add(T, "error", "VectorEnv reset(seed=s)", "replay the same batches", "a different run", fix, "seeding")
    return actions


def _runtime(target: str, export: Any, report: Report, seed: int, steps: int) -> None:
    try:
        if hasattr(export, "single_action_space"):  # Gymnasium's vector API: batched spaces
            export.reset(seed=seed)
            export.action_space.seed(seed)
            for _ in range(steps):
                export.step(export.action_space.sample())
        else:  # SB3's VecEnv: the action space is one env's
            export.seed(seed)
            export.reset()
            export.action_space.seed(seed)
            for _ in range(steps):
                export.step(np.stack([export.action_space.sample() for _ in range(export.num_envs)]))
    except Exception as e:
        report.add_exception(target, e, f"the {target} batched export", "Fix the VectorEnv or drop the option", "steps")


def check_vector(
    source: Any,
    report: Report,
    targets: List[str],
    seed: int,
    options: Dict[str, Dict[str, Any]],
    export: Any = None,
) -> Report:
    """Fill ``report`` for a VectorEnv (instance, or a class/factory ``source``) or a batched ``export``."""
    factory: Optional[Callable[[], VectorEnv]] = None if isinstance(source, VectorEnv) else source
    vec = source if factory is None else factory()
    report.targets.append(T)
    if _core(vec, report, seed) is None:
        return report
    for target in targets:
        if target == T:
            continue
        report.targets.append(target)
        row = runtimes.get(target)
        own = export is not None and getattr(export, "runtime", None) == target
        if own:
            _runtime(target, export, report, seed, STEPS)
            continue
        if row.batch_export is None:
            report.note(target, "not checked: it has no batched export", "Nothing to do", "batched")
            continue
        if factory is None:
            fix = "Pass the VectorEnv class or a factory to check its batched exports"
            report.note(target, "not checked: a VectorEnv instance is checked alone", fix, "batched")
            continue
        missing = runtimes.probe(target)
        if missing:
            report.add(
                target,
                "error",
                f"the {target} target",
                "have its framework installed",
                f"{missing[0]} is missing",
                runtimes.install_hint(target),
                "import",
            )
            continue
        try:
            built = runtimes.load(row.exports[row.batch_export])(factory(), **options.get(target, {}))
        except Exception as e:
            report.add_exception(target, e, f"{row.batch_export}", "Fix the VectorEnv or drop the option", "export")
            continue
        try:
            _runtime(target, built, report, seed, STEPS)
        finally:
            built.close()
    return report

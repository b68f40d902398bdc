"""Batch helpers of the VectorEnv base: seeds per sub-env, merging reset rows into a batch."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import numpy as np

from bridge.errors import SpecError, error
from bridge.spaces.base import Mismatch, _describe

__all__ = ["Seeds", "seed_list", "merge_rows", "merge_infos", "batch_problem", "batch_size"]

BATCH_FIX = "Pass one action per env, e.g. env.action_space.sample()"

Seeds = Union[None, int, Sequence[Optional[int]]]


def seed_list(seed: Seeds, n: int, name: str) -> List[Optional[int]]:
    """One seed (or None) per sub-env: ``s`` gives sub-env ``i`` the seed ``s + i``."""
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0:
        return [int(seed) + i for i in range(n)]
    if isinstance(seed, (list, tuple)) and len(seed) == n:
        ok = all(s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0) for s in seed)
        if ok:
            return [None if s is None else int(s) for s in seed]
    fix = "Pass seed=0, or one non-negative int (or None) per sub-env"
    raise error(SpecError, f"{name} reset seed", f"be an int >= 0 or a list of {n}", repr(seed), fix)


def merge_rows(current: Any, fresh: Any, mask: np.ndarray) -> Any:
    """A new batch: the rows of ``fresh`` where ``mask`` holds, else ``current`` (dicts and tuples per entry)."""
    if isinstance(current, dict):
        return {k: merge_rows(current[k], fresh[k], mask) for k in current}
    if isinstance(current, tuple):
        return tuple(merge_rows(c, f, mask) for c, f in zip(current, fresh))
    return np.where(mask.reshape((-1,) + (1,) * (np.ndim(current) - 1)), fresh, current)


def merge_infos(infos: dict, fresh: dict, mask: np.ndarray) -> dict:
    """``infos`` with the rows of ``fresh`` (Gymnasium's vector layout) where ``mask`` holds."""
    if not fresh:
        return infos
    out = dict(infos)
    n = len(mask)
    for key, value in fresh.items():
        if key.startswith("_"):
            continue
        given = fresh.get("_" + key, np.ones(n, bool)) & mask
        if key not in out:
            out[key] = np.array(value, copy=True)
            out["_" + key] = given.copy()
            continue
        column = np.asarray(out[key])
        if column.dtype != np.asarray(value).dtype:
            column = column.astype(object)
        column = np.array(column, copy=True)
        column[given] = np.asarray(value)[given]
        out[key] = column
        out["_" + key] = out.get("_" + key, np.ones(n, bool)) | given
    return out


def batch_size(actions: Any) -> int:
    """How many actions a batch holds (its leading axis; a dict or tuple batch: its first leaf's);
    -1 for a value without a leading axis."""
    # an ndarray first, not through np.shape: +4.0k instructions a batch step of CartPoleVector(16), 1.5 %
    # (the neutral row of benchmarks/bench_sb3_vec.py --instructions, N=16)
    if type(actions) is np.ndarray:
        return actions.shape[0] if actions.ndim else -1
    while isinstance(actions, (dict, tuple)) and actions:
        actions = next(iter(actions.values())) if isinstance(actions, dict) else actions[0]
    shape = np.shape(actions) if isinstance(actions, (np.ndarray, np.generic, list)) else ()
    return int(shape[0]) if shape else -1


def batch_problem(invalid: Any, actions: Any, num_envs: int, path: str = "actions") -> Optional[Mismatch]:
    """The one whole-batch action check, before any sub-env moves: one action per env, then every
    slot in the exported space (``invalid``: the lowering's batch check, or None to skip that part)."""
    size = batch_size(actions)
    if size != num_envs:
        got = f"{size} actions" if size >= 0 else _describe(actions)
        return (path, f"hold one action per env ({num_envs})", got, BATCH_FIX)
    return invalid(actions, path) if invalid is not None else None

"""Batch helpers of the VectorEnv base: seeds per sub-env, merging reset rows into a batch."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from bridge.errors import BatchError, ContractError, NotABatchError, SpecError, error
from bridge.spaces.base import Mismatch, _describe

__all__ = [
    "Seeds",
    "seed_list",
    "merge_rows",
    "batch_problem",
    "refuse_batch",
    "batch_size",
    "as_batch",
    "checked_rewards",
    "reset_mask",
]

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


def as_batch(actions: Any) -> Any:
    """A list of per-env actions (SB3's DummyVecEnv and Gymnasium's SyncVectorEnv take one) as one
    array batch; anything else as given (a ragged list too: the batch check names it)."""
    if type(actions) is not list:
        return actions
    try:
        return np.asarray(actions)
    except ValueError:
        return actions


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
        if size < 0 and not isinstance(actions, (np.generic, int, float, str, bytes)):  # a torch tensor, say
            fix = "Pass np.asarray(actions) (a torch tensor: actions.cpu().numpy())"
            return (path, f"be a numpy array of one action per env ({num_envs})", got, fix)
        return (path, f"hold one action per env ({num_envs})", got, BATCH_FIX)
    return invalid(actions, path) if invalid is not None else None


def refuse_batch(
    invalid: Any,
    actions: Any,
    num_envs: int,
    path: str = "actions",
    *,
    ignored: Optional[np.ndarray] = None,
    invalid_one: Any = None,
) -> None:
    """:func:`batch_problem` raised: a wrong batch size is a BatchError (also a ValueError; one
    action without a leading axis a NotABatchError, also a TypeError), a bad slot a ContractError.
    The ``ignored`` rows (:func:`ignored_rows`) are left out: the others are checked one by one with
    ``invalid_one``, the lowering's check of one action."""
    if ignored is not None and invalid is not None and invalid_one is not None and batch_size(actions) == num_envs:
        for i in np.flatnonzero(~ignored):
            found = invalid_one(_row(actions, int(i)), f"{path}[{i}]")
            if found is not None:
                raise error(ContractError, *found)
        return
    found = batch_problem(invalid, actions, num_envs, path)
    if found is not None:
        kind = BatchError if found[1].startswith("hold one action per env") else ContractError
        if kind is BatchError and batch_size(actions) < 0:
            kind = NotABatchError  # one action, no batch: Gymnasium raises TypeError there
        raise error(kind, *found)


def ignored_rows(vector_env: Any) -> Optional[np.ndarray]:
    """The sub-envs whose action the next step of ``vector_env`` ignores, as Gymnasium's vector envs
    do: in next-step mode, those it resets instead of stepping (None: every action counts)."""
    pending = vector_env._needs_reset  # the VectorEnv base's own record (this package's)
    return pending if vector_env.autoreset_mode == "next-step" and pending.any() else None


def _row(actions: Any, i: int) -> Any:
    """Row ``i`` of a batch of actions (a dict or tuple batch: of each entry)."""
    if isinstance(actions, dict):
        return {k: _row(v, i) for k, v in actions.items()}
    if isinstance(actions, tuple):
        return tuple(_row(v, i) for v in actions)
    return actions[i]


def checked_rewards(rewards: Any, terminated: Any, truncated: Any, n: int, name: str) -> np.ndarray:
    """A batch step's rewards widened to float64 when of another real dtype; anything else (and
    flags that are not bool arrays of shape ``(n,)``) a ContractError."""
    if not (type(rewards) is np.ndarray and rewards.dtype.kind in "iuf" and rewards.shape == (n,)):
        got = f"{rewards!r}" if np.ndim(rewards) == 0 else f"shape {np.shape(rewards)}"
        fix = f"Return one reward per sub-env: an array of shape ({n},)"
        raise error(ContractError, f"{name} step() rewards", f"be a float64 array of shape ({n},)", got, fix)
    for label, flags in (("terminated", terminated), ("truncated", truncated)):
        if not (type(flags) is np.ndarray and flags.dtype == np.bool_ and flags.shape == (n,)):
            got = f"{flags!r}" if np.ndim(flags) == 0 else f"{np.asarray(flags).dtype} of shape {np.shape(flags)}"
            fix = f"Return one bool per sub-env: an array of dtype bool and shape ({n},)"
            raise error(ContractError, f"{name} step() {label}", f"be a bool array of shape ({n},)", got, fix)
    return rewards.astype(np.float64)


def reset_mask(options: Any, n: int, name: str) -> Tuple[Optional[np.ndarray], Any]:
    """``options["reset_mask"]`` (Gymnasium's partial reset) checked, and the options without it."""
    if not isinstance(options, dict) or "reset_mask" not in options:
        return None, options
    mask = options["reset_mask"]
    if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (n,) and mask.any()):
        got = repr(mask) if not isinstance(mask, np.ndarray) else f"{mask.dtype} array of shape {mask.shape}"
        if isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (n,):
            got = "a mask selecting no sub-env"
        fix = f"Pass e.g. options={{'reset_mask': terminated | truncated}} with at least one True of {n}"
        kind = BatchError if isinstance(mask, np.ndarray) else SpecError
        raise error(kind, f"{name} reset_mask", f"be a bool array of shape ({n},)", got, fix)
    return mask, {k: v for k, v in options.items() if k != "reset_mask"}

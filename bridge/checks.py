"""Precomputed checks of a user's values against their space, for the per-step path.

``value_check(space, full)`` builds, once, ``check(x, path) -> Optional[Mismatch]``. The common
valid case costs a few identity tests (the dtype object, the shape tuple); anything else falls back
to the space's own :meth:`~bridge.spaces.Space.mismatch`, which explains what is wrong.

Two levels, because float bounds of large arrays are not free:

* ``full=False`` (every export by default): exact dtype and shape everywhere, and the range of the
  discrete kinds (Discrete, MultiDiscrete, MultiBinary), so a value outside its space never reaches
  a runtime as a different valid value (a Discrete -1 is never a one-hot of the last index);
* ``full=True`` (``strict=True``, the checker, actions): the bounds of Box leaves too.

``batch_check(space, n, full)`` does the same for a batch of ``n`` values on a leading axis.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from bridge import spaces
from bridge.spaces.base import Mismatch

__all__ = ["value_check", "batch_check", "Check", "copy_observation"]

Check = Callable[[Any, str], Optional[Mismatch]]


def value_check(space: spaces.Space, full: bool) -> Check:
    """``check(x, path)``: None when ``x`` is a value of ``space`` at the chosen level, else why not."""
    if isinstance(space, spaces.Dict):
        parts = [(key, value_check(sub, full)) for key, sub in space.items()]
        keys = set(space.keys())

        def check_dict(x: Any, path: str) -> Optional[Mismatch]:
            if not isinstance(x, dict) or x.keys() != keys:
                return space.mismatch(x, path)
            for key, inner in parts:
                found = inner(x[key], f"{path}[{key!r}]")
                if found is not None:
                    return found
            return None

        return check_dict
    if isinstance(space, spaces.Tuple):
        items = [value_check(sub, full) for sub in space]
        count = len(items)

        def check_tuple(x: Any, path: str) -> Optional[Mismatch]:
            if not isinstance(x, (tuple, list)) or len(x) != count:
                return space.mismatch(x, path)
            for i, (inner, value) in enumerate(zip(items, x)):
                found = inner(value, f"{path}[{i}]")
                if found is not None:
                    return found
            return None

        return check_tuple
    if isinstance(space, spaces.Discrete):
        low, high = space.start, space.start + space.n - 1
        mismatch = space.mismatch

        def check_discrete(x: Any, path: str) -> Optional[Mismatch]:
            if (type(x) is int or type(x) is np.int64) and low <= x <= high:
                return None
            return mismatch(x, path)

        return check_discrete
    if isinstance(space, spaces.Box) and not full:
        return _structure_only(space)
    if isinstance(space, spaces.MultiDiscrete):
        return _multi_discrete(space)
    return _leaf(space)


def box_signature(space: spaces.Space, full: bool) -> Optional[tuple]:
    """``(dtype, shape)`` when the cheap check of ``space`` is exactly "an ndarray of this dtype and
    shape" (a plain Box at the cheap level), so a caller can inline it; else None."""
    if isinstance(space, spaces.Box) and not full:
        return space.dtype, space.shape
    return None


def _multi_discrete(space: spaces.MultiDiscrete) -> Check:
    """MultiDiscrete (and every batch of Discrete): one unsigned compare when it starts at 0."""
    dtype, shape, mismatch = space.dtype, space.shape, space.mismatch
    start, upper = space.start, space.start + space.nvec - 1
    zero = not start.any()
    top = int(upper.flat[0]) if upper.size and (upper == upper.flat[0]).all() else None
    as_unsigned, largest = np.uint64, np.maximum.reduce

    def check_multi_discrete(x: Any, path: str) -> Optional[Mismatch]:
        if type(x) is np.ndarray and x.dtype is dtype and x.shape == shape and x.size:
            if zero and top is not None:
                # a negative int64 viewed as uint64 is huge, so `<= top` also catches values below 0
                if largest(x.view(as_unsigned), axis=None) <= top:
                    return None
            elif ((x >= start) & (x <= upper)).all():
                return None
        return mismatch(x, path)

    return check_multi_discrete


def _structure_only(space: spaces.Box) -> Check:
    """dtype and shape of a Box, not its bounds."""
    dtype, shape, mismatch = space.dtype, space.shape, space.mismatch

    def check_box(x: Any, path: str) -> Optional[Mismatch]:
        if type(x) is np.ndarray and x.dtype is dtype and x.shape == shape:
            return None
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype == dtype and x.shape == shape:
            return None  # a 0-d value as a numpy scalar, or an equal non-canonical dtype object
        return mismatch(x, path)

    return check_box


def _leaf(space: spaces.Space) -> Check:
    """Everything ``mismatch`` checks, with a cheap accept for the common exact case."""
    dtype, shape, contains, mismatch = space.dtype, space.shape, space.contains, space.mismatch

    def check_leaf(x: Any, path: str) -> Optional[Mismatch]:
        if type(x) is np.ndarray and x.dtype is dtype and x.shape == shape and contains(x):
            return None
        return mismatch(x, path)

    return check_leaf


def batch_check(space: spaces.Space, n: int, full: bool) -> Check:
    """``check(batch, path)`` for ``n`` stacked values of ``space`` (what a VectorEnv returns)."""
    return value_check(spaces.batch_space(space, n), full)


def copy_observation(obs: Any) -> Any:
    """A copy of an observation's arrays (Dict and Tuple observations too), so no later write of
    the env reaches it."""
    if type(obs) is np.ndarray:
        return obs.copy()
    if isinstance(obs, dict):
        return {k: copy_observation(v) for k, v in obs.items()}
    if isinstance(obs, tuple):
        return tuple(copy_observation(v) for v in obs)
    return obs

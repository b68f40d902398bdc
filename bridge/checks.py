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

:func:`step_output` is the one check of a scalar env's step output (the single-env export after its
fast test, ``SyncVectorEnv``, ``ProcessVectorEnv``), with one wording; :func:`dict_of_parts` and
:func:`tuple_of_parts` are the one shape of a composite check (here, and in every lowering's action
check).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.errors import ContractError, error
from bridge.spaces.base import Mismatch

__all__ = [
    "value_check",
    "batch_check",
    "box_signature",
    "Check",
    "copy_observation",
    "dict_of_parts",
    "tuple_of_parts",
    "step_output",
    "kind_of",
    "RESERVED_INFO",
]

Check = Callable[[Any, str], Optional[Mismatch]]

# info keys an env may not use: SB3's Monitor writes "episode" over it without a word
RESERVED_INFO = ("episode",)


def kind_of(value: Any) -> str:
    """Type and value, the same text under numpy 1.19 and 2.x."""
    if isinstance(value, np.generic):
        return f"numpy {value.dtype.name} {value.item()!r}"
    return f"{type(value).__name__} {value!r}"


def step_output(out: Any, name: str) -> Tuple[Any, float, bool, bool, dict]:
    """``out`` when it is a scalar env's step output, else the ContractError that says why (``name``
    is the env as messages name it): a plain 5-tuple, a Python-float finite reward, Python-bool
    flags, a dict info without a reserved key. The observation is its space's check's job."""
    subject = f"{name} step"
    if type(out) is not tuple or len(out) != 5:
        if isinstance(out, tuple) and len(out) == 5:  # a namedtuple or other tuple subclass
            got = f"a {type(out).__name__} (a tuple subclass)"
            fix = "Return a plain tuple: return obs, reward, terminated, truncated, info"
        else:
            got = f"a {len(out)}-tuple" if isinstance(out, tuple) else spaces._describe_value(out)
            fix = "Split done into terminated and truncated"
        raise error(
            ContractError, f"{subject}()", "return a 5-tuple (obs, reward, terminated, truncated, info)", got, fix
        )
    _, reward, terminated, truncated, info = out
    if type(reward) is not float:
        numpy = isinstance(reward, np.generic)
        expectation = "be a Python float (a numpy scalar is a defect)" if numpy else "be a Python float"
        raise error(ContractError, f"{subject} reward", expectation, kind_of(reward), "Return float(reward)")
    if reward - reward != 0.0:  # NaN or inf
        fix = "Guard the reward computation against NaN and inf"
        raise error(ContractError, f"{subject} reward", "be finite", reward, fix)
    for label, flag in (("terminated", terminated), ("truncated", truncated)):
        if type(flag) is not bool:
            raise error(ContractError, f"{subject} {label}", "be a Python bool", kind_of(flag), f"Return bool({label})")
    if type(info) is not dict:
        raise error(
            ContractError, f"{subject} info", "be a dict", kind_of(info), "Return {} when there is nothing to report"
        )
    for key in RESERVED_INFO:
        if key in info:
            expectation = f"not use the key {key!r} (reserved for SB3's Monitor)"
            raise error(ContractError, f"{subject} info", expectation, sorted(map(str, info)), "Rename the key")
    return out


def dict_of_parts(keys: List[Any], parts: List[Tuple[Any, Check]], whole: Check) -> Check:
    """Why a value is not a dict of exactly ``keys`` whose entries pass ``parts`` in order;
    ``whole(x, path)`` says why when it is not such a dict at all."""
    expected = set(keys)

    def check_dict(x: Any, path: str) -> Optional[Mismatch]:
        if not isinstance(x, dict) or x.keys() != expected:
            return whole(x, path)
        for key, inner in parts:
            found = inner(x[key], f"{path}[{key!r}]")
            if found is not None:
                return found
        return None

    return check_dict


def tuple_of_parts(items: List[Check], whole: Check) -> Check:
    """Why a value is not a tuple (or list) of ``len(items)`` values passing ``items`` in order;
    ``whole(x, path)`` says why when it is not such a sequence at all."""
    count = len(items)

    def check_tuple(x: Any, path: str) -> Optional[Mismatch]:
        if not isinstance(x, (tuple, list)) or len(x) != count:
            return whole(x, path)
        for i, (inner, value) in enumerate(zip(items, x)):
            found = inner(value, f"{path}[{i}]")
            if found is not None:
                return found
        return None

    return check_tuple


def value_check(space: spaces.Space, full: bool) -> Check:
    """``check(x, path)``: None when ``x`` is a value of ``space`` at the chosen level, else why not."""
    if isinstance(space, spaces.Dict):
        parts = [(key, value_check(sub, full)) for key, sub in space.items()]
        return dict_of_parts(list(space.keys()), parts, space.mismatch)
    if isinstance(space, spaces.Tuple):
        return tuple_of_parts([value_check(sub, full) for sub in space], space.mismatch)
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

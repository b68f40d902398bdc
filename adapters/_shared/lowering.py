"""The lowering protocol every runtime implements once, and the value checks lowerings share.

A :class:`Lowering` is computed once when an env is exported, as plain functions over numpy values,
and is used both by the export (to step) and by that runtime's conformance view (to decode), so a
view cannot disagree with its export:

* ``source``: the neutral space; ``space``: the runtime's space;
* ``encode(x)``: neutral value -> runtime value (observations going out, actions a view sends);
* ``decode(y)``: runtime value -> neutral value (actions coming in, observations a view reads);
* ``invalid(y, path)``: why ``y`` is not a value of the runtime's space, or None; it looks at the
  value as given, before any cast (an int64 ``2**32 + 1`` for an int32 Box is refused, not wrapped);
* ``encode_batch`` / ``decode_batch`` / ``invalid_batch``: the same over a leading batch axis;
* ``roundings``: the announced presentations that are not bit-exact (``"observation['x']: float64
  presented as float32"``); empty means lossless. ``expected(x)`` is what a neutral value becomes
  after them (``decode(encode(x))``), which is what a view compares against.

Every runtime builds its lowerings with one constructor shape, ``lower(space, *, path, options)``:
``path`` names the value in errors, and its root (``"observation"`` or ``"action"``/``"actions"``)
says which side it is (:func:`role`); ``options`` are the export's options (:mod:`bridge.options`).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from bridge import checks
from bridge.errors import ContractError, message
from bridge.spaces.base import Mismatch, _describe
from bridge.values import exact_cast  # the one exact-cast rule (incoming values use it too)

__all__ = [
    "Lowering",
    "Fn",
    "Check",
    "same",
    "role",
    "array_checks",
    "float32_presentation",
    "discrete_table",
    "dict_check",
    "tuple_check",
]

Fn = Callable[[Any], Any]
Check = Callable[[Any, str], Optional[Mismatch]]

# Discrete action spaces up to this size are checked and decoded by one dict lookup in the guard:
# +2.4k instr/step on GridWorld (3.0 %) and CartPole (2.0 %) (benchmarks/bench_gymnasium_instructions.py); the limit
# bounds the table's memory
TABLE_LIMIT = 4096


def same(x: Any) -> Any:
    return x


def role(path: str) -> str:
    """``"action"`` for a path rooted at ``action``/``actions``, else ``"observation"``."""
    return "action" if path.startswith("action") else "observation"


class Lowering:
    """The runtime's space plus the plain functions that move values across (see module doc)."""

    __slots__ = (
        "source",
        "space",
        "encode",
        "decode",
        "encode_batch",
        "decode_batch",
        "invalid",
        "invalid_batch",
        "identity",
        "table",
        "roundings",
    )

    def __init__(
        self,
        source: Any,
        space: Any,
        encode: Fn,
        decode: Fn,
        invalid: Check,
        *,
        encode_batch: Optional[Fn] = None,
        decode_batch: Optional[Fn] = None,
        invalid_batch: Optional[Check] = None,
        identity: bool = False,
        table: Optional[dict] = None,
        roundings: Tuple[str, ...] = (),
    ) -> None:
        self.source, self.space = source, space
        self.encode, self.decode, self.invalid = encode, decode, invalid
        self.encode_batch, self.decode_batch, self.invalid_batch = encode_batch, decode_batch, invalid_batch
        self.identity = identity  # encode and decode return their argument unchanged
        # every valid runtime value -> its neutral value (small Discrete spaces): keys are ints,
        # so only a Python int or np.int64 may be looked up (True and 1.0 hash like 1)
        self.table = table
        self.roundings = tuple(roundings)

    def contains(self, y: Any) -> bool:
        """True when ``y`` is a value of the runtime's space."""
        return self.invalid(y, "value") is None

    def expected(self, x: Any) -> Any:
        """What neutral ``x`` becomes through the announced roundings (``x`` itself when lossless)."""
        return self.decode(self.encode(x)) if self.roundings else x

    def preparer(self, check: bool = True, path: str = "action") -> Fn:
        """One function, built once: runtime action -> neutral action, raising ContractError (the
        house sentence, before anything moves) when ``check`` and the action is not in the space.
        (The guard looks an int action up in :attr:`table` first and calls this only on a miss.)"""
        decode, invalid = self.decode, self.invalid
        if not check:
            return decode

        def checked(y: Any) -> Any:
            bad = invalid(y, path)
            if bad is not None:
                raise ContractError(message(*bad))
            return decode(y)

        return checked


def discrete_table(n: int, start: int) -> Optional[dict]:
    """Every runtime index of a Discrete(n) -> its neutral np.int64 (``start`` added), for
    :attr:`Lowering.table`; None above :data:`TABLE_LIMIT` (the decode computes it then)."""
    return {i: np.int64(i + start) for i in range(n)} if n <= TABLE_LIMIT else None


def combined(parts: List[Tuple[str, Lowering]]) -> Tuple[str, ...]:
    """The roundings of several leaf lowerings, in order."""
    return tuple(r for _, low in parts for r in low.roundings)


# -- numeric checks in the runtime's terms, on the value as given ----------------------------------
MASKED = (
    "be a plain numpy array (a mask hides values from the bounds check, not from the env)",
    "a numpy.ma.MaskedArray",
    "Pass np.ma.getdata(action) (what the env would get) or action.filled(value)",
)


def array_checks(
    shape: Tuple[int, ...],
    dtype: np.dtype,
    low: np.ndarray,
    high: np.ndarray,
    integer: bool,
    classic: bool = False,
    fix: str = "Sample from env.action_space or clip the action into its bounds",
) -> Tuple[Check, Check]:
    """``(invalid, invalid_batch)`` for numeric arrays of ``shape`` whose elements lie in [low, high].

    Bounds are compared on the value as given, before any cast. By default (Gymnasium's rule) a
    numpy value must have a dtype that holds the space's values (an integer dtype for an integer
    space; for a float space, values it holds exactly: a dtype that casts safely, or numbers that
    cast without rounding, e.g. float64 actions of a float32 policy), so a lossy cast is refused,
    never done; a Python int (and, for a float space, a float) is taken as written. ``classic`` is
    gym 0.23's rule: Python lists too (under the same exact-cast rule). One rule in both eras.
    """

    def check(x: Any, path: str, batch: bool) -> Optional[Mismatch]:
        if isinstance(x, np.ma.MaskedArray):  # its comparisons skip masked values; the env gets them
            return (path, MASKED[0], MASKED[1], MASKED[2])
        if not isinstance(x, (np.ndarray, np.generic)):
            scalar = not isinstance(x, bool) and isinstance(x, int if integer else (int, float))
            if not scalar and not (classic and isinstance(x, (list, tuple))):
                return (path, f"be a numpy array of dtype {dtype} and shape {shape}", _describe(x), _cast_fix(dtype))
            x = np.asarray(x)
            if x.dtype.kind not in ("iu" if integer else "iuf"):
                return (path, f"hold {'integers' if integer else 'numbers'}", _describe(x), _cast_fix(dtype))
            if not (scalar or integer or exact_cast(x, dtype)):
                return _lossy(path, x, dtype)
        elif integer and x.dtype.kind not in "iu":
            return (path, "have an integer dtype", f"dtype {x.dtype}", f"Cast it with .astype(np.{dtype})")
        elif x.dtype.kind not in "biuf":  # strings, objects, records: not "values that round"
            return (path, "hold numbers", f"dtype {x.dtype}", f"Cast it with .astype(np.{dtype})")
        elif not integer and not exact_cast(x, dtype):
            return _lossy(path, x, dtype)
        want = (x.shape[:1] + shape) if batch and x.ndim else shape
        if x.shape != want or (batch and x.ndim == 0):
            prefix = "(num_envs,) + " if batch else ""
            reshape = f"Reshape it to {shape}" if classic else "Reshape it to the action space's shape"
            return (path, f"have shape {prefix}{shape}", f"shape {x.shape}", reshape)
        outside = ~inside(x, low, high)
        if outside.any():
            index = tuple(int(i) for i in np.argwhere(outside)[0])
            bound = index[1:] if batch else index
            where = f"{path}{list(index)}" if index else path
            expectation = f"lie in [{low[bound].item()!r}, {high[bound].item()!r}]"
            return (where, expectation, repr(x[index].item()), fix)
        return None

    return _fast_single(shape, dtype, low, high, integer, check), _fast_batch(shape, low, high, integer, check)


def inside(x: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``low <= x <= high`` elementwise, exact for every integer dtype pair (NaN is never inside)."""
    if x.dtype.kind in "iu" and low.dtype.kind in "iu" and np.result_type(x.dtype, low.dtype).kind == "f":
        # int64 against uint64 promotes to float64 in numpy: compare as Python ints instead
        xs, lo, hi = x.astype(object), low.astype(object), high.astype(object)
        return np.asarray((xs >= lo) & (xs <= hi), dtype=bool)
    return (x >= low) & (x <= high)


def _lossy(path: str, x: np.ndarray, dtype: np.dtype) -> Mismatch:
    if x.dtype.kind == "f" and dtype.kind == "f":  # a finite value past the dtype's range: inf, named as such
        biggest = float(np.finfo(dtype).max)
        with np.errstate(invalid="ignore"):
            over = np.isfinite(x) & (np.abs(x) > biggest)
        if over.any():
            index = tuple(int(i) for i in np.argwhere(over)[0])
            where = f"{path}{list(index)}" if index else path
            expectation = f"be a finite {dtype} value (magnitude at most {biggest!r})"
            return (where, expectation, repr(x[index].item()), f"Scale it into {dtype}'s range")
    expectation = f"hold values {dtype} represents exactly (a cast that rounds is refused)"
    return (path, expectation, f"dtype {x.dtype} values that round", f"Round them yourself: .astype(np.{dtype})")


def _cast_fix(dtype: np.dtype) -> str:
    return f"Pass np.asarray(action, dtype=np.{dtype})"


def _fast_batch(shape: Tuple[int, ...], low: np.ndarray, high: np.ndarray, integer: bool, check: Any) -> Check:
    """The per-batch check; integer spaces starting at 0 need one unsigned compare."""
    ndim = len(shape) + 1
    if integer and not low.any() and low.dtype.kind in "iu":
        int64, uint64, limit = np.dtype(np.int64), np.uint64, high.astype(np.uint64)
        top = limit.flat[0] if limit.size and (limit == limit.flat[0]).all() else None
        largest = np.maximum.reduce

        # up to 16 envs, Python comparisons, not the numpy reduce: 11.1k instructions a check of 16
        # CartPole actions against 14.8k, i.e. +3.7k a batch step, 1.2 % of the batched row of
        # benchmarks/bench_sb3_vec.py --instructions at N=16 (the full check: 37.0k); the check
        # alone under callgrind, numpy 2
        small = 16 if top is not None else 0
        top_int = int(top) if top is not None else None

        def unsigned(x: Any, path: str) -> Optional[Mismatch]:
            # a negative int64 viewed as uint64 is huge, so `<= high` also catches values below 0
            if type(x) is np.ndarray and x.dtype is int64 and x.ndim == ndim and x.shape[1:] == shape and x.size:
                if x.size <= small:
                    for v in x.ravel().tolist():
                        if v < 0 or v > top_int:
                            return check(x, path, True)
                    return None
                as_unsigned = x.view(uint64)
                if (largest(as_unsigned, axis=None) <= top) if top is not None else (as_unsigned <= limit).all():
                    return None
            return check(x, path, True)

        return unsigned
    return lambda x, path: check(x, path, True)


def _fast_single(
    shape: Tuple[int, ...], dtype: np.dtype, low: np.ndarray, high: np.ndarray, integer: bool, check: Any
) -> Check:
    """The per-step check: a cheap test of the common valid case, the full check otherwise."""
    if shape == () and integer:  # Discrete: the guard's table lookup decides the common actions
        return lambda x, path: check(x, path, False)
    uniform = bool((low == low.flat[0]).all() and (high == high.flat[0]).all()) if low.size else True
    if uniform and 0 < low.size <= 64:
        # small arrays: Python comparisons, not numpy's (NaN fails both): +16.7k instr/step on PointMass,
        # 20 % (benchmarks/bench_gymnasium_instructions.py)
        lo, hi = low.flat[0].item(), high.flat[0].item()

        def small(x: Any, path: str) -> Optional[Mismatch]:
            # builtin dtypes are singletons: `is` is the cheap test, the full check decides otherwise
            if type(x) is np.ndarray and x.dtype is dtype and x.shape == shape:
                for v in x.ravel().tolist():
                    if not lo <= v <= hi:
                        return check(x, path, False)
                return None
            return check(x, path, False)

        return small

    def large(x: Any, path: str) -> Optional[Mismatch]:
        if type(x) is np.ndarray and x.dtype == dtype and x.shape == shape and ((x >= low) & (x <= high)).all():
            return None
        return check(x, path, False)

    return large


# -- the one float policy -------------------------------------------------------------------------
def float32_presentation(low: np.ndarray, high: np.ndarray) -> Tuple[np.ndarray, np.ndarray, Fn, Fn]:
    """float64 Box values presented as float32, for runtimes that compute in float32.

    Returns ``(low32, high32, encode, decode)``: bounds rounded outward (every value stays inside),
    ``encode`` rounds to nearest and saturates a finite value past float32's range at its largest
    finite value (never an infinity that was not there), ``decode`` widens back exactly.
    """
    low32, high32 = low.astype(np.float32), high.astype(np.float32)
    low32 = np.where(low32 > low, np.nextafter(low32, np.float32(-np.inf)), low32)
    high32 = np.where(high32 < high, np.nextafter(high32, np.float32(np.inf)), high32)
    f32, f64, largest = np.float32, np.float64, float(np.finfo(np.float32).max)
    fits = bool((np.abs(low) <= largest).all() and (np.abs(high) <= largest).all())

    def cast(x: Any) -> np.ndarray:
        return np.asarray(x).astype(f32)

    def saturating(x: Any) -> np.ndarray:
        with np.errstate(over="ignore"):  # past float32's range the cast gives inf: saturate it below
            out = np.asarray(x).astype(f32)
        over = np.isinf(out) & np.isfinite(x)
        if over.any():
            out[over] = np.copysign(largest, np.asarray(x)[over])
        return out

    def decode(y: Any) -> np.ndarray:
        return np.clip(np.asarray(y, dtype=f64), low, high)

    return low32, high32, cast if fits else saturating, decode


# -- composite checks: the keys (or the length), then each part in order ---------------------------
def dict_check(keys: List[str], parts: List[Tuple[str, Check]], spec: str) -> Check:
    """Why a value is not a dict of exactly ``keys`` whose entries pass ``parts``; ``spec`` names
    the runtime's action space in the fix (``"env.action_space"``, ``"env.action_spec()"``)."""

    def whole(y: Any, path: str) -> Mismatch:
        got = sorted(y) if isinstance(y, dict) else _describe(y)
        return (path, f"be a dict with the keys {keys}", got, f"Pass one entry per key of {spec}")

    return checks.dict_of_parts(keys, parts, whole)


def tuple_check(items: List[Check], spec: str) -> Check:
    """Why a value is not a tuple (or list) of ``len(items)`` values passing ``items`` in order."""
    count = len(items)

    def whole(y: Any, path: str) -> Mismatch:
        return (path, f"be a tuple of length {count}", _describe(y), f"Pass one value per entry of {spec}")

    return checks.tuple_of_parts(items, whole)

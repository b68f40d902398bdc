"""Lower neutral spaces to Gymnasium spaces: one recursive converter, computed once at export.

A :class:`Lowering` holds the target space and plain functions over numpy values:

* ``encode``: neutral value -> target value (observations on the way out);
* ``decode``: target value -> neutral value (actions on the way in; observations for replay);
* ``encode_batch`` / ``decode_batch``: the same over a leading batch axis (vector envs);
* ``invalid`` / ``invalid_batch``: why a target value is outside the target space, or None.

Rules (each lossless, or a :class:`ConversionError` naming the path):
Box -> Box; Image -> uint8 Box, CHW or HWC; Discrete(n, start) -> Discrete(n) (offset);
MultiDiscrete (n-D, start) -> flat MultiDiscrete from 0; MultiBinary (n-D) -> flat MultiBinary;
Dict / Tuple (nested) -> one level of Dict, keys joined with "." (Tuple entries by index).

One announced exception, opt-in: ``float64_as_float32=True`` presents float64 Box leaves as float32
(SB3's policies compute in float32 anyway; ``to_sb3`` turns it on and its check profile says so).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from bridge import spaces as ns
from bridge.errors import ContractError, ConversionError, message
from bridge.spaces.base import Mismatch, _describe

Fn = Callable[[Any], Any]
Check = Callable[[Any, str], Optional[Mismatch]]
LAYOUTS = ("CHW", "HWC")
_TABLE_LIMIT = 4096  # Discrete actions up to this size are checked and decoded by one dict lookup
KEY_SEPARATOR = "."


def refuse(subject: str, expectation: str, actual: Any, fix: str) -> ConversionError:
    """A ConversionError in the house format that keeps its parts (checker profiles reuse them)."""
    error = ConversionError(message(subject, expectation, actual, fix))
    error.parts = (subject, expectation, actual if isinstance(actual, str) else repr(actual), fix)  # type: ignore[attr-defined]
    return error


class Lowering:
    """The target space plus the plain functions that move values across (see module doc)."""

    __slots__ = (
        "space",
        "encode",
        "decode",
        "encode_batch",
        "decode_batch",
        "invalid",
        "invalid_batch",
        "identity",
        "table",
    )

    def __init__(
        self,
        space: Any,
        encode: Fn,
        decode: Fn,
        encode_batch: Fn,
        decode_batch: Fn,
        invalid: Check,
        invalid_batch: Check,
        identity: bool = False,
        table: Optional[dict] = None,
    ) -> None:
        self.space, self.encode, self.decode = space, encode, decode
        self.encode_batch, self.decode_batch = encode_batch, decode_batch
        self.invalid, self.invalid_batch = invalid, invalid_batch
        self.identity = identity  # encode/decode return their argument unchanged
        self.table = table  # every valid target value -> its neutral value (small Discrete spaces)

    def preparer(self, check: bool = True, path: str = "action") -> Fn:
        """One function, built once: target action -> neutral action, raising ContractError (the
        house sentence, before anything moves) when ``check`` and the action is outside the space."""
        decode, invalid = self.decode, self.invalid
        if not check:
            return decode

        def checked(x: Any) -> Any:
            bad = invalid(x, path)
            if bad is not None:
                raise ContractError(message(*bad))
            return decode(x)

        if self.table is None:
            return checked
        get, int64 = self.table.get, np.int64

        def lookup(x: Any) -> Any:  # the common case is one dict lookup; the rest takes the full path
            if type(x) is int or type(x) is int64:
                neutral = get(x)
                if neutral is not None:
                    return neutral
            return checked(x)

        return lookup


def _same(x: Any) -> Any:
    return x


def lower(
    space: ns.Space, path: str, gym: Any, image_layout: str = "CHW", float64_as_float32: bool = False
) -> Lowering:
    """The lowering of neutral ``space`` at ``path`` (e.g. ``"observation"``) to ``gym.spaces``."""
    if image_layout not in LAYOUTS:
        raise refuse(
            "image_layout", f"be one of {LAYOUTS}", repr(image_layout), "Pass image_layout='CHW' (SB3) or 'HWC'"
        )
    if isinstance(space, (ns.Dict, ns.Tuple)):
        return _lower_composite(space, path, gym, image_layout, float64_as_float32)
    if isinstance(space, ns.Image):
        return _lower_image(space, gym, image_layout)
    if isinstance(space, ns.Box):
        if float64_as_float32 and space.dtype == np.float64:
            return _lower_box_as_float32(space, gym)
        return _lower_box(space, gym)
    if isinstance(space, ns.Discrete):
        return _lower_discrete(space, gym)
    if isinstance(space, ns.MultiDiscrete):
        return _lower_multi_discrete(space, gym)
    if isinstance(space, ns.MultiBinary):
        return _lower_multi_binary(space, gym)
    raise refuse(
        path,
        "be a bridge space Gymnasium can express",
        type(space).__name__,
        "Use Box, Image, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple",
    )


# -- validation helpers: target-side checks, vectorised, messages in exported terms -------------
def _array_check(
    shape: Tuple[int, ...], dtype: np.dtype, low: np.ndarray, high: np.ndarray, kind: str
) -> Tuple[Check, Check]:
    """Checks for numeric arrays of ``shape`` whose elements lie in [low, high]."""
    integer = kind == "int"

    def check(x: Any, path: str, batch: bool) -> Optional[Mismatch]:
        if not isinstance(x, (np.ndarray, np.generic)):
            if integer and not batch and shape == () and isinstance(x, int) and not isinstance(x, bool):
                x = np.int64(x)
            else:
                return (
                    path,
                    f"be a numpy array of dtype {dtype} and shape {shape}",
                    _describe(x),
                    f"Pass np.asarray(action, dtype=np.{dtype})",
                )
        want = (x.shape[:1] + shape) if batch and x.ndim else shape
        if x.shape != want or (batch and x.ndim == 0):
            return (
                path,
                f"have shape {('(num_envs,) + ' if batch else '')}{shape}",
                f"shape {x.shape}",
                "Reshape it to the action space's shape",
            )
        ok_kind = x.dtype.kind in "iu" if integer else np.can_cast(x.dtype, dtype)
        if not ok_kind:
            need = "an integer dtype" if integer else f"a dtype that casts safely to {dtype}"
            return (path, f"have {need}", f"dtype {x.dtype}", f"Cast it with .astype(np.{dtype})")
        inside = (x >= low) & (x <= high)
        if not inside.all():
            index = tuple(int(i) for i in np.argwhere(~inside)[0])
            bound = index[1:] if batch else index
            where = f"{path}{list(index)}" if index else path
            expectation = f"lie in [{low[bound].item()!r}, {high[bound].item()!r}]"
            return (
                where,
                expectation,
                repr(x[index].item()),
                "Sample from env.action_space or clip the action into its bounds",
            )
        return None

    return _fast_single(shape, dtype, low, high, integer, check), _fast_batch(shape, low, high, integer, check)


def _fast_batch(shape: Tuple[int, ...], low: np.ndarray, high: np.ndarray, integer: bool, check: Any) -> Check:
    """The per-batch check; exported integer spaces start at 0, so one unsigned compare suffices."""
    ndim = len(shape) + 1
    if integer and not low.any():
        int64, uint64, limit = np.dtype(np.int64), np.uint64, high.astype(np.uint64)
        top = limit.flat[0] if limit.size and (limit == limit.flat[0]).all() else None
        largest = np.maximum.reduce

        def unsigned(x: Any, path: str) -> Optional[Mismatch]:
            # a negative int64 viewed as uint64 is huge, so `<= high` also catches values below 0
            if type(x) is np.ndarray and x.dtype is int64 and x.ndim == ndim and x.shape[1:] == shape and x.size:
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
    if shape == () and integer:  # Discrete: plain ints and int64 scalars
        lo, hi = int(low), int(high)

        def scalar(x: Any, path: str) -> Optional[Mismatch]:
            if (type(x) is int or type(x) is np.int64) and lo <= int(x) <= hi:
                return None
            return check(x, path, False)

        return scalar
    uniform = bool((low == low.flat[0]).all() and (high == high.flat[0]).all()) if low.size else True
    if uniform and 0 < low.size <= 64:
        # small arrays: Python comparisons beat numpy's per-call overhead (NaN fails both)
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


def _lower_box(space: ns.Box, gym: Any) -> Lowering:
    target = gym.spaces.Box(space.low, space.high, space.shape, space.dtype)
    kind = "int" if space.dtype.kind in "iu" else "float"
    invalid, invalid_batch = _array_check(space.shape, space.dtype, space.low, space.high, kind)
    dtype = space.dtype

    def decode(x: Any) -> np.ndarray:
        return x if type(x) is np.ndarray and x.dtype is dtype else np.asarray(x, dtype=dtype)

    return Lowering(target, _same, decode, _same, decode, invalid, invalid_batch, identity=True)


def _lower_box_as_float32(space: ns.Box, gym: Any) -> Lowering:
    """float64 Box -> float32 Box (bounds rounded outward, so every value stays inside)."""
    low32, high32 = space.low.astype(np.float32), space.high.astype(np.float32)
    low = np.where(low32 > space.low, np.nextafter(low32, np.float32(-np.inf)), low32)
    high = np.where(high32 < space.high, np.nextafter(high32, np.float32(np.inf)), high32)
    target = gym.spaces.Box(low, high, space.shape, np.float32)
    invalid, invalid_batch = _array_check(space.shape, np.dtype(np.float32), low, high, "float")
    f32, f64, largest = np.float32, np.float64, float(np.finfo(np.float32).max)
    # past float32's range a cast gives inf; a finite observation must stay finite (saturate)
    fits = bool((np.abs(space.low) <= largest).all() and (np.abs(space.high) <= largest).all())
    small, inf = space.low.size <= 64, float("inf")

    def encode(x: Any) -> np.ndarray:
        out = np.asarray(x).astype(f32)
        if fits:
            return out
        if small and out.ndim == len(space.shape):  # Python's `in` beats numpy calls on small arrays
            flat = out.ravel().tolist()
            if inf not in flat and -inf not in flat:
                return out
        over = np.isinf(out) & np.isfinite(x)
        if over.any():
            out[over] = np.copysign(largest, np.asarray(x)[over])
        return out

    def decode(x: Any) -> np.ndarray:
        return np.clip(np.asarray(x, dtype=f64), space.low, space.high)

    return Lowering(target, encode, decode, encode, decode, invalid, invalid_batch)


def _lower_image(space: ns.Image, gym: Any, layout: str) -> Lowering:
    if layout == "HWC":
        return _lower_box(space, gym)
    h, w, c = space.shape
    target = gym.spaces.Box(0, 255, (c, h, w), np.uint8)
    low, high = np.zeros((c, h, w), np.uint8), np.full((c, h, w), 255, np.uint8)
    invalid, invalid_batch = _array_check((c, h, w), np.dtype(np.uint8), low, high, "int")
    return Lowering(
        target,
        lambda x: x.transpose(2, 0, 1),
        lambda x: np.asarray(x, dtype=np.uint8).transpose(1, 2, 0),
        lambda x: x.transpose(0, 3, 1, 2),
        lambda x: np.asarray(x, dtype=np.uint8).transpose(0, 2, 3, 1),
        invalid,
        invalid_batch,
    )


def _lower_discrete(space: ns.Discrete, gym: Any) -> Lowering:
    n, start = space.n, space.start
    target = gym.spaces.Discrete(n)
    low, high = np.int64(0), np.int64(n - 1)
    invalid, invalid_batch = _array_check((), np.dtype(np.int64), np.asarray(low), np.asarray(high), "int")
    table = {i: np.int64(i + start) for i in range(n)} if n <= _TABLE_LIMIT else None
    if start == 0:  # the neutral Discrete accepts ints and integer scalars as they are
        return Lowering(target, np.int64, _same, _array_int64, _array_int64, invalid, invalid_batch, table=table)
    return Lowering(
        target,
        lambda x: np.int64(x - start),
        lambda x: np.int64(x + start),
        lambda x: np.asarray(x, dtype=np.int64) - start,
        lambda x: np.asarray(x, dtype=np.int64) + start,
        invalid,
        invalid_batch,
        table=table,
    )


def _array_int64(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def _lower_multi_discrete(space: ns.MultiDiscrete, gym: Any) -> Lowering:
    shape, start = space.shape, space.start
    flat_n = space.nvec.reshape(-1)
    target = gym.spaces.MultiDiscrete(flat_n)
    invalid, invalid_batch = _array_check((flat_n.size,), np.dtype(np.int64), np.zeros_like(flat_n), flat_n - 1, "int")
    flat_start = start.reshape(-1)
    return Lowering(
        target,
        lambda x: (x - start).reshape(-1),
        lambda x: np.asarray(x, dtype=np.int64).reshape(shape) + start,
        lambda x: (x - start).reshape(x.shape[0], -1),
        lambda x: (np.asarray(x, dtype=np.int64) + flat_start).reshape((-1,) + shape),
        invalid,
        invalid_batch,
    )


def _lower_multi_binary(space: ns.MultiBinary, gym: Any) -> Lowering:
    shape = space.shape
    size = int(np.prod(shape))
    target = gym.spaces.MultiBinary(size)
    invalid, invalid_batch = _array_check(
        (size,), np.dtype(np.int8), np.zeros(size, np.int8), np.ones(size, np.int8), "int"
    )
    return Lowering(
        target,
        lambda x: x.reshape(-1),
        lambda x: np.asarray(x, dtype=np.int8).reshape(shape),
        lambda x: x.reshape(x.shape[0], -1),
        lambda x: np.asarray(x, dtype=np.int8).reshape((-1,) + shape),
        invalid,
        invalid_batch,
    )


# -- composites: flatten to one level of Dict ----------------------------------------------------
def _leaves(space: ns.Space, path: str, keys: Tuple[Any, ...], out: List[tuple]) -> None:
    """Collect (neutral key path, flat key, leaf space, neutral path text) depth first."""
    if isinstance(space, (ns.Dict, ns.Tuple)):
        if len(space) == 0:
            raise refuse(path, "have at least one entry", repr(space), "Drop the empty entry or give it a space")
        items = space.items() if isinstance(space, ns.Dict) else enumerate(space)
        for key, child in items:
            _leaves(child, f"{path}[{key!r}]", keys + (key,), out)
    else:
        out.append((keys, KEY_SEPARATOR.join(str(k) for k in keys), space, path))


def _lower_composite(space: ns.Space, path: str, gym: Any, layout: str, float64_as_float32: bool = False) -> Lowering:
    found: List[tuple] = []
    _leaves(space, path, (), found)
    seen: dict = {}
    for _keys, flat, _, where in found:
        if flat in seen:
            raise refuse(
                where,
                f"flatten to a key other than {seen[flat]}'s",
                repr(flat),
                f"Rename keys so that no key contains {KEY_SEPARATOR!r} (SB3 needs one level of Dict)",
            )
        seen[flat] = where
    leaves = [(keys, flat, lower(sub, where, gym, layout, float64_as_float32)) for keys, flat, sub, where in found]
    target = gym.spaces.Dict([(flat, low.space) for _, flat, low in leaves])  # pairs keep the neutral order
    flat_keys = [flat for _, flat, _ in leaves]

    def getter(keys: Tuple[Any, ...]) -> Fn:
        if len(keys) == 1:
            key = keys[0]
            return lambda x: x[key]

        def get(x: Any) -> Any:
            for k in keys:
                x = x[k]
            return x

        return get

    plan = [(flat, getter(keys), low) for keys, flat, low in leaves]

    def encoder(batch: bool) -> Fn:
        fns = [(flat, get, low.encode_batch if batch else low.encode) for flat, get, low in plan]
        return lambda x: {flat: enc(get(x)) for flat, get, enc in fns}

    def decoder(batch: bool) -> Fn:
        return _rebuild(space, (), {flat: (low.decode_batch if batch else low.decode) for _, flat, low in leaves})

    def checker(batch: bool) -> Check:
        fns = [(flat, low.invalid_batch if batch else low.invalid) for _, flat, low in leaves]
        expected = set(flat_keys)

        def check(x: Any, where: str) -> Optional[Mismatch]:
            if not isinstance(x, dict) or x.keys() != expected:
                got = sorted(x) if isinstance(x, dict) else _describe(x)
                return (
                    where,
                    f"be a dict with the keys {flat_keys}",
                    got,
                    "Pass one entry per key of env.action_space",
                )
            for flat, inner in fns:
                bad = inner(x[flat], f"{where}[{flat!r}]")
                if bad is not None:
                    return bad
            return None

        return check

    return Lowering(target, encoder(False), decoder(False), encoder(True), decoder(True), checker(False), checker(True))


def _rebuild(space: ns.Space, keys: Tuple[Any, ...], decoders: dict) -> Fn:
    """A function from the flat target dict back to the nested neutral value."""
    if isinstance(space, ns.Dict):
        parts = [(key, _rebuild(child, keys + (key,), decoders)) for key, child in space.items()]
        return lambda y: {key: fn(y) for key, fn in parts}
    if isinstance(space, ns.Tuple):
        fns = [_rebuild(child, keys + (i,), decoders) for i, child in enumerate(space)]
        return lambda y: tuple(fn(y) for fn in fns)
    flat = KEY_SEPARATOR.join(str(k) for k in keys)
    decode = decoders[flat]
    return lambda y: decode(y[flat])

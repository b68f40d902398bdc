"""Neutral spaces and values <-> Gymnasium 1.x's (one recursive lowering, computed once at export).

The protocol is :class:`~bridge.adapters._shared.lowering.Lowering`. Rules (each lossless, or a
:class:`~bridge.errors.ConversionError` naming the path):
Box -> Box; Image -> uint8 Box, CHW or HWC; Discrete(n, start) -> Discrete(n) (offset);
MultiDiscrete (n-D, start) -> flat MultiDiscrete from 0; MultiBinary (n-D) -> flat MultiBinary;
Dict -> Dict and Tuple -> Tuple, nested as they are (Gymnasium's own presentation: what an env
written for Gymnasium observes). Behind :data:`FLAT` (SB3's and RLlib's exports set it, never a user):
Dict / Tuple (nested) -> one level of Dict, keys joined with "/" (Tuple entries by index): a key
SB3's MultiInputPolicy can build (torch module names cannot hold ".").

The one float policy, opt-in here: ``float64_as_float32=True`` presents float64 Box leaves as float32
(announced in ``roundings``; ``to_sb3`` turns it on because SB3's policies compute in float32).
``normalize_actions=True`` exposes a bounded float Box action as [-1, 1].
The same rules serve Gymnasium 1.2 (RLlib's pin) and 1.3.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np
from bridge.adapters._shared.lowering import (
    Check,
    Fn,
    Lowering,
    array_checks,
    combined,
    dict_check,
    discrete_table,
    float32_presentation,
    role,
    same,
)
from bridge.adapters.gymnasium.nested import lower_nested
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.errors import ConversionError, error

gymnasium = optional_import("gymnasium", "the Gymnasium export")

__all__ = ["lower", "LAYOUTS", "KEY_SEPARATOR", "FLAT"]

LAYOUTS = ("CHW", "HWC")
KEY_SEPARATOR = "/"  # not ".": SB3 builds one torch module per key, and torch refuses "." in names
# the lowering option (internal: set by the SB3 and RLlib exports on top of the user's options) that
# flattens Dict / Tuple to one level of Dict, as SB3's MultiInputPolicy needs
FLAT = "flat_composites"


def lower(space: ns.Space, *, path: str, options: Dict[str, Any]) -> Lowering:
    """The lowering of neutral ``space`` at ``path`` to Gymnasium's spaces (the protocol's one
    constructor shape). ``options``: ``image_layout``; ``float64_as_float32`` (observations),
    ``normalize_actions`` (actions: the root of ``path`` says which side, see :func:`role`)."""
    layout = options.get("image_layout", "CHW")
    flat = bool(options.get(FLAT, False))
    if role(path) == "observation":
        return _lower(space, path, layout, bool(options.get("float64_as_float32", False)), flat)
    lowering = _lower(space, path, layout, False, flat)
    return _normalized(space, path) if options.get("normalize_actions", False) else lowering


def _lower(space: ns.Space, path: str, layout: str, float64_as_float32: bool, flat: bool = False) -> Lowering:
    if isinstance(space, (ns.Dict, ns.Tuple)):
        if flat:
            return _lower_composite(space, path, layout, float64_as_float32)
        return lower_nested(space, path, lambda child, where: _lower(child, where, layout, float64_as_float32))
    if isinstance(space, ns.Image):
        return _lower_image(space, layout)
    if isinstance(space, ns.Box):
        if float64_as_float32 and space.dtype == np.float64:
            return _lower_box_as_float32(space, path)
        return _lower_box(space)
    if isinstance(space, ns.Discrete):
        return _lower_discrete(space)
    if isinstance(space, ns.MultiDiscrete):
        return _lower_multi_discrete(space)
    if isinstance(space, ns.MultiBinary):
        return _lower_multi_binary(space)
    raise error(
        ConversionError,
        path,
        "be a bridge space Gymnasium can express",
        type(space).__name__,
        "Use Box, Image, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple",
    )


def _normalized(space: ns.Space, path: str) -> Lowering:
    """A bounded float Box action exposed as [-1, 1] (``normalize_actions``, SB3's advice)."""
    if type(space) is not ns.Box or space.dtype.kind != "f" or not space.is_bounded("both"):
        raise error(
            ConversionError,
            f"{path} space",
            "be a bounded float Box for normalize_actions=True",
            repr(space),
            "Export without normalize_actions",
        )
    low, high, dtype = space.low.astype(np.float64), space.high.astype(np.float64), space.dtype
    half = (high - low) / 2.0
    unit = gymnasium.spaces.Box(-1.0, 1.0, space.shape, np.float32)
    ones = np.ones(space.shape, np.float32)
    invalid, invalid_batch = array_checks(space.shape, np.dtype(np.float32), -ones, ones, False)

    def decode(y: Any) -> np.ndarray:  # [-1, 1] -> [low, high]; clip guards float rounding
        return np.clip(low + (np.asarray(y, np.float64) + 1.0) * half, low, high).astype(dtype)

    def encode(x: Any) -> np.ndarray:
        return ((np.asarray(x, np.float64) - low) / np.where(half > 0, half, 1.0) - 1.0).astype(np.float32)

    return Lowering(
        space,
        unit,
        encode,
        decode,
        invalid,
        encode_batch=encode,
        decode_batch=decode,
        invalid_batch=invalid_batch,
        roundings=(f"{path}: [-1, 1] rescaled onto the Box bounds (normalize_actions)",),
    )


def _lower_box(space: ns.Box) -> Lowering:
    target = gymnasium.spaces.Box(space.low, space.high, space.shape, space.dtype)
    integer = space.dtype.kind in "iu"
    invalid, invalid_batch = array_checks(space.shape, space.dtype, space.low, space.high, integer)
    dtype = space.dtype

    def decode(x: Any) -> np.ndarray:  # after `invalid`: a cast that keeps every value
        return x if type(x) is np.ndarray and x.dtype is dtype else np.asarray(x, dtype=dtype)

    return Lowering(
        space,
        target,
        same,
        decode,
        invalid,
        encode_batch=same,
        decode_batch=decode,
        invalid_batch=invalid_batch,
        identity=True,
    )


def _lower_box_as_float32(space: ns.Box, path: str) -> Lowering:
    """float64 Box -> float32 Box (the one float policy; bounds rounded outward)."""
    low, high, encode, decode = float32_presentation(space.low, space.high)
    target = gymnasium.spaces.Box(low, high, space.shape, np.float32)
    invalid, invalid_batch = array_checks(space.shape, np.dtype(np.float32), low, high, False)
    return Lowering(
        space,
        target,
        encode,
        decode,
        invalid,
        encode_batch=encode,
        decode_batch=decode,
        invalid_batch=invalid_batch,
        roundings=(f"{path}: float64 presented as float32",),
    )


def _lower_image(space: ns.Image, layout: str) -> Lowering:
    if layout == "HWC":
        return _lower_box(space)
    h, w, c = space.shape
    target = gymnasium.spaces.Box(0, 255, (c, h, w), np.uint8)
    low, high = np.zeros((c, h, w), np.uint8), np.full((c, h, w), 255, np.uint8)
    invalid, invalid_batch = array_checks((c, h, w), np.dtype(np.uint8), low, high, True)
    return Lowering(
        space,
        target,
        lambda x: x.transpose(2, 0, 1),
        lambda y: np.asarray(y, dtype=np.uint8).transpose(1, 2, 0),
        invalid,
        encode_batch=lambda x: x.transpose(0, 3, 1, 2),
        decode_batch=lambda y: np.asarray(y, dtype=np.uint8).transpose(0, 2, 3, 1),
        invalid_batch=invalid_batch,
    )


def _lower_discrete(space: ns.Discrete) -> Lowering:
    n, start = space.n, space.start
    target = gymnasium.spaces.Discrete(n)
    low, high = np.int64(0), np.int64(n - 1)
    invalid, invalid_batch = array_checks((), np.dtype(np.int64), np.asarray(low), np.asarray(high), True)
    int64 = np.int64

    def decode(y: Any) -> Any:  # int(): Python arithmetic, so no integer type given can wrap around
        return y if start == 0 and type(y) is int64 else int64(int(y) + start)

    return Lowering(
        space,
        target,
        lambda x: np.int64(int(x) - start),
        decode,
        invalid,
        encode_batch=(lambda x: np.asarray(x, dtype=np.int64) - start) if start else _int64_array,
        decode_batch=(lambda y: np.asarray(y, dtype=np.int64) + start) if start else _int64_array,
        invalid_batch=invalid_batch,
        table=discrete_table(n, start),
    )


def _int64_array(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def _lower_multi_discrete(space: ns.MultiDiscrete) -> Lowering:
    shape, start = space.shape, space.start
    flat_n = space.nvec.reshape(-1)
    target = gymnasium.spaces.MultiDiscrete(flat_n)
    invalid, invalid_batch = array_checks((flat_n.size,), np.dtype(np.int64), np.zeros_like(flat_n), flat_n - 1, True)
    flat_start = start.reshape(-1)
    return Lowering(
        space,
        target,
        lambda x: (x - start).reshape(-1),
        lambda y: np.asarray(y, dtype=np.int64).reshape(shape) + start,
        invalid,
        encode_batch=lambda x: (x - start).reshape(x.shape[0], -1),
        decode_batch=lambda y: (np.asarray(y, dtype=np.int64) + flat_start).reshape((-1,) + shape),
        invalid_batch=invalid_batch,
    )


def _lower_multi_binary(space: ns.MultiBinary) -> Lowering:
    shape = space.shape
    size = int(np.prod(shape))
    target = gymnasium.spaces.MultiBinary(size)
    invalid, invalid_batch = array_checks(
        (size,), np.dtype(np.int8), np.zeros(size, np.int8), np.ones(size, np.int8), True
    )
    return Lowering(
        space,
        target,
        lambda x: x.reshape(-1),
        lambda y: np.asarray(y, dtype=np.int8).reshape(shape),
        invalid,
        encode_batch=lambda x: x.reshape(x.shape[0], -1),
        decode_batch=lambda y: np.asarray(y, dtype=np.int8).reshape((-1,) + shape),
        invalid_batch=invalid_batch,
    )


# -- composites: flatten to one level of Dict (FLAT: SB3, RLlib) ---------------------------------
def _leaves(space: ns.Space, path: str, keys: Tuple[Any, ...], out: List[tuple]) -> None:
    """Collect (neutral key path, flat key, leaf space, neutral path text) depth first."""
    if isinstance(space, (ns.Dict, ns.Tuple)):
        if len(space) == 0:
            raise error(
                ConversionError, path, "have at least one entry", repr(space), "Drop the empty entry or give it a space"
            )
        items = space.items() if isinstance(space, ns.Dict) else enumerate(space)
        for key, child in items:
            _leaves(child, f"{path}[{key!r}]", keys + (key,), out)
    else:
        out.append((keys, KEY_SEPARATOR.join(str(k) for k in keys), space, path))


def _lower_composite(space: ns.Space, path: str, layout: str, float64_as_float32: bool) -> Lowering:
    found: List[tuple] = []
    _leaves(space, path, (), found)
    seen: dict = {}
    for _keys, flat, _, where in found:
        if flat in seen:
            raise error(
                ConversionError,
                where,
                f"flatten to a key other than {seen[flat]}'s",
                repr(flat),
                f"Rename keys so that no key contains {KEY_SEPARATOR!r} (SB3 needs one level of Dict)",
            )
        seen[flat] = where
    leaves = [(keys, flat, _lower(sub, where, layout, float64_as_float32)) for keys, flat, sub, where in found]
    target = gymnasium.spaces.Dict([(flat, low.space) for _, flat, low in leaves])  # pairs keep the neutral order
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
        return dict_check(flat_keys, fns, "env.action_space")

    return Lowering(
        space,
        target,
        encoder(False),
        decoder(False),
        checker(False),
        encode_batch=encoder(True),
        decode_batch=decoder(True),
        invalid_batch=checker(True),
        roundings=combined([(flat, low) for _, flat, low in leaves]),
    )


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

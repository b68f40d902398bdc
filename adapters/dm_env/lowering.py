"""Neutral spaces and values <-> dm_env specs: lossless, or a ConversionError naming the path.

Box -> ``BoundedArray`` (per-element bounds, dtype kept), Discrete(n, start) -> ``DiscreteArray(n)``
with the values shifted by ``start`` (dm_env's DiscreteArray always starts at 0; the shift is exact
and undone on the way back), MultiDiscrete(nvec, start) -> ``BoundedArray(start, start + nvec - 1)``,
MultiBinary -> ``BoundedArray(int8, 0, 1)``, Dict -> a dict of specs (order kept, nested), Tuple ->
a tuple of specs. Anything else is refused by name. Actions are checked as dm_env agents send them
(0-d or n-d numpy arrays, Python numbers) before any cast.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np
from bridge.adapters._shared.lowering import Check, Fn, Lowering, array_checks, dict_check, same, tuple_check
from bridge.compat import optional_import

from bridge import spaces
from bridge.errors import ConversionError, error

dm_env = optional_import("dm_env", "the dm_env export")
specs = dm_env.specs

__all__ = ["to_dm_spec", "lower", "dm_env", "specs"]

_FIX = "Clip it into the bounds of env.action_spec()"


def to_dm_spec(space: spaces.Space, path: str = "observation") -> Any:
    """The dm_env spec holding exactly the values of ``space`` (``path`` names it and its errors)."""
    if isinstance(space, spaces.Box):  # Image included: uint8 HWC stays uint8 HWC
        return specs.BoundedArray(space.shape, space.dtype, space.low, space.high, name=path)
    if isinstance(space, spaces.Discrete):
        return specs.DiscreteArray(space.n, dtype=space.dtype, name=path)
    if isinstance(space, spaces.MultiDiscrete):
        return specs.BoundedArray(space.shape, space.dtype, space.start, space.start + space.nvec - 1, name=path)
    if isinstance(space, spaces.MultiBinary):
        return specs.BoundedArray(space.shape, space.dtype, 0, 1, name=path)
    if isinstance(space, spaces.Dict):
        return {k: to_dm_spec(s, f"{path}[{k!r}]") for k, s in space.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(to_dm_spec(s, f"{path}[{i}]") for i, s in enumerate(space))
    raise error(
        ConversionError,
        path,
        "be a bridge space dm_env can hold",
        type(space).__name__,
        "Use Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple",
    )


def lower(space: spaces.Space, *, path: str, options: Dict[str, Any]) -> Lowering:
    """The dm_env lowering of neutral ``space`` at ``path`` (the protocol's one constructor shape;
    dm_env holds every value at its own dtype, so no option applies)."""
    target = to_dm_spec(space, path)
    encode, decode, invalid = _lower(space)
    return Lowering(space, target, encode, decode, invalid, identity=encode is same and decode is same)


def _lower(space: spaces.Space) -> Tuple[Fn, Fn, Check]:
    """(encode, decode, invalid) of one neutral space, recursively."""
    if isinstance(space, spaces.Dict):
        parts = [(key, _lower(sub)) for key, sub in space.items()]
        plain = all(enc is same and dec is same for _, (enc, dec, _) in parts)
        return (
            same if plain else (lambda x: {k: enc(x[k]) for k, (enc, _, _) in parts}),
            same if plain else (lambda y: {k: dec(y[k]) for k, (_, dec, _) in parts}),
            dict_check(list(space.keys()), [(k, inv) for k, (_, _, inv) in parts], "env.action_spec()"),
        )
    if isinstance(space, spaces.Tuple):
        items = [_lower(sub) for sub in space]
        return (
            lambda x: tuple(enc(v) for (enc, _, _), v in zip(items, x)),
            lambda y: tuple(dec(v) for (_, dec, _), v in zip(items, y)),
            tuple_check([inv for _, _, inv in items], "env.action_spec()"),
        )
    if isinstance(space, spaces.Discrete):
        dtype, start = space.dtype, int(space.start)
        zero = np.zeros((), dtype)
        invalid, _ = array_checks((), dtype, zero, zero + (space.n - 1), True, fix=_FIX)
        if start == 0:
            return _scalar(dtype, 0), _scalar(dtype, 0), invalid
        return _scalar(dtype, -start), _scalar(dtype, start), invalid
    if isinstance(space, spaces.Box):
        low, high, integer = space.low, space.high, space.dtype.kind in "iu"
    elif isinstance(space, spaces.MultiDiscrete):
        low, high, integer = space.start, space.start + space.nvec - 1, True
    else:  # MultiBinary
        low, integer = np.zeros(space.shape, space.dtype), True
        high = low + 1
    invalid, _ = array_checks(space.shape, space.dtype, low, high, integer, fix=_FIX)
    return same, _cast(space.dtype), invalid


def _scalar(dtype: np.dtype, shift: int) -> Fn:
    """A Discrete value shifted by ``shift``, as a numpy scalar of ``dtype`` (what the spec holds)."""
    kind = dtype.type

    def move(x: Any) -> Any:  # after `invalid`: the value is an in-range integer
        return kind(int(x) + shift)

    return move


def _cast(dtype: np.dtype) -> Fn:
    def decode(y: Any) -> np.ndarray:  # after `invalid`: a cast that keeps every value
        return y if type(y) is np.ndarray and y.dtype is dtype else np.asarray(y, dtype=dtype)

    return decode

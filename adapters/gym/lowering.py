"""Neutral spaces and values <-> gym 0.23.1's: lossless, or a ConversionError naming the path.

gym 0.23 holds every neutral space as it is (its Discrete has ``start``; Dict keeps the declared
order through an OrderedDict), except MultiDiscrete with a start (refused). Values: a Discrete
observation leaves as a Python int (what gym's checker wants) and comes back as np.int64; actions
are checked as gym agents send them (numpy values, Python numbers, lists) before any cast.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict

import numpy as np
from bridge.adapters._shared.lowering import Check, Fn, Lowering, array_checks, dict_check, same, tuple_check
from bridge.adapters.gym.loader import load_gym

from bridge import spaces
from bridge.errors import ConversionError, error

gym = load_gym("the gym 0.23 export")

__all__ = ["to_gym_space", "lower"]

_FIX = "Clip it into the bounds or widen the space (NaN is never inside)"


def to_gym_space(space: spaces.Space, path: str = "observation") -> Any:
    """The gym 0.23 space holding exactly the values of ``space`` (``path`` names it in errors)."""
    if isinstance(space, spaces.Box):  # Image included: uint8 HWC stays uint8 HWC
        return gym.spaces.Box(space.low, space.high, space.shape, space.dtype)
    if isinstance(space, spaces.Discrete):
        return gym.spaces.Discrete(space.n, start=space.start)
    if isinstance(space, spaces.MultiDiscrete):
        if space.start.any():
            raise error(
                ConversionError,
                path,
                "be a MultiDiscrete with start 0 for gym 0.23 (its MultiDiscrete has no start)",
                f"start={space.start.tolist()}",
                "Shift the values to start at 0 in the env, or use a Tuple of Discrete(n, start)",
            )
        return gym.spaces.MultiDiscrete(space.nvec.copy())
    if isinstance(space, spaces.MultiBinary):
        return gym.spaces.MultiBinary(list(space.shape) if len(space.shape) > 1 else space.shape[0])
    if isinstance(space, spaces.Dict):
        # an OrderedDict keeps the declared order (gym 0.23 sorts plain dicts)
        return gym.spaces.Dict(OrderedDict((k, to_gym_space(s, f"{path}[{k!r}]")) for k, s in space.items()))
    if isinstance(space, spaces.Tuple):
        return gym.spaces.Tuple([to_gym_space(s, f"{path}[{i}]") for i, s in enumerate(space)])
    raise error(
        ConversionError,
        path,
        "be a bridge space gym 0.23 can hold",
        type(space).__name__,
        "Use Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple",
    )


def lower(space: spaces.Space, *, path: str, options: Dict[str, Any]) -> Lowering:
    """The gym 0.23 lowering of neutral ``space`` at ``path`` ("observation" or "action"; the
    protocol's one constructor shape: gym 0.23 holds every value as it is, so no option applies)."""
    target = to_gym_space(space, path)
    encode, decode, invalid = _lower(space)
    return Lowering(space, target, encode, decode, invalid, identity=encode is same and decode is same)


def _lower(space: spaces.Space) -> tuple[Fn, Fn, Check]:
    """(encode, decode, invalid) of one neutral space, recursively."""
    if isinstance(space, spaces.Dict):
        parts = [(key, _lower(sub)) for key, sub in space.items()]
        plain = all(enc is same for _, (enc, _, _) in parts)
        return (
            same if plain else (lambda x: OrderedDict((k, enc(x[k])) for k, (enc, _, _) in parts)),
            lambda y: {k: dec(y[k]) for k, (_, dec, _) in parts},
            dict_check(list(space.keys()), [(k, inv) for k, (_, _, inv) in parts], "env.action_space"),
        )
    if isinstance(space, spaces.Tuple):
        items = [_lower(sub) for sub in space]
        plain = all(enc is same for enc, _, _ in items)
        return (
            same if plain else (lambda x: tuple(enc(v) for (enc, _, _), v in zip(items, x))),
            lambda y: tuple(dec(v) for (_, dec, _), v in zip(items, y)),
            tuple_check([inv for _, _, inv in items], "env.action_space"),
        )
    if isinstance(space, spaces.Discrete):
        # the neutral check is exact for every integer type; int() gives gym's checker a Python int
        return int, lambda y: np.int64(int(y)), space.mismatch
    if isinstance(space, spaces.Box):
        low, high, integer = space.low, space.high, space.dtype.kind in "iu"
    elif isinstance(space, spaces.MultiDiscrete):
        low, high, integer = np.zeros_like(space.nvec), space.nvec - 1, True
    else:  # MultiBinary
        low, integer = np.zeros(space.shape, np.int8), True
        high = low + 1
    invalid, _ = array_checks(space.shape, space.dtype, low, high, integer, classic=True, fix=_FIX)
    return same, _cast(space.dtype), invalid


def _cast(dtype: np.dtype) -> Fn:
    def decode(y: Any) -> np.ndarray:  # after `invalid`: a cast that keeps every value
        return y if type(y) is np.ndarray and y.dtype is dtype else np.asarray(y, dtype=dtype)

    return decode

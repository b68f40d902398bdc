"""Neutral spaces and values <-> gym 0.23.1's: lossless, or a ConversionError naming the path.

gym 0.23 holds every neutral space as it is (its Discrete has ``start``; Dict keeps the declared
order through an OrderedDict), except MultiDiscrete with a start (refused). Values: a Discrete
observation leaves as a Python int (what gym's checker wants) and comes back as np.int64.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

import numpy as np
from bridge.compat import optional_import

from bridge import spaces
from bridge.errors import ConversionError, message

gym = optional_import("gym", "the gym 0.23 export")

__all__ = ["to_gym_space"]

Encoder = Callable[[Any], Any]


def _refuse(subject: str, expectation: str, actual: object, fix: str) -> ConversionError:
    error = ConversionError(message(subject, expectation, actual, fix))
    error.parts = (subject, expectation, actual if isinstance(actual, str) else repr(actual), fix)  # type: ignore[attr-defined]
    return error


def to_gym_space(space: spaces.Space, path: str = "observation") -> Any:
    """The gym 0.23 space holding exactly the values of ``space`` (``path`` names it in errors)."""
    if isinstance(space, spaces.Box):  # Image included: uint8 HWC stays uint8 HWC
        return gym.spaces.Box(space.low, space.high, space.shape, space.dtype)
    if isinstance(space, spaces.Discrete):
        return gym.spaces.Discrete(space.n, start=space.start)
    if isinstance(space, spaces.MultiDiscrete):
        if space.start.any():
            raise _refuse(
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
    raise _refuse(
        path,
        "be a bridge space gym 0.23 can hold",
        type(space).__name__,
        "Use Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple",
    )


def _has_discrete(space: spaces.Space) -> bool:
    if isinstance(space, spaces.Dict):
        return any(_has_discrete(s) for s in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return any(_has_discrete(s) for s in space)
    return isinstance(space, spaces.Discrete)


def _identity(x: Any) -> Any:
    return x


def _obs_encoder(space: spaces.Space) -> Encoder:
    """Neutral -> gym observation: a Discrete value becomes a Python int (what check_env wants)."""
    if not _has_discrete(space):
        return _identity
    if isinstance(space, spaces.Discrete):
        return int
    if isinstance(space, spaces.Dict):
        parts = [(k, _obs_encoder(s)) for k, s in space.items()]
        return lambda x: OrderedDict((k, f(x[k])) for k, f in parts)
    parts_t = [_obs_encoder(s) for s in space]  # Tuple
    return lambda x: tuple(f(v) for f, v in zip(parts_t, x))


def _obs_decoder(space: spaces.Space) -> Encoder:
    """Gym -> neutral observation (the inverse of :func:`_obs_encoder`)."""
    if not _has_discrete(space):
        return _identity
    if isinstance(space, spaces.Discrete):
        return np.int64
    if isinstance(space, spaces.Dict):
        parts = [(k, _obs_decoder(s)) for k, s in space.items()]
        return lambda x: {k: f(x[k]) for k, f in parts}
    parts_t = [_obs_decoder(s) for s in space]
    return lambda x: tuple(f(v) for f, v in zip(parts_t, x))


def _cast_array(dtype: np.dtype) -> Encoder:
    """Gym users pass lists and other float widths; cast only where the kind is kept."""

    def cast(x: Any) -> Any:
        if isinstance(x, (list, tuple)):
            x = np.asarray(x)
        if isinstance(x, (np.ndarray, np.generic)) and x.dtype != dtype and np.can_cast(x.dtype, dtype, "same_kind"):
            return np.asarray(x, dtype=dtype)
        return x

    return cast


def _scalar_int(x: Any) -> Any:
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        return x.item()
    return x


def _action_decoder(space: spaces.Space) -> Encoder:
    """Gym -> neutral action: lists to arrays, 0-d int arrays to ints; nothing that loses values."""
    if isinstance(space, spaces.Discrete):
        return _scalar_int
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return _cast_array(space.dtype)
    if isinstance(space, spaces.Dict):
        parts = [(k, _action_decoder(s)) for k, s in space.items()]
        return lambda x: {k: f(x[k]) for k, f in parts} if isinstance(x, dict) and set(x) == set(space.spaces) else x
    parts_t = [_action_decoder(s) for s in space]
    return lambda x: (
        tuple(f(v) for f, v in zip(parts_t, x)) if isinstance(x, (tuple, list)) and len(x) == len(parts_t) else x
    )



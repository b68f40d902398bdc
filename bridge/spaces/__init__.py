"""Neutral spaces (numpy only): the values an environment observes and acts with.

Every space has ``shape``, ``dtype``, ``sample(rng)``, ``contains(x)`` (exact dtype, shape and
inclusive bounds), ``mismatch(x, path)`` (why not), ``to_dict()`` and equality by value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bridge.spaces.base import MAX_DEPTH, Space, difference, from_dict
from bridge.spaces.base import _describe as _describe_value  # noqa: F401  (the checker and guard share it)
from bridge.spaces.box import Box, Image
from bridge.spaces.composite import Dict, Tuple
from bridge.spaces.discrete import Discrete, MultiBinary, MultiDiscrete

__all__ = [
    "Space",
    "Box",
    "Image",
    "Discrete",
    "MultiDiscrete",
    "MultiBinary",
    "Dict",
    "Tuple",
    "from_dict",
    "MAX_DEPTH",
    "difference",
    "batch_space",
    "iterate",
    "stack",
]


def batch_space(space: Space, n: int) -> Space:
    """The space of ``n`` stacked values of ``space`` (leading batch axis)."""
    if isinstance(space, Box):
        low = np.broadcast_to(space.low, (n,) + space.shape)
        high = np.broadcast_to(space.high, (n,) + space.shape)
        return Box(low, high, (n,) + space.shape, space.dtype)
    if isinstance(space, Discrete):
        return MultiDiscrete(np.full(n, space.n), np.full(n, space.start))
    if isinstance(space, MultiDiscrete):
        return MultiDiscrete(np.stack([space.nvec] * n), np.stack([space.start] * n))
    if isinstance(space, MultiBinary):
        return MultiBinary((n,) + space.shape)
    if isinstance(space, Dict):
        return Dict([(k, batch_space(s, n)) for k, s in space.items()])
    if isinstance(space, Tuple):
        return Tuple([batch_space(s, n) for s in space])
    raise TypeError(f"batch_space does not know {type(space).__name__}")


def stack(space: Space, values: list[Any]) -> Any:
    """Stack per-env values of ``space`` into one batched value (dicts and tuples recursively)."""
    if isinstance(space, Dict):
        return {k: stack(s, [v[k] for v in values]) for k, s in space.items()}
    if isinstance(space, Tuple):
        return tuple(stack(s, [v[i] for v in values]) for i, s in enumerate(space))
    return np.stack([np.asarray(v, dtype=space.dtype) for v in values])


def iterate(space: Space, batch: Any, index: int) -> Any:
    """Element ``index`` of a batched value of ``space`` (a view where numpy allows)."""
    if isinstance(space, Dict):
        return {k: iterate(s, batch[k], index) for k, s in space.items()}
    if isinstance(space, Tuple):
        return tuple(iterate(s, batch[i], index) for i, s in enumerate(space))
    return batch[index]

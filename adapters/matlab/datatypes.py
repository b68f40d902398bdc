"""MATLAB's numeric classes and sizes: the tables and helpers both spec classes share."""

from __future__ import annotations

from typing import Any, Sequence, Tuple

import numpy as np

from bridge.errors import SpecError, error

__all__ = ["DATA_TYPES", "CLASS_OF", "matlab_size", "same_size", "text_property"]

DATA_TYPES = {
    "double": np.dtype(np.float64),
    "single": np.dtype(np.float32),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "logical": np.dtype(np.bool_),
}
CLASS_OF = {dtype: name for name, dtype in DATA_TYPES.items()}


def matlab_size(shape: Sequence[int]) -> str:
    """MATLAB's way of writing a size: at least two dims, e.g. ``(4,)`` -> ``"[4 1]"``."""
    dims = list(shape) + [1] * max(0, 2 - len(shape))
    return "[" + " ".join(str(int(d)) for d in dims) + "]"


def same_size(shape: Tuple[int, ...], dimension: Tuple[int, ...]) -> bool:
    """MATLAB's size equality: trailing singleton dimensions are implicit (``(4,)`` == ``[4 1]``)."""
    if shape == dimension:
        return True
    longest = max(len(shape), len(dimension))
    return tuple(shape) + (1,) * (longest - len(shape)) == tuple(dimension) + (1,) * (longest - len(dimension))


def text_property(value: Any, owner: str, prop: str) -> str:
    if not isinstance(value, str):
        raise error(SpecError, f"{owner} {prop}", "be a string", value, f'Set e.g. spec.{prop} = "cart position"')
    return value

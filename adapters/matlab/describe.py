"""Any neutral space described as the MATLAB specs a user would write (``getObservationInfo``).

Discrete -> rlFiniteSetSpec of its values; MultiBinary -> logical rlNumericSpec; Box -> rlNumericSpec
of its class (a scalar Box is [1 1]); MultiDiscrete observations -> int64 rlNumericSpec; a Dict or
Tuple observation -> one channel per entry; Tuple(Discrete, Box) action -> the hybrid pair. What
MATLAB cannot express is a ConversionError naming the path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from bridge.adapters.matlab.datatypes import DATA_TYPES
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.specs import _int_bound, rlNumericSpec

from bridge import spaces
from bridge.errors import ConversionError, error

__all__ = ["specs_from_space"]

_BOX_CLASS = {dtype: name for name, dtype in DATA_TYPES.items() if name != "logical"}


def specs_from_space(space: spaces.Space, role: str, path: str = "") -> Any:
    """The MATLAB specs a neutral space reads as; ConversionError for what MATLAB cannot express."""
    if isinstance(space, spaces.Dict) and role == "observation" and not path:
        return [_leaf(s, role, f"[{k!r}]", name=k) for k, s in space.items()]
    if isinstance(space, spaces.Tuple) and not path:
        parts = list(space)
        if role == "action":
            if len(parts) == 2 and isinstance(parts[0], spaces.Discrete) and isinstance(parts[1], spaces.Box):
                return [_leaf(parts[0], role, "[0]"), _leaf(parts[1], role, "[1]")]
            raise error(
                ConversionError,
                f"{role}{path}",
                "be one space, or Tuple(Discrete, Box) for a hybrid action",
                repr(space),
                "MATLAB takes one action channel, or one finite set plus one numeric channel",
            )
        return [_leaf(s, role, f"[{i}]") for i, s in enumerate(parts)]
    return _leaf(space, role, path)


def _leaf(space: spaces.Space, role: str, path: str, name: str = "") -> Any:
    subject = f"{role}{path}"
    if isinstance(space, spaces.Discrete):
        return rlFiniteSetSpec(list(range(space.start, space.start + space.n)), Name=name)
    if isinstance(space, spaces.MultiBinary):
        return rlNumericSpec(list(space.shape), DataType="logical", Name=name)
    if isinstance(space, spaces.Box):
        if space.dtype not in _BOX_CLASS:
            raise error(
                ConversionError,
                subject,
                f"have a dtype MATLAB has a class for ({sorted(d.name for d in _BOX_CLASS)})",
                space.dtype.name,
                "Use float32 or float64",
            )
        _exact_limits(space, subject)
        dims = list(space.shape) or [1, 1]
        return rlNumericSpec(dims, _limit(space.low), _limit(space.high), _BOX_CLASS[space.dtype], Name=name)
    if isinstance(space, spaces.MultiDiscrete) and role == "observation":
        return rlNumericSpec(
            list(space.shape),
            space.start.astype(np.float64),
            (space.start + space.nvec - 1).astype(np.float64),
            "int64",
            Name=name,
        )
    raise error(
        ConversionError,
        subject,
        f"be a space MATLAB can express as one {role} channel (Box, Discrete, MultiBinary)",
        repr(space),
        "Flatten nested spaces into channels, or use Discrete for a discrete action",
    )


def _exact_limits(space: spaces.Box, subject: str) -> None:
    """MATLAB limits are doubles: refuse integer bounds a double cannot hold (beyond 2**53)."""
    if space.dtype.kind not in "iu":
        return
    info = np.iinfo(space.dtype)
    for bound in (space.low, space.high):
        back = _int_bound(bound.astype(np.float64), info)
        if (back != bound).any():
            index = tuple(int(i) for i in np.argwhere(back != bound)[0])
            raise error(
                ConversionError,
                f"{subject}{list(index)}" if index else subject,
                "have integer bounds a MATLAB double limit holds exactly (within +-2**53, or the class's full range)",
                repr(bound[index].item()),
                "Narrow the bounds, or use the class's full range (MATLAB's infinite limits)",
            )


def _limit(bound: np.ndarray) -> Any:
    flat = bound.reshape(-1)
    if flat.size and bool(np.all(flat == flat[0])):
        return float(flat[0])
    return bound.astype(np.float64)

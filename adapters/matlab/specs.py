"""MATLAB's data specifications, ``rlNumericSpec`` and ``rlFiniteSetSpec``, over neutral spaces.

A spec keeps MATLAB's property names (``Dimension``, ``LowerLimit``, ``DataType``, ``Elements``,
``Name``, ``Description``); every property can be set after creation and is validated on set.
``spec.to_space()`` gives the neutral space the exports see:

* ``rlNumericSpec`` -> ``Box`` of shape ``Dimension`` and the dtype of ``DataType``;
  ``DataType="logical"`` -> ``MultiBinary(Dimension)`` (int8 0/1; the facade hands bool arrays
  to the user's functions).
* ``rlFiniteSetSpec`` (in :mod:`.finite_set`) -> ``Discrete(len(Elements))``: the neutral value
  is the element's index.
"""

from __future__ import annotations

import math
from typing import Any, List, Tuple

import numpy as np
from bridge.adapters.matlab.datatypes import DATA_TYPES, matlab_size, same_size, text_property

from bridge import spaces
from bridge.errors import SpecError, error
from bridge.spaces import _describe_value

__all__ = ["rlNumericSpec"]


def _dimension(value: Any) -> Tuple[int, ...]:
    dims = [value] if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value
    try:
        out = tuple(int(d) for d in dims)
        ok = (
            len(out) >= 1
            and all(d >= 1 and d == dd for d, dd in zip(out, dims))
            and not any(isinstance(d, bool) for d in dims)
        )
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise error(
            SpecError,
            "rlNumericSpec Dimension",
            "be a list of positive integers",
            value,
            "Pass e.g. [4, 1] for a column of 4",
        )
    return (out[0], 1) if len(out) == 1 and isinstance(value, (int, np.integer)) else out


def _data_type(value: Any, owner: str) -> str:
    if not isinstance(value, str) or value not in DATA_TYPES:
        raise error(
            SpecError,
            f"{owner} DataType",
            f"be one of {list(DATA_TYPES)}",
            value,
            'Use "double" for float64 and "single" for float32',
        )
    return value


def _limit(value: Any, prop: str, dimension: Tuple[int, ...]) -> Any:
    raw = np.asarray(value)
    if raw.dtype.kind not in "biuf" or raw.size == 0:
        raise error(
            SpecError,
            f"rlNumericSpec {prop}",
            "be a real number or array",
            _describe_value(value),
            "Pass e.g. -10 or np.full([4, 1], -10.0)",
        )
    if np.isnan(raw.astype(np.float64)).any():
        raise error(
            SpecError,
            f"rlNumericSpec {prop}",
            "not contain NaN",
            _describe_value(value),
            "Use -np.inf or np.inf for no limit",
        )
    if raw.size != 1 and not same_size(raw.shape, dimension):
        raise error(
            SpecError,
            f"rlNumericSpec {prop}",
            f"be a scalar or have size {matlab_size(dimension)} (the Dimension)",
            f"size {matlab_size(raw.shape)}",
            "Pass one limit for every element, or a scalar for all",
        )
    if raw.size == 1:
        return float(raw.reshape(()))
    return raw.astype(np.float64).reshape(dimension)


class rlNumericSpec:
    """A continuous (or integer-valued) data channel, MATLAB style.

    Args:
        Dimension: the size, e.g. ``[4, 1]`` for a column of four (an int ``n`` means ``[n, 1]``).
        LowerLimit: scalar or array of size ``Dimension``; ``-inf`` for none.
        UpperLimit: likewise; ``inf`` for none.
        DataType: a MATLAB class name (see :data:`DATA_TYPES`); ``"double"`` by default.
        Name: the channel name (used as the observation key when there are several channels).
        Description: free text.
    """

    def __init__(
        self,
        Dimension: Any,
        LowerLimit: Any = -math.inf,
        UpperLimit: Any = math.inf,
        DataType: str = "double",
        Name: str = "",
        Description: str = "",
    ) -> None:
        self._dimension = _dimension(Dimension)
        self._lower: Any = -math.inf
        self._upper: Any = math.inf
        self.DataType = DataType
        self.LowerLimit = LowerLimit
        self.UpperLimit = UpperLimit
        self.Name = Name
        self.Description = Description

    # -- properties (validated on set, as MATLAB does) -------------------------------------
    @property
    def Dimension(self) -> List[int]:
        return list(self._dimension)

    @Dimension.setter
    def Dimension(self, value: Any) -> None:
        dims = _dimension(value)
        for prop, limit in (("LowerLimit", self._lower), ("UpperLimit", self._upper)):
            if np.ndim(limit) and not same_size(np.shape(limit), dims):
                raise error(
                    SpecError,
                    "rlNumericSpec Dimension",
                    f"match the size of {prop} {matlab_size(np.shape(limit))}",
                    matlab_size(dims),
                    f"Set {prop} to a scalar first",
                )
        self._dimension = dims

    @property
    def LowerLimit(self) -> Any:
        return self._lower

    @LowerLimit.setter
    def LowerLimit(self, value: Any) -> None:
        limit = _limit(value, "LowerLimit", self._dimension)
        self._check_order(limit, self._upper)
        _whole(limit, "LowerLimit", self._data_type)
        self._lower = limit

    @property
    def UpperLimit(self) -> Any:
        return self._upper

    @UpperLimit.setter
    def UpperLimit(self, value: Any) -> None:
        limit = _limit(value, "UpperLimit", self._dimension)
        self._check_order(self._lower, limit)
        _whole(limit, "UpperLimit", self._data_type)
        self._upper = limit

    @property
    def DataType(self) -> str:
        return self._data_type

    @DataType.setter
    def DataType(self, value: str) -> None:
        data_type = _data_type(value, "rlNumericSpec")
        for prop, limit in (("LowerLimit", self._lower), ("UpperLimit", self._upper)):
            _whole(limit, prop, data_type)
        self._data_type = data_type

    @property
    def Name(self) -> str:
        return self._name

    @Name.setter
    def Name(self, value: str) -> None:
        self._name = text_property(value, "rlNumericSpec", "Name")

    @property
    def Description(self) -> str:
        return self._description

    @Description.setter
    def Description(self, value: str) -> None:
        self._description = text_property(value, "rlNumericSpec", "Description")

    def _check_order(self, lower: Any, upper: Any) -> None:
        low, high = np.broadcast_arrays(
            np.atleast_1d(np.asarray(lower, dtype=np.float64)), np.atleast_1d(np.asarray(upper, dtype=np.float64))
        )
        bad = np.argwhere(low > high)
        if bad.size:
            at = tuple(int(i) for i in bad[0])
            raise error(
                SpecError,
                "rlNumericSpec LowerLimit",
                f"be <= UpperLimit ({high[at].item()!r})",
                low[at].item(),
                "Set the limits in order, or swap them",
            )

    # -- neutral view ------------------------------------------------------------------------
    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of ``DataType``."""
        return DATA_TYPES[self._data_type]

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._dimension

    def to_space(self) -> spaces.Space:
        """The neutral space: ``Box`` (integer types clip infinite limits to the type's range) or
        ``MultiBinary`` for ``"logical"``."""
        if self._data_type == "logical":
            return spaces.MultiBinary(list(self._dimension))
        dtype = self.dtype
        low = np.broadcast_to(np.asarray(self._lower, dtype=np.float64), self._dimension)
        high = np.broadcast_to(np.asarray(self._upper, dtype=np.float64), self._dimension)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            # float64 cannot hold int64's extremes exactly; clip in integer space instead
            low = np.where(np.isfinite(low), low, float(info.min))
            high = np.where(np.isfinite(high), high, float(info.max))
            for name, bound in (("LowerLimit", low), ("UpperLimit", high)):
                if (bound < float(info.min)).any() or (bound > float(info.max)).any():
                    raise error(
                        SpecError,
                        f"rlNumericSpec {name}",
                        f"lie within [{info.min}, {info.max}] for DataType {self._data_type!r}",
                        _describe_value(bound),
                        "Use limits the integer class can hold",
                    )
            return spaces.Box(_int_bound(low, info), _int_bound(high, info), self._dimension, dtype)
        return spaces.Box(low.astype(dtype), high.astype(dtype), self._dimension, dtype)

    def _key(self) -> tuple:
        return (
            "rlNumericSpec",
            self._dimension,
            self._data_type,
            self._name,
            self._description,
            np.asarray(self._lower).tolist(),
            np.asarray(self._upper).tolist(),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, rlNumericSpec) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # properties are settable, so equality is by value only

    def __repr__(self) -> str:
        return (
            f"rlNumericSpec(Dimension={self.Dimension}, LowerLimit={_short(self._lower)}, "
            f"UpperLimit={_short(self._upper)}, "
            f"DataType={self._data_type!r}, Name={self._name!r}, Description={self._description!r})"
        )


def _whole(limit: Any, prop: str, data_type: str) -> None:
    """An integer class holds whole limits only: 0.5 for int32 would silently become 0 (a wider range)."""
    if limit is None or DATA_TYPES[data_type].kind not in "iu":
        return
    values = np.asarray(limit, dtype=np.float64).reshape(-1)
    bad = [v for v in values.tolist() if math.isfinite(v) and v != math.floor(v)]
    if bad:
        inward = math.ceil(bad[0]) if prop == "LowerLimit" else math.floor(bad[0])
        raise error(
            SpecError,
            f"rlNumericSpec {prop}",
            f"be a whole number for DataType {data_type!r} (an integer class holds no fraction)",
            bad[0],
            f'Pass {prop}={inward} (the whole limit inside {bad[0]!r}), or DataType="double"',
        )


def _int_bound(bound: np.ndarray, info: Any) -> np.ndarray:
    """Integer bounds without float rounding at the int64/uint64 extremes (float(max) overflows)."""
    values = [info.min if v <= info.min else info.max if v >= info.max else int(v) for v in bound.reshape(-1).tolist()]
    return np.array(values, dtype=info.dtype).reshape(bound.shape)


def _short(limit: Any) -> str:
    return (
        repr(limit)
        if not isinstance(limit, np.ndarray)
        else np.array2string(limit.ravel(), threshold=6, separator=", ")
    )

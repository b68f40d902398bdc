"""MATLAB's data specifications, ``rlNumericSpec`` and ``rlFiniteSetSpec``, over neutral spaces.

A spec keeps MATLAB's property names (``Dimension``, ``LowerLimit``, ``DataType``, ``Elements``,
``Name``, ``Description``); every property can be set after creation and is validated on set.
``spec.to_space()`` gives the neutral space the exports see:

* ``rlNumericSpec`` -> ``Box`` of shape ``Dimension`` and the dtype of ``DataType``;
  ``DataType="logical"`` -> ``MultiBinary(Dimension)`` (int8 0/1; the facade hands bool arrays
  to the user's functions).
* ``rlFiniteSetSpec`` -> ``Discrete(len(Elements))``: the neutral value is the element's index.
"""

from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from bridge import spaces
from bridge.errors import ContractError, SpecError, message
from bridge.spaces import _describe_value

__all__ = ["rlNumericSpec", "rlFiniteSetSpec", "DATA_TYPES", "matlab_size"]

# MATLAB class name -> numpy dtype (the neutral dtype; "logical" is stored as MultiBinary's int8)
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
_CLASS_OF = {dtype: name for name, dtype in DATA_TYPES.items()}


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


def _text(value: Any, owner: str, prop: str) -> str:
    if not isinstance(value, str):
        raise SpecError(message(f"{owner} {prop}", "be a string", value, f'Set e.g. spec.{prop} = "cart position"'))
    return value


def _dimension(value: Any) -> Tuple[int, ...]:
    dims = [value] if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value
    try:
        out = tuple(int(d) for d in dims)
        ok = len(out) >= 1 and all(d >= 1 and d == dd for d, dd in zip(out, dims)) and not any(isinstance(d, bool) for d in dims)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise SpecError(
            message("rlNumericSpec Dimension", "be a list of positive integers", value, "Pass e.g. [4, 1] for a column of 4")
        )
    return (out[0], 1) if len(out) == 1 and isinstance(value, (int, np.integer)) else out


def _data_type(value: Any, owner: str) -> str:
    if not isinstance(value, str) or value not in DATA_TYPES:
        raise SpecError(
            message(
                f"{owner} DataType",
                f"be one of {list(DATA_TYPES)}",
                value,
                'Use "double" for float64 and "single" for float32',
            )
        )
    return value


def _limit(value: Any, prop: str, dimension: Tuple[int, ...]) -> Any:
    raw = np.asarray(value)
    if raw.dtype.kind not in "biuf" or raw.size == 0:
        raise SpecError(message(f"rlNumericSpec {prop}", "be a real number or array", _describe_value(value), "Pass e.g. -10 or np.full([4, 1], -10.0)"))
    if np.isnan(raw.astype(np.float64)).any():
        raise SpecError(message(f"rlNumericSpec {prop}", "not contain NaN", _describe_value(value), "Use -np.inf or np.inf for no limit"))
    if raw.size != 1 and not same_size(raw.shape, dimension):
        raise SpecError(
            message(
                f"rlNumericSpec {prop}",
                f"be a scalar or have size {matlab_size(dimension)} (the Dimension)",
                f"size {matlab_size(raw.shape)}",
                "Pass one limit for every element, or a scalar for all",
            )
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
                raise SpecError(
                    message("rlNumericSpec Dimension", f"match the size of {prop} {matlab_size(np.shape(limit))}", matlab_size(dims), f"Set {prop} to a scalar first")
                )
        self._dimension = dims

    @property
    def LowerLimit(self) -> Any:
        return self._lower

    @LowerLimit.setter
    def LowerLimit(self, value: Any) -> None:
        limit = _limit(value, "LowerLimit", self._dimension)
        self._check_order(limit, self._upper)
        self._lower = limit

    @property
    def UpperLimit(self) -> Any:
        return self._upper

    @UpperLimit.setter
    def UpperLimit(self, value: Any) -> None:
        limit = _limit(value, "UpperLimit", self._dimension)
        self._check_order(self._lower, limit)
        self._upper = limit

    @property
    def DataType(self) -> str:
        return self._data_type

    @DataType.setter
    def DataType(self, value: str) -> None:
        self._data_type = _data_type(value, "rlNumericSpec")

    @property
    def Name(self) -> str:
        return self._name

    @Name.setter
    def Name(self, value: str) -> None:
        self._name = _text(value, "rlNumericSpec", "Name")

    @property
    def Description(self) -> str:
        return self._description

    @Description.setter
    def Description(self, value: str) -> None:
        self._description = _text(value, "rlNumericSpec", "Description")

    def _check_order(self, lower: Any, upper: Any) -> None:
        low, high = np.broadcast_arrays(np.atleast_1d(np.asarray(lower, dtype=np.float64)), np.atleast_1d(np.asarray(upper, dtype=np.float64)))
        bad = np.argwhere(low > high)
        if bad.size:
            at = tuple(int(i) for i in bad[0])
            raise SpecError(
                message("rlNumericSpec LowerLimit", f"be <= UpperLimit ({high[at].item()!r})", low[at].item(), "Set the limits in order, or swap them")
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
                    raise SpecError(
                        message(f"rlNumericSpec {name}", f"lie within [{info.min}, {info.max}] for DataType {self._data_type!r}", _describe_value(bound), "Use limits the integer class can hold")
                    )
            return spaces.Box(_int_bound(low, info), _int_bound(high, info), self._dimension, dtype)
        return spaces.Box(low.astype(dtype), high.astype(dtype), self._dimension, dtype)

    def _key(self) -> tuple:
        return (
            "rlNumericSpec", self._dimension, self._data_type, self._name, self._description,
            np.asarray(self._lower).tolist(), np.asarray(self._upper).tolist(),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, rlNumericSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key()[:4])

    def __repr__(self) -> str:
        return (
            f"rlNumericSpec(Dimension={self.Dimension}, LowerLimit={_short(self._lower)}, UpperLimit={_short(self._upper)}, "
            f"DataType={self._data_type!r}, Name={self._name!r}, Description={self._description!r})"
        )


def _int_bound(bound: np.ndarray, info: Any) -> np.ndarray:
    """Integer bounds without float rounding at the int64/uint64 extremes (float(max) overflows)."""
    values = [info.min if v <= info.min else info.max if v >= info.max else int(v) for v in bound.reshape(-1).tolist()]
    return np.array(values, dtype=info.dtype).reshape(bound.shape)


def _short(limit: Any) -> str:
    return repr(limit) if not isinstance(limit, np.ndarray) else np.array2string(limit.ravel(), threshold=6, separator=", ")


class rlFiniteSetSpec:
    """A channel that takes one of a finite set of values, MATLAB style.

    Args:
        Elements: the allowed values, iterated over the first axis: a list of numbers gives scalar
            elements (``[-10, 10]``), a list of equal-shaped arrays gives array elements.

    The facade hands the element VALUE to the user's functions (as MATLAB does); the neutral
    space is ``Discrete(len(Elements))`` whose value is the element's index (0-based, in the
    order given). :meth:`index` and :meth:`element` convert between the two.
    """

    def __init__(self, Elements: Any, Name: str = "", Description: str = "") -> None:
        self.Elements = Elements
        self.Name = Name
        self.Description = Description

    @property
    def Elements(self) -> List[Any]:
        return [v.item() if v.ndim == 0 else v.copy() for v in self._values]

    @Elements.setter
    def Elements(self, value: Any) -> None:
        self._values, self._data_type = _elements(value)

    @property
    def Name(self) -> str:
        return self._name

    @Name.setter
    def Name(self, value: str) -> None:
        self._name = _text(value, "rlFiniteSetSpec", "Name")

    @property
    def Description(self) -> str:
        return self._description

    @Description.setter
    def Description(self, value: str) -> None:
        self._description = _text(value, "rlFiniteSetSpec", "Description")

    @property
    def DataType(self) -> str:
        """The MATLAB class of the elements (read-only, as in MATLAB)."""
        return self._data_type

    @property
    def Dimension(self) -> List[int]:
        """The size of one element; ``[1, 1]`` for scalar elements."""
        shape = self._values.shape[1:]
        return [1, 1] if not shape else list(shape) + ([1] if len(shape) == 1 else [])

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._values.shape[1:])

    @property
    def dtype(self) -> np.dtype:
        return self._values.dtype

    def to_space(self) -> spaces.Discrete:
        return spaces.Discrete(len(self._values))

    def element(self, index: Any) -> Any:
        """The element at neutral ``index`` (a numpy scalar, or a read-only array)."""
        return self._values[int(index)]

    def elements_at(self, indices: np.ndarray) -> np.ndarray:
        """The elements at a batch of indices, stacked on a leading axis."""
        return self._values[np.asarray(indices)]

    def index(self, value: Any, subject: str = "value") -> int:
        """The neutral index of element ``value``; a ContractError if it is not an element."""
        hits = self._matches(value, subject, batch=False)
        return int(hits[0])

    def indices(self, values: Any, subject: str = "value") -> np.ndarray:
        """The neutral indices (int64) of a batch of element values on a leading axis."""
        return self._matches(values, subject, batch=True)

    def _matches(self, value: Any, subject: str, batch: bool) -> np.ndarray:
        arr = np.asarray(value)
        shape = self.shape
        n = arr.shape[0] if batch and arr.ndim else None
        ok_kind = arr.dtype.kind in "biuf"
        if ok_kind and batch and n is not None:
            ok_kind = same_size(arr.shape[1:], shape) or (not shape and arr.size == n)
            arr = arr.reshape((n,) + shape) if ok_kind else arr
        elif ok_kind and not batch:
            ok_kind = arr.size == max(1, int(np.prod(shape))) and (not shape or same_size(arr.shape, shape))
            arr = arr.reshape((1,) + shape) if ok_kind else arr
        else:
            ok_kind = False
        if ok_kind:
            axes = tuple(range(2, 2 + len(shape)))
            equal = (arr[:, None, ...] == self._values[None, ...])
            equal = equal.all(axis=axes) if axes else equal
            found = equal.any(axis=1)
            if found.all():
                return equal.argmax(axis=1).astype(np.int64)
            bad = int(np.argmin(found))
            shown = arr[bad].item() if arr[bad].ndim == 0 else _describe_value(arr[bad])
            where = f"{subject}[{bad}]" if batch else subject
        else:
            shown, where = _describe_value(value), subject
        raise ContractError(
            message(where, f"be one of the rlFiniteSetSpec Elements {self._shown()}", shown, "Use one of the elements (the set is fixed at creation)")
        )

    def _shown(self) -> str:
        return repr(self.Elements) if not self.shape else f"({len(self._values)} arrays of size {matlab_size(self.shape)})"

    def _key(self) -> tuple:
        return ("rlFiniteSetSpec", self._values.shape, self._values.dtype.str, self._values.tobytes(), self._name, self._description)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, rlFiniteSetSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"rlFiniteSetSpec(Elements={self.Elements!r}, Name={self._name!r}, Description={self._description!r})"


def _elements(value: Any) -> Tuple[np.ndarray, str]:
    listed = isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0)
    items = list(value) if listed else None
    if not items:
        raise SpecError(message("rlFiniteSetSpec Elements", "be a non-empty list of values", _describe_value(value), "Pass e.g. [-10, 10]"))
    arrays = [np.asarray(v) for v in items]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or any(a.dtype.kind not in "biuf" for a in arrays):
        raise SpecError(
            message("rlFiniteSetSpec Elements", "be numbers, or numeric arrays all of one size", _describe_value(value), "Give every element the same size")
        )
    # Python numbers are MATLAB doubles; numpy values keep their class
    explicit = [np.asarray(v).dtype for v in items if isinstance(v, (np.ndarray, np.generic))]
    dtype = explicit[0] if explicit and all(d == explicit[0] for d in explicit) and explicit[0] in _CLASS_OF else np.dtype(np.float64)
    if isinstance(value, np.ndarray) and value.dtype in _CLASS_OF:
        dtype = value.dtype
    values = np.stack(arrays).astype(dtype)
    if not np.array_equal(values.astype(np.float64), np.stack(arrays).astype(np.float64)):
        raise SpecError(message("rlFiniteSetSpec Elements", f"be exactly representable as {_CLASS_OF[dtype]}", _describe_value(value), "Use elements of one numeric class"))
    flat = values.reshape(len(values), -1)
    if len({row.tobytes() for row in flat}) != len(values):
        raise SpecError(message("rlFiniteSetSpec Elements", "be distinct", _describe_value(value), "Remove the repeated element"))
    values.setflags(write=False)
    return values, _CLASS_OF[dtype]


def spec_kind(spec: Any) -> Optional[str]:
    """"numeric", "finite" or None for anything else."""
    if isinstance(spec, rlNumericSpec):
        return "numeric"
    if isinstance(spec, rlFiniteSetSpec):
        return "finite"
    return None

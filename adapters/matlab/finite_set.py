"""``rlFiniteSetSpec``: a channel that takes one of a fixed set of values (MATLAB style).

The facade hands the element VALUE to the user's functions; the neutral space is
``Discrete(len(Elements))`` whose value is the element's 0-based index in the order given.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
from bridge.adapters.matlab.datatypes import CLASS_OF, matlab_size, same_size, text_property

from bridge import spaces
from bridge.errors import ContractError, SpecError, error
from bridge.spaces import _describe_value

__all__ = ["rlFiniteSetSpec"]


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
        self._name = text_property(value, "rlFiniteSetSpec", "Name")

    @property
    def Description(self) -> str:
        return self._description

    @Description.setter
    def Description(self, value: str) -> None:
        self._description = text_property(value, "rlFiniteSetSpec", "Description")

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
        return self._values[indices if type(indices) is np.ndarray else np.asarray(indices)]

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
            equal = arr[:, None, ...] == self._values[None, ...]
            equal = equal.all(axis=axes) if axes else equal
            found = equal.any(axis=1)
            if found.all():
                return equal.argmax(axis=1).astype(np.int64)
            bad = int(np.argmin(found))
            shown = arr[bad].item() if arr[bad].ndim == 0 else _describe_value(arr[bad])
            where = f"{subject}[{bad}]" if batch else subject
        else:
            shown, where = _describe_value(value), subject
        raise error(
            ContractError,
            where,
            f"be one of the rlFiniteSetSpec Elements {self._shown()}",
            shown,
            "Use one of the elements (the set is fixed at creation)",
        )

    def _shown(self) -> str:
        return (
            repr(self.Elements) if not self.shape else f"({len(self._values)} arrays of size {matlab_size(self.shape)})"
        )

    def _key(self) -> tuple:
        return (
            "rlFiniteSetSpec",
            self._values.shape,
            self._values.dtype.str,
            self._values.tobytes(),
            self._name,
            self._description,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, rlFiniteSetSpec) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # properties are settable, so equality is by value only

    def __repr__(self) -> str:
        return f"rlFiniteSetSpec(Elements={self.Elements!r}, Name={self._name!r}, Description={self._description!r})"


def _elements(value: Any) -> Tuple[np.ndarray, str]:
    listed = isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim > 0)
    items = list(value) if listed else None
    if not items:
        raise error(
            SpecError,
            "rlFiniteSetSpec Elements",
            "be a non-empty list of values",
            _describe_value(value),
            "Pass e.g. [-10, 10]",
        )
    arrays = [np.asarray(v) for v in items]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or any(a.dtype.kind not in "biuf" for a in arrays):
        raise error(
            SpecError,
            "rlFiniteSetSpec Elements",
            "be numbers, or numeric arrays all of one size",
            _describe_value(value),
            "Give every element the same size",
        )
    logical = [a.dtype.kind == "b" for a in arrays]
    if any(logical) and not all(logical):
        raise error(
            SpecError,
            "rlFiniteSetSpec Elements",
            "be all logical (True/False) or all numbers (a mix would turn True into 1.0)",
            _describe_value(value),
            "Use [True, False] or [1, 0]",
        )
    # Python numbers are MATLAB doubles, Python bools MATLAB logicals; numpy values keep their class
    explicit = [np.asarray(v).dtype for v in items if isinstance(v, (np.ndarray, np.generic))]
    dtype = (
        explicit[0]
        if explicit and all(d == explicit[0] for d in explicit) and explicit[0] in CLASS_OF
        else np.dtype(np.bool_)
        if all(logical)
        else np.dtype(np.float64)
    )
    if isinstance(value, np.ndarray) and value.dtype in CLASS_OF:
        dtype = value.dtype
    values = np.stack(arrays).astype(dtype)
    if not np.array_equal(values.astype(np.float64), np.stack(arrays).astype(np.float64)):
        raise error(
            SpecError,
            "rlFiniteSetSpec Elements",
            f"be exactly representable as {CLASS_OF[dtype]}",
            _describe_value(value),
            "Use elements of one numeric class",
        )
    # by value, not bytes: 0.0 and -0.0 are one element (they compare equal)
    flat = np.where(values == 0, np.zeros((), values.dtype), values).reshape(len(values), -1)
    if len({row.tobytes() for row in flat}) != len(values):
        raise error(
            SpecError, "rlFiniteSetSpec Elements", "be distinct", _describe_value(value), "Remove the repeated element"
        )
    values.setflags(write=False)
    return values, CLASS_OF[dtype]

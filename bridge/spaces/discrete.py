"""Integer spaces: Discrete, MultiDiscrete and MultiBinary.

Values are int64 (int8 for MultiBinary), so a space whose last value ``start + n - 1`` does not
fit int64 is refused at construction: nothing is ever sampled or compared past the dtype's range.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

import numpy as np

from bridge.errors import SpecError, message
from bridge.spaces import _numbers
from bridge.spaces._memory import check_memory, value_bytes
from bridge.spaces._numbers import INT64_MAX, INT64_MIN
from bridge.spaces.base import Mismatch, Space, _as_int, _Budget, _describe, _field, _masked, _register, _rng


def _is_integer_scalar(x: Any) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    return isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu"


class Discrete(Space):
    """One integer in ``{start, ..., start + n - 1}``, as an int64 scalar."""

    def __init__(self, n: int, start: int = 0) -> None:
        self.n = _as_int(n, "n", "Discrete", 1)
        if self.n > INT64_MAX:  # integers(n) draws int64s; no export holds a larger n either
            fix = "Use a Box of dtype int64 for wider ranges"
            raise SpecError(message("Discrete n", f"be at most {INT64_MAX} (int64)", self.n, fix))
        if not _is_integer_scalar(start):
            raise SpecError(message("Discrete start", "be an integer", start, "Pass e.g. start=0"))
        self.start = int(start)
        if not INT64_MIN <= self.start <= INT64_MAX:
            raise SpecError(
                message(
                    "Discrete start",
                    f"be within [{INT64_MIN}, {INT64_MAX}] (int64)",
                    self.start,
                    "Pass a start that fits int64",
                )
            )
        last = self.start + self.n - 1
        if last > INT64_MAX:
            fix = "Lower start or n: Discrete values are int64"
            raise SpecError(message("Discrete start + n - 1", f"be at most {INT64_MAX} (int64)", last, fix))
        self.shape = ()
        self.dtype = np.dtype(np.int64)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if isinstance(x, np.ma.MaskedArray):
            return _masked(x, path)
        if not _is_integer_scalar(x):
            return (
                path,
                "be an integer scalar",
                _describe(x),
                "Pass a Python int or a numpy integer (floats and bools are refused)",
            )
        if not self.start <= int(x) < self.start + self.n:
            return (
                path,
                f"lie in [{self.start}, {self.start + self.n - 1}]",
                repr(int(x)),
                f"Pick one of the {self.n} values from {self.start}",
            )
        return None

    def sample(self, rng: Optional[np.random.Generator] = None) -> np.int64:
        # the sum in Python ints: start + n - 1 fits int64 (checked), so the result is exact
        return np.int64(self.start + int(_rng(rng, "Discrete").integers(self.n)))

    _param_names = ("n", "start")

    def _params(self) -> tuple:
        return (self.n, self.start)

    def _node_dict(self, children: list) -> dict:
        return {"type": "Discrete", "n": self.n, "start": self.start}

    def __repr__(self) -> str:
        return f"Discrete({self.n})" if self.start == 0 else f"Discrete({self.n}, start={self.start})"


class MultiDiscrete(Space):
    """An int64 array; element ``i`` lies in ``{start[i], ..., start[i] + nvec[i] - 1}``.

    ``nvec`` may have any number of dimensions; the array has ``nvec``'s shape.
    """

    def __init__(self, nvec: Any, start: Any = None) -> None:
        raw = _numbers.user_array(nvec)
        self.shape = tuple(raw.shape)
        self.dtype = np.dtype(np.int64)
        check_memory("MultiDiscrete", self.shape, self.dtype, self._memory(), "its arrays, a value and its checks take")
        found = _integers(raw, 1, INT64_MAX) if raw.ndim and raw.size else (None, None, "empty")
        if found[2] == "range" and _numbers.python_number(found[1]) >= 1:
            subject = _numbers.where("MultiDiscrete nvec", raw, found[0])
            got = _numbers.shown(found[1])
            fix = "Use smaller entries: MultiDiscrete values are int64"
            raise SpecError(message(subject, f"be at most {INT64_MAX} (int64)", got, fix))
        if found[2] is not None:
            raise SpecError(
                message(
                    "MultiDiscrete nvec",
                    "be a non-empty integer array with every entry >= 1",
                    nvec,
                    "Pass e.g. MultiDiscrete([3, 4])",
                )
            )
        self.nvec = raw.astype(np.int64)
        starts = np.zeros_like(self.nvec) if start is None else _numbers.user_array(start)
        found = _integers(starts, INT64_MIN, INT64_MAX) if starts.shape == self.nvec.shape else (None, None, "shape")
        if found[2] == "range":
            subject = _numbers.where("MultiDiscrete start", starts, found[0])
            expectation = f"be within [{INT64_MIN}, {INT64_MAX}] (int64)"
            raise SpecError(message(subject, expectation, _numbers.shown(found[1]), "Pass starts that fit int64"))
        if found[2] is not None:
            raise SpecError(
                message(
                    "MultiDiscrete start",
                    f"be an integer array of shape {self.nvec.shape}",
                    start,
                    "Pass one start per entry of nvec, or None for zeros",
                )
            )
        self.start = starts.astype(np.int64)
        # start + (nvec - 1) cannot overflow where start <= INT64_MAX - (nvec - 1), which cannot either
        over = np.argwhere(self.start > INT64_MAX - (self.nvec - 1))
        if over.size:
            index = tuple(int(i) for i in over[0])
            last = int(self.start[index]) + int(self.nvec[index]) - 1
            subject = f"MultiDiscrete start{list(index)} + nvec{list(index)} - 1"
            fix = "Lower start or nvec: MultiDiscrete values are int64"
            raise SpecError(message(subject, f"be at most {INT64_MAX} (int64)", last, fix))
        self._last = self.start + (self.nvec - 1)
        for arr in (self.nvec, self.start, self._last):
            arr.setflags(write=False)

    def _memory(self) -> int:
        return value_bytes("MultiDiscrete", self.shape, self.dtype)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if type(x) is not np.ndarray and isinstance(x, np.ma.MaskedArray):
            return _masked(x, path)
        if not isinstance(x, np.ndarray):
            return (path, f"be an int64 array of shape {self.shape}", _describe(x), "Use np.asarray(x, dtype=np.int64)")
        if x.shape != self.shape:
            return (path, f"have shape {self.shape}", f"shape {x.shape}", f"Reshape it to {self.shape}")
        if x.dtype != self.dtype:
            return (path, "have dtype int64", f"dtype {x.dtype}", "Cast it with .astype(np.int64)")
        inside = (x >= self.start) & (x <= self._last)  # never start + nvec: it may not fit int64
        if not inside.all():
            index = tuple(int(i) for i in np.argwhere(~inside)[0])
            return (
                f"{path}{list(index)}",
                f"lie in [{int(self.start[index])}, {int(self._last[index])}]",
                repr(int(x[index])),
                "Pick values inside nvec",
            )
        return None

    def sample(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        return self.start + _rng(rng, "MultiDiscrete").integers(self.nvec, dtype=np.int64)

    _param_names = ("nvec", "start")

    def _params(self) -> tuple:
        return (self.nvec, self.start)

    def _node_dict(self, children: list) -> dict:
        return {
            "type": "MultiDiscrete",
            "nvec": self.nvec.tolist(),
            "start": self.start.tolist(),
        }

    def __repr__(self) -> str:
        text = f"MultiDiscrete({self.nvec.tolist()}"
        return text + (f", start={self.start.tolist()})" if self.start.any() else ")")


def _integers(raw: np.ndarray, low: int, high: int) -> tuple:
    """``(index, value, problem)`` of the first entry that is no integer in ``[low, high]``;
    ``problem`` is None when all are. Floats are refused even when whole (as before)."""
    if raw.dtype.kind not in "iuO":
        return None, None, "kind"
    if raw.dtype.kind != "O" and not _numbers.any_int_problem(raw, low, high):
        return None, None, None

    def bad(x: Any) -> Optional[str]:
        whole = isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
        return _numbers.int_problem(x, low, high) if whole else "kind"

    found = _numbers.first(raw, bad)
    return found if found is not None else (None, None, None)


class MultiBinary(Space):
    """An int8 array of 0s and 1s; ``n`` is its length or its shape."""

    def __init__(self, n: Union[int, Sequence[int]]) -> None:
        dims = list(n) if isinstance(n, (list, tuple, np.ndarray)) else [n]
        if not dims:
            raise SpecError(message("MultiBinary n", "be non-empty", n, "Pass e.g. MultiBinary(4)"))
        self.shape = tuple(_as_int(d, "n", "MultiBinary", 1) for d in dims)
        self.n = self.shape[0] if len(self.shape) == 1 and not isinstance(n, (list, tuple)) else self.shape
        self.dtype = np.dtype(np.int8)
        check_memory("MultiBinary", self.shape, self.dtype, self._memory(), "a value and its checks take")

    def _memory(self) -> int:
        return value_bytes("MultiBinary", self.shape, self.dtype)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if type(x) is not np.ndarray and isinstance(x, np.ma.MaskedArray):
            return _masked(x, path)
        if not isinstance(x, np.ndarray):
            return (path, f"be an int8 array of shape {self.shape}", _describe(x), "Use np.asarray(x, dtype=np.int8)")
        if x.shape != self.shape:
            return (path, f"have shape {self.shape}", f"shape {x.shape}", f"Reshape it to {self.shape}")
        if x.dtype != self.dtype:
            return (path, "have dtype int8", f"dtype {x.dtype}", "Cast it with .astype(np.int8)")
        bad = (x != 0) & (x != 1)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{path}{list(index)}", "be 0 or 1", repr(int(x[index])), "Pass only 0s and 1s")
        return None

    def sample(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        return _rng(rng, "MultiBinary").integers(0, 2, size=self.shape, dtype=np.int8)

    def _params(self) -> tuple:
        return (self.shape,)

    def _node_dict(self, children: list) -> dict:
        return {"type": "MultiBinary", "n": list(self.shape)}

    def __repr__(self) -> str:
        return f"MultiBinary({self.shape[0] if len(self.shape) == 1 else list(self.shape)})"


def _is_int(v: Any) -> bool:
    return type(v) is int


def _is_int_list(v: Any) -> bool:
    """A (nested) JSON list of ints, checked without recursion."""
    stack: List[Any] = [v]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif type(item) is not int:
            return False
    return isinstance(v, list)


def _load_discrete(d: dict, where: str, children: list, budget: _Budget) -> Discrete:
    n = _field(d, "n", where, "an int >= 1", _is_int)
    return Discrete(n, _field(d, "start", where, "an int", _is_int) if "start" in d else 0)


def _load_multi_discrete(d: dict, where: str, children: list, budget: _Budget) -> MultiDiscrete:
    nvec = _field(d, "nvec", where, "a (nested) list of ints", _is_int_list)
    start = _field(d, "start", where, "a (nested) list of ints", _is_int_list)
    return MultiDiscrete(_numbers.user_array(nvec), _numbers.user_array(start))


def _load_multi_binary(d: dict, where: str, children: list, budget: _Budget) -> MultiBinary:
    dims = _field(d, "n", where, "a non-empty list of ints >= 1", lambda v: isinstance(v, list) and v != [])
    return MultiBinary(dims if len(dims) > 1 else dims[0])


_register("Discrete", _load_discrete)
_register("MultiDiscrete", _load_multi_discrete)
_register("MultiBinary", _load_multi_binary)

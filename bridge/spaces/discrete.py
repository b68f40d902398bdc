"""Integer spaces: Discrete, MultiDiscrete and MultiBinary."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from bridge.errors import SpecError, message
from bridge.spaces.base import Mismatch, Space, _as_int, _describe, _register, _rng


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
        if not _is_integer_scalar(start):
            raise SpecError(message("Discrete start", "be an integer", start, "Pass e.g. start=0"))
        self.start = int(start)
        self.shape = ()
        self.dtype = np.dtype(np.int64)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
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
        return np.int64(self.start + _rng(rng).integers(self.n))

    def _params(self) -> tuple:
        return (self.n, self.start)

    def to_dict(self) -> dict:
        return {"type": "Discrete", "n": self.n, "start": self.start}

    def __repr__(self) -> str:
        return f"Discrete({self.n})" if self.start == 0 else f"Discrete({self.n}, start={self.start})"


class MultiDiscrete(Space):
    """An int64 array; element ``i`` lies in ``{start[i], ..., start[i] + nvec[i] - 1}``.

    ``nvec`` may have any number of dimensions; the array has ``nvec``'s shape.
    """

    def __init__(self, nvec: Any, start: Any = None) -> None:
        raw = np.asarray(nvec)
        if raw.ndim == 0 or raw.size == 0 or raw.dtype.kind not in "iu" or (raw < 1).any():
            raise SpecError(
                message(
                    "MultiDiscrete nvec",
                    "be a non-empty integer array with every entry >= 1",
                    nvec,
                    "Pass e.g. MultiDiscrete([3, 4])",
                )
            )
        self.nvec = raw.astype(np.int64)
        starts = np.zeros_like(self.nvec) if start is None else np.asarray(start)
        if starts.dtype.kind not in "iu" or starts.shape != self.nvec.shape:
            raise SpecError(
                message(
                    "MultiDiscrete start",
                    f"be an integer array of shape {self.nvec.shape}",
                    start,
                    "Pass one start per entry of nvec, or None for zeros",
                )
            )
        self.start = starts.astype(np.int64)
        for arr in (self.nvec, self.start):
            arr.setflags(write=False)
        self.shape = tuple(self.nvec.shape)
        self.dtype = np.dtype(np.int64)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if not isinstance(x, np.ndarray):
            return (path, f"be an int64 array of shape {self.shape}", _describe(x), "Use np.asarray(x, dtype=np.int64)")
        if x.shape != self.shape:
            return (path, f"have shape {self.shape}", f"shape {x.shape}", f"Reshape it to {self.shape}")
        if x.dtype != self.dtype:
            return (path, "have dtype int64", f"dtype {x.dtype}", "Cast it with .astype(np.int64)")
        inside = (x >= self.start) & (x < self.start + self.nvec)
        if not inside.all():
            index = tuple(int(i) for i in np.argwhere(~inside)[0])
            low = int(self.start[index])
            return (
                f"{path}{list(index)}",
                f"lie in [{low}, {low + int(self.nvec[index]) - 1}]",
                repr(int(x[index])),
                "Pick values inside nvec",
            )
        return None

    def sample(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        return self.start + _rng(rng).integers(self.nvec, dtype=np.int64)

    def _params(self) -> tuple:
        return (self.nvec, self.start)

    def to_dict(self) -> dict:
        return {
            "type": "MultiDiscrete",
            "nvec": self.nvec.tolist(),
            "start": self.start.tolist(),
        }

    def __repr__(self) -> str:
        text = f"MultiDiscrete({self.nvec.tolist()}"
        return text + (f", start={self.start.tolist()})" if self.start.any() else ")")


class MultiBinary(Space):
    """An int8 array of 0s and 1s; ``n`` is its length or its shape."""

    def __init__(self, n: Union[int, Sequence[int]]) -> None:
        dims = list(n) if isinstance(n, (list, tuple, np.ndarray)) else [n]
        if not dims:
            raise SpecError(message("MultiBinary n", "be non-empty", n, "Pass e.g. MultiBinary(4)"))
        self.shape = tuple(_as_int(d, "n", "MultiBinary", 1) for d in dims)
        self.n = self.shape[0] if len(self.shape) == 1 and not isinstance(n, (list, tuple)) else self.shape
        self.dtype = np.dtype(np.int8)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
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
        return _rng(rng).integers(0, 2, size=self.shape, dtype=np.int8)

    def _params(self) -> tuple:
        return (self.shape,)

    def to_dict(self) -> dict:
        return {"type": "MultiBinary", "n": list(self.shape)}

    def __repr__(self) -> str:
        return f"MultiBinary({self.shape[0] if len(self.shape) == 1 else list(self.shape)})"


_register("Discrete", lambda d: Discrete(d["n"], d.get("start", 0)))
_register("MultiDiscrete", lambda d: MultiDiscrete(np.array(d["nvec"]), np.array(d["start"])))
_register("MultiBinary", lambda d: MultiBinary(d["n"] if len(d["n"]) > 1 else d["n"][0]))

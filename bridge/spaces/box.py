"""Box and Image: arrays of numbers inside per-element bounds."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from bridge.errors import SpecError, message
from bridge.spaces.base import Mismatch, Space, _describe, _register, _rng

Bound = Union[float, int, Sequence[Any], np.ndarray]


class Box(Space):
    """An array of ``shape`` and ``dtype`` with inclusive per-element bounds.

    Args:
        low: lower bound, a scalar or an array broadcastable to ``shape``.
        high: upper bound, likewise. Infinite bounds are allowed for float dtypes only.
        shape: the array shape; inferred from array bounds, ``(1,)`` for two scalars.
        dtype: a numpy float, signed or unsigned integer dtype (use MultiBinary for bools).
    """

    def __init__(
        self,
        low: Bound,
        high: Bound,
        shape: Optional[Sequence[int]] = None,
        dtype: Any = np.float32,
    ) -> None:
        self.dtype = _box_dtype(dtype)
        self.shape = _box_shape(low, high, shape)
        self.low = _bound("low", low, self.shape, self.dtype)
        self.high = _bound("high", high, self.shape, self.dtype)
        bad = np.argwhere(self.low > self.high)
        if bad.size:
            index = tuple(int(i) for i in bad[0])
            raise SpecError(
                message(
                    f"Box low{list(index)}",
                    f"be <= high{list(index)} ({self.high[index].item()!r})",
                    self.low[index].item(),
                    "Swap or fix the bounds",
                )
            )
        self._finite_low = np.isfinite(self.low)
        self._finite_high = np.isfinite(self.high)

    # -- queries -----------------------------------------------------------------------------
    def is_bounded(self, manner: str = "both") -> bool:
        """True when every element is bounded "below", "above" or on "both" sides."""
        below, above = bool(self._finite_low.all()), bool(self._finite_high.all())
        return {"both": below and above, "below": below, "above": above}[manner]

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if not isinstance(x, (np.ndarray, np.generic)):
            return (
                path,
                f"be a numpy array of shape {self.shape} and dtype {self.dtype}",
                _describe(x),
                f"Return np.asarray(value, dtype=np.{self.dtype})",
            )
        if x.shape != self.shape:
            return (path, f"have shape {self.shape}", f"shape {x.shape}", f"Reshape it to {self.shape}")
        if x.dtype != self.dtype:
            return (
                path,
                f"have dtype {self.dtype}",
                f"dtype {x.dtype}",
                f"Cast it with .astype(np.{self.dtype})",
            )
        inside = (x >= self.low) & (x <= self.high)
        if not inside.all():
            index = tuple(int(i) for i in np.argwhere(~inside)[0])
            where = f"{path}{list(index)}" if index else path
            return (
                where,
                f"lie in [{self.low[index].item()!r}, {self.high[index].item()!r}]",
                repr(x[index].item()),
                "Clip it into the bounds or widen the space (NaN is never inside)",
            )
        return None

    def contains(self, x: Any) -> bool:
        return (
            isinstance(x, (np.ndarray, np.generic))
            and x.shape == self.shape
            and x.dtype == self.dtype
            and bool(np.all(x >= self.low))
            and bool(np.all(x <= self.high))
        )

    def sample(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        rng = _rng(rng)
        if self.dtype.kind in "iu":
            # the scalar type, not the dtype: numpy 1.19 calls it for shape () (TypeError otherwise)
            return rng.integers(self.low, self.high, endpoint=True, dtype=self.dtype.type)
        low, high = self.low.astype(np.float64), self.high.astype(np.float64)
        both = self._finite_low & self._finite_high
        only_low = self._finite_low & ~self._finite_high
        only_high = ~self._finite_low & self._finite_high
        neither = ~self._finite_low & ~self._finite_high
        out = np.empty(self.shape, dtype=np.float64)
        u = rng.random(size=int(both.sum()))
        # low*(1-u) + high*u stays finite even when high - low overflows float64
        out[both] = low[both] * (1.0 - u) + high[both] * u
        out[only_low] = low[only_low] + rng.exponential(size=int(only_low.sum()))
        out[only_high] = high[only_high] - rng.exponential(size=int(only_high.sum()))
        out[neither] = rng.normal(size=int(neither.sum()))
        return np.clip(out.astype(self.dtype), self.low, self.high)

    # -- identity ----------------------------------------------------------------------------
    def _params(self) -> tuple:
        return (self.shape, self.dtype, self.low, self.high)

    def to_dict(self) -> dict:
        return {
            "type": "Box",
            "low": _encode(self.low),
            "high": _encode(self.high),
            "shape": list(self.shape),
            "dtype": self.dtype.name,
        }

    def __repr__(self) -> str:
        return f"Box({_short(self.low)}, {_short(self.high)}, {self.shape}, {self.dtype.name})"


class Image(Box):
    """A uint8 image in HWC layout with values in [0, 255].

    The layout is declared, never guessed: exports transpose to CHW (SB3) or keep HWC (DreamerV2).
    """

    layout = "HWC"

    def __init__(self, height: int, width: int, channels: int = 3) -> None:
        from bridge.spaces.base import _as_int

        self.height = _as_int(height, "height", "Image", 1)
        self.width = _as_int(width, "width", "Image", 1)
        self.channels = _as_int(channels, "channels", "Image", 1)
        super().__init__(0, 255, (self.height, self.width, self.channels), np.uint8)

    def to_dict(self) -> dict:
        return {"type": "Image", "height": self.height, "width": self.width, "channels": self.channels}

    def __repr__(self) -> str:
        return f"Image({self.height}, {self.width}, {self.channels})"


def _box_dtype(dtype: Any) -> np.dtype:
    try:
        resolved = np.dtype(dtype)
    except TypeError as e:
        raise SpecError(message("Box dtype", "be a numpy numeric dtype", dtype, "Pass e.g. np.float32")) from e
    if resolved.kind not in "fiu":
        fix = "Use MultiBinary for booleans" if resolved.kind == "b" else "Pass e.g. np.float32"
        raise SpecError(message("Box dtype", "be a float or integer dtype", resolved.name, fix))
    return resolved


def _box_shape(low: Bound, high: Bound, shape: Optional[Sequence[int]]) -> Tuple[int, ...]:
    if shape is not None:
        try:
            out = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else [shape]))
        except (TypeError, ValueError):
            out = ()
            ok = False
        else:
            ok = all(s >= 0 for s in out)
        if not ok:
            raise SpecError(message("Box shape", "be a tuple of non-negative ints", shape, "Pass e.g. shape=(4,)"))
        return out
    for bound in (low, high):
        if np.ndim(bound) > 0:
            return tuple(np.shape(bound))
    return (1,)


def _bound(name: str, value: Bound, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    raw = np.asarray(value)
    if raw.dtype.kind not in "fiub":
        raise SpecError(message(f"Box {name}", "be numeric", value, "Pass numbers or numpy arrays"))
    if raw.ndim and raw.shape != shape:
        try:
            np.broadcast_to(raw, shape)
        except ValueError:
            pass
        else:
            raw = np.broadcast_to(raw, shape)
        if raw.shape != shape:
            raise SpecError(message(f"Box {name}", f"have shape {shape}", f"shape {raw.shape}", "Match shape"))
    wide = np.broadcast_to(raw.astype(np.float64), shape)
    if np.isnan(wide).any():
        raise SpecError(message(f"Box {name}", "not contain NaN", value, "Use -np.inf/np.inf"))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not (np.isfinite(wide).all() and (wide >= info.min).all() and (wide <= info.max).all()):
            raise SpecError(
                message(
                    f"Box {name}",
                    f"be finite and within [{info.min}, {info.max}] for dtype {dtype.name}",
                    value,
                    f"Use np.iinfo(np.{dtype.name}).min/.max for an unbounded integer Box",
                )
            )
    out = np.array(np.broadcast_to(raw, shape), dtype=dtype)
    out.setflags(write=False)
    return out


def _encode_scalar(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "inf" if v > 0 else "-inf"
    return v


def _encode(arr: np.ndarray) -> Any:
    flat = arr.ravel()
    if flat.size and bool(np.all(flat == flat[0])):
        return _encode_scalar(flat[0].item())
    return [_encode_scalar(v) for v in flat.tolist()]


def _decode(value: Any, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    def one(v: Any) -> Any:
        return float(v) if isinstance(v, str) else v

    if isinstance(value, list):
        flat = np.array([one(v) for v in value], dtype=dtype)
        return flat.reshape(shape)
    return np.full(shape, one(value), dtype=dtype)


def _short(arr: np.ndarray) -> str:
    flat = arr.ravel()
    if flat.size and bool(np.all(flat == flat[0])):
        return repr(flat[0].item())
    return np.array2string(arr, threshold=6, edgeitems=2, separator=", ")


def _load_box(d: dict) -> Box:
    shape = tuple(d["shape"])
    dtype = np.dtype(d["dtype"])
    return Box(_decode(d["low"], shape, dtype), _decode(d["high"], shape, dtype), shape, dtype)


_register("Box", _load_box)
_register("Image", lambda d: Image(d["height"], d["width"], d["channels"]))

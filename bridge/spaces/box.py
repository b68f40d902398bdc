"""Box and Image: arrays of numbers inside per-element bounds."""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from bridge.errors import SpecError, message
from bridge.spaces import _numbers
from bridge.spaces._memory import box_bytes, check_memory
from bridge.spaces.base import Mismatch, Space, _as_int, _Budget, _describe, _field, _masked, _register, _rng

Bound = Union[float, int, Sequence[Any], np.ndarray]
_MAX_NDIM = 32  # numpy 1.19's limit; numpy 2 allows 64


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
        raw_low, raw_high = _numbers.user_array(low), _numbers.user_array(high)
        self.shape = _box_shape(raw_low, raw_high, shape)
        # before any array of that shape
        check_memory(type(self).__name__, self.shape, self.dtype, self._memory(), "building its bounds takes")
        # exact checks against the dtype, each naming the bound and element the user wrote
        self.low = _bound("low", low, raw_low, self.shape, self.dtype)
        self.high = _bound("high", high, raw_high, self.shape, self.dtype)
        if self.dtype.kind == "f":  # the bounds as written: 1.0000000001 > 1.0 even if float32 says equal
            written_low, written_high = _written(raw_low, self.shape), _written(raw_high, self.shape)
        else:
            written_low, written_high = self.low, self.high
        bad = np.argwhere((written_low > written_high) | (self.low > self.high))
        if bad.size:
            index = tuple(int(i) for i in bad[0])
            if written_low[index] > written_high[index]:
                expectation, fix = f"be <= high{list(index)} ({written_high[index].item()!r})", "Swap or fix the bounds"
            else:  # inward rounding crossed: no value of the dtype lies between them
                expectation = (
                    f"leave a {self.dtype.name} value <= high{list(index)} ({written_high[index].item()!r}) "
                    f"(rounded inward they are {self.low[index].item()!r} > {self.high[index].item()!r})"
                )
                fix = "Widen the bounds, or use a wider float dtype"
            raise SpecError(message(f"Box low{list(index)}", expectation, written_low[index].item(), fix))
        if self.dtype.kind == "f":
            _announce(self.low, self.high, written_low, written_high, self.dtype)
        self._finite_low = np.isfinite(self.low)
        self._finite_high = np.isfinite(self.high)

    # -- queries -----------------------------------------------------------------------------
    def is_bounded(self, manner: str = "both") -> bool:
        """True when every element is bounded "below", "above" or on "both" sides."""
        below, above = bool(self._finite_low.all()), bool(self._finite_high.all())
        return {"both": below and above, "below": below, "above": above}[manner]

    def _memory(self) -> int:
        return box_bytes(self.shape, self.dtype)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if type(x) is not np.ndarray and isinstance(x, np.ma.MaskedArray):
            return _masked(x, path)
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
            and not isinstance(x, np.ma.MaskedArray)  # its comparisons skip the masked values
            and x.shape == self.shape
            and x.dtype == self.dtype
            and bool(np.all(x >= self.low))
            and bool(np.all(x <= self.high))
        )

    def sample(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        rng = _rng(rng, "Box")
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
    _param_names = ("shape", "dtype", "low", "high")

    def _params(self) -> tuple:
        return (self.shape, self.dtype, self.low, self.high)

    def _node_dict(self, children: list) -> dict:
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
        self.height = _as_int(height, "height", "Image", 1)
        self.width = _as_int(width, "width", "Image", 1)
        self.channels = _as_int(channels, "channels", "Image", 1)
        super().__init__(0, 255, (self.height, self.width, self.channels), np.uint8)

    def _node_dict(self, children: list) -> dict:
        return {"type": "Image", "height": self.height, "width": self.width, "channels": self.channels}

    def __repr__(self) -> str:
        return f"Image({self.height}, {self.width}, {self.channels})"


def _box_dtype(dtype: Any) -> np.dtype:
    try:
        resolved = np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise SpecError(message("Box dtype", "be a numpy numeric dtype", dtype, "Pass e.g. np.float32")) from e
    if resolved.kind not in "fiu":
        fix = "Use MultiBinary for booleans" if resolved.kind == "b" else "Pass e.g. np.float32"
        raise SpecError(message("Box dtype", "be a float or integer dtype", resolved.name, fix))
    if resolved.itemsize > 8:  # longdouble: no Python float holds its bounds exactly
        expectation = "be float16, float32, float64 or an integer dtype"
        raise SpecError(message("Box dtype", expectation, resolved.name, "Use np.float64"))
    return resolved


def _box_shape(low: np.ndarray, high: np.ndarray, shape: Optional[Sequence[int]]) -> Tuple[int, ...]:
    if shape is not None:
        dims = list(shape) if isinstance(shape, (tuple, list)) else [shape]
        whole = [isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) for d in dims]
        if not all(whole) or any(d < 0 for d in dims) or len(dims) > _MAX_NDIM:
            expectation = f"be a tuple of at most {_MAX_NDIM} non-negative ints"
            raise SpecError(message("Box shape", expectation, shape, "Pass e.g. shape=(4,)"))
        return tuple(int(d) for d in dims)
    for bound in (low, high):
        if bound.ndim > 0:
            return tuple(bound.shape)
    return (1,)


def _bound(name: str, value: Bound, raw: np.ndarray, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The bound as a read-only ``dtype`` array, or a SpecError naming the element the user wrote."""
    if raw.dtype.kind not in "fiubO":
        raise SpecError(message(f"Box {name}", "be numeric", value, "Pass numbers or numpy arrays"))
    if raw.ndim and raw.shape != shape:
        try:
            raw = np.broadcast_to(raw, shape)
        except ValueError:
            raise SpecError(
                message(f"Box {name}", f"have shape {shape}", f"shape {raw.shape}", "Match shape")
            ) from None
    if dtype.kind == "f":
        wrong = np.inf if name == "low" else -np.inf  # a low of +inf (a high of -inf) leaves no finite value
        bad = raw.dtype.kind == "O" or _numbers.any_float_problem(raw, dtype, wrong)
        found = _numbers.first(raw, lambda x: _numbers.float_problem(x, dtype, wrong)) if bad else None
    else:
        info = np.iinfo(dtype)
        low, high = int(info.min), int(info.max)
        bad = raw.dtype.kind == "O" or _numbers.any_int_problem(raw, low, high)
        found = _numbers.first(raw, lambda x: _numbers.int_problem(x, low, high)) if bad else None
    if found is not None:
        _refuse(name, value, raw, dtype, *found)
    with np.errstate(over="ignore", invalid="ignore"):  # checked above: only in-range rounding is left
        out = np.array(np.broadcast_to(raw, shape), dtype=dtype)
    if dtype.kind == "f":
        out = _inward(name, out, _written(raw, shape), dtype)
    out.setflags(write=False)
    return out


def _written(raw: np.ndarray, shape: Tuple[int, ...]) -> np.ndarray:
    """A float bound as the user wrote it, in float64 (exact for Python floats and float64 arrays)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array(np.broadcast_to(raw, shape), dtype=np.float64)


def _inward(name: str, out: np.ndarray, written: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``out`` with every bound that the cast rounded outward moved one step inward.

    A bound the dtype cannot hold exactly is never widened: a low rounds up, a high down, so the
    space never contains a value outside the bounds written (float32 -0.1 is below -0.1; float16
    1e-8 would be 0.0). :func:`_announce` says so when the move matters.
    """
    with np.errstate(invalid="ignore"):
        outward = (out < written) if name == "low" else (out > written)
    if outward.any():
        toward = np.array(np.inf if name == "low" else -np.inf, dtype=dtype)
        out = np.where(outward, np.nextafter(out, toward), out).astype(dtype)
    return out


def _announce(low: np.ndarray, high: np.ndarray, written_low: np.ndarray, written_high: np.ndarray, dtype: np.dtype):
    """A UserWarning for each of low and high whose rounding moved an element past the dtype's precision.

    One rule for every float dtype: a move larger than ``eps`` times the smaller of the bound's
    magnitude and the box's width (as written) is announced. So a bound in the subnormal range
    (float16 1e-8, float32 1e-50) is, and so is a box narrower than the dtype can resolve
    (float32 [0.99999999, 1.0] becomes [1.0, 1.0]); float32 -0.1 rounded to -0.099999994 is not.
    """
    eps = np.finfo(dtype).eps
    with np.errstate(invalid="ignore", over="ignore"):
        width = written_high - written_low
        for name, out, written in (("low", low, written_low), ("high", high, written_high)):
            scale = np.minimum(np.abs(written), width)
            moved = np.abs(out.astype(np.float64) - written) > eps * scale
            if moved.any():
                import warnings

                index = tuple(int(i) for i in np.argwhere(moved)[0])
                warnings.warn(
                    f"Box {name}{list(index)} {written[index].item()!r} is not a {dtype.name} value; "
                    f"rounded inward to {out[index].item()!r} (never widened). Pass a bound {dtype.name} can hold "
                    "to silence this.",
                    UserWarning,
                    stacklevel=3,
                )


def _refuse(name: str, value: Any, raw: np.ndarray, dtype: np.dtype, index: tuple, x: Any, problem: str) -> None:
    subject = _numbers.where(f"Box {name}", raw, index)
    got = _numbers.shown(x)
    if problem == "number":
        raise SpecError(message(subject, "be numeric", got, "Pass numbers or numpy arrays"))
    if problem == "nan":
        raise SpecError(message(subject, "not contain NaN", got, "Use -np.inf/np.inf"))
    if problem == "infinity":
        side = "-np.inf" if name == "low" else "np.inf"
        raise SpecError(message(subject, f"be finite or {side}", got, f"Use {side} for an unbounded side"))
    if problem == "overflow":
        biggest = float(np.finfo(dtype).max)
        raise SpecError(
            message(
                subject,
                f"be an infinity or a finite value {dtype.name} can hold (magnitude at most {biggest!r})",
                got,
                f"Use np.inf/-np.inf for an unbounded side, or np.finfo(np.{dtype.name}).max/.min",
            )
        )
    info = np.iinfo(dtype)
    if problem == "whole":
        raise SpecError(
            message(subject, f"be a whole number for dtype {dtype.name}", got, "Round it, or use a float dtype")
        )
    raise SpecError(
        message(
            subject,
            f"be finite and within [{info.min}, {info.max}] for dtype {dtype.name}",
            got,
            f"Use np.iinfo(np.{dtype.name}).min/.max for an unbounded integer Box",
        )
    )


def _encode_scalar(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "inf" if v > 0 else "-inf"
    return v


def _encode(arr: np.ndarray) -> Any:
    flat = arr.ravel()
    if flat.size and bool(np.all(flat == flat[0])):
        return _encode_scalar(flat[0].item())
    return [_encode_scalar(v) for v in flat.tolist()]


def _short(arr: np.ndarray) -> str:
    flat = arr.ravel()
    if flat.size and bool(np.all(flat == flat[0])):
        return repr(flat[0].item())
    return np.array2string(arr, threshold=6, edgeitems=2, separator=", ")


def _load_box(d: dict, where: str, children: list, budget: _Budget) -> Box:
    dims = _field(d, "shape", where, "a list of non-negative ints", _is_shape)
    dtype = _field(d, "dtype", where, "a numpy dtype name such as 'float32'", lambda v: isinstance(v, str))
    resolved = _box_dtype(dtype)
    size = math.prod(dims)
    budget.take(2 * size * resolved.itemsize, where)
    bounds = []
    for key in ("low", "high"):
        expectation = f"a number, 'inf', '-inf' or a list of {size} of them"
        value = _field(d, key, where, expectation, lambda v: _is_bound(v, size))
        if isinstance(value, list):
            value = np.array([_decode_scalar(v) for v in value], dtype=object).reshape(dims)
        bounds.append(_decode_scalar(value))
    return Box(bounds[0], bounds[1], tuple(dims), resolved)


def _load_image(d: dict, where: str, children: list, budget: _Budget) -> Image:
    sizes = [_field(d, k, where, "an int >= 1", _is_count) for k in ("height", "width", "channels")]
    budget.take(2 * math.prod(sizes), where)
    return Image(*sizes)


def _is_count(v: Any) -> bool:
    return type(v) is int and v >= 1


def _is_shape(v: Any) -> bool:
    return isinstance(v, list) and len(v) <= _MAX_NDIM and all(type(d) is int and d >= 0 for d in v)


def _is_scalar(v: Any) -> bool:
    return v in ("inf", "-inf") if isinstance(v, str) else type(v) in (int, float)


def _is_bound(v: Any, size: int) -> bool:
    return all(_is_scalar(x) for x in v) and len(v) == size if isinstance(v, list) else _is_scalar(v)


def _decode_scalar(v: Any) -> Any:
    return float(v) if isinstance(v, str) else v


_register("Box", _load_box)
_register("Image", _load_image)

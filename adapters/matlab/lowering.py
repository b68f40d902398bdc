"""The facade's boundary: user functions, their outputs, and MATLAB values <-> neutral values.

Every converter is built once per env (closures over precomputed shapes, dtypes and limits) and
refuses, with the house sentence, any value that would need a lossy conversion.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
from bridge.adapters.matlab.datatypes import CLASS_OF, matlab_size, same_size
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.specs import rlNumericSpec

from bridge.errors import ContractError, SpecError, message
from bridge.spaces import Box, _describe_value

Encoder = Callable[[Any, str], Any]


def fail(subject: str, expectation: str, actual: Any, fix: str, kind: type = ContractError) -> Exception:
    """The house error, with its four parts kept for the check report (``error.parts``)."""
    error = kind(message(subject, expectation, actual, fix))
    error.parts = (subject, expectation, actual if isinstance(actual, str) else repr(actual), fix)  # type: ignore[attr-defined]
    return error


# -- user functions ------------------------------------------------------------------------------
def resolve_function(fcn: Any, prop: str) -> Callable[..., Any]:
    """A callable (lambda, function, ``functools.partial``) or a ``"module:function"`` string."""
    if callable(fcn):
        return fcn
    if isinstance(fcn, str) and fcn.count(":") == 1:
        module, name = fcn.split(":")
        try:
            found = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as e:
            raise fail(
                prop,
                'name an importable function as "module:function"',
                fcn,
                f"Check the module and function names ({type(e).__name__}: {e})",
                SpecError,
            ) from e
        if callable(found):
            return found
    raise fail(
        prop,
        'be a callable or a "module:function" string',
        _describe_value(fcn),
        "Pass e.g. my_step, functools.partial(my_step, params=p) or 'mypkg.cartpole:step'",
        SpecError,
    )


def accepts_rng(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` has a parameter named ``rng`` (it then receives ``env.np_random``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return any(p.name == "rng" and p.kind in kinds for p in params)


def outputs(out: Any, fcn: str, names: Sequence[str]) -> tuple:
    """Check that a user function returned ``len(names)`` outputs (a Python tuple)."""
    if isinstance(out, tuple) and len(out) == len(names):
        return out
    count = f"{len(out)} outputs" if isinstance(out, tuple) else f"1 output ({type(out).__name__})"
    snake = ", ".join(_snake(n) for n in names)
    raise fail(fcn, f"return {len(names)} outputs ({', '.join(names)})", count, f"End it with: return {snake}")


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


# -- observations (and actions given as MATLAB values) --------------------------------------------
def numeric_encoder(spec: rlNumericSpec, batch: Optional[int] = None) -> Encoder:
    """MATLAB value -> neutral array of the spec's dtype and shape (a leading axis of ``batch``)."""
    dtype, shape = spec.dtype, tuple(spec.shape)
    want = shape if batch is None else (batch,) + shape
    logical = spec.DataType == "logical"
    neutral = np.dtype(np.int8) if logical else dtype
    space = spec.to_space()
    low = high = None
    if isinstance(space, Box) and (
        np.isfinite(np.asarray(spec.LowerLimit)).any() or np.isfinite(np.asarray(spec.UpperLimit)).any()
    ):
        low, high = space.low, space.high

    def encode(value: Any, subject: str) -> np.ndarray:
        if type(value) is np.ndarray and value.dtype == dtype and value.shape == want:
            arr = value.astype(neutral)  # a copy: the user's buffer may change later
        else:
            arr = _lossless(value, spec, subject, want, batch).astype(neutral)
        if low is not None:
            inside = (arr >= low) & (arr <= high)
            if not inside.all():
                at = tuple(int(i) for i in np.argwhere(~inside)[0])
                cell = at[1:] if batch is not None else at
                raise fail(
                    f"{subject}{list(at)}",
                    f"lie in [LowerLimit, UpperLimit] = [{low[cell].item()!r}, {high[cell].item()!r}]",
                    repr(arr[at].item()),
                    "Keep the value inside the spec's limits, or widen them",
                )
        return arr

    return encode


def _lossless(value: Any, spec: rlNumericSpec, subject: str, want: Tuple[int, ...], batch: Optional[int]) -> np.ndarray:
    dtype = spec.dtype
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else np.asarray(value, dtype=object)
    if arr.dtype.kind not in "biuf":
        raise fail(
            subject,
            f"be a numeric array of DataType {spec.DataType!r}",
            _describe_value(value),
            f"Return np.asarray(value, dtype=np.{dtype.name})",
        )
    shape = tuple(spec.shape)
    fits = (
        same_size(arr.shape, want)
        if batch is None
        else (arr.ndim >= 1 and arr.shape[0] == batch and same_size(arr.shape[1:], shape))
    )
    if not fits:
        size = matlab_size(shape) if batch is None else f"[{batch} x {matlab_size(shape)}] (NumEnv x Dimension)"
        got = matlab_size(arr.shape) if batch is None else str(list(arr.shape))
        each = " per instance" if batch is not None else ""
        raise fail(
            subject,
            f"have size {size}",
            f"size {got}",
            f"Return {int(np.prod(shape))} values{each} shaped {matlab_size(shape)} (the spec's Dimension)",
        )
    arr = arr.reshape(want)
    if arr.dtype == dtype:
        return arr
    with np.errstate(invalid="ignore", over="ignore"):
        cast = arr.astype(dtype)
        if dtype.kind == "b":
            same = (arr == 0) | (arr == 1)
        else:
            back = cast.astype(arr.dtype)
            same = (
                (back == arr) | (np.isnan(arr) & np.isnan(back))
                if arr.dtype.kind == "f" and dtype.kind == "f"
                else back == arr
            )
    if not same.all():
        bad = arr[~same].reshape(-1)[0].item()
        source = CLASS_OF.get(arr.dtype, arr.dtype.name)
        raise fail(
            subject,
            f"have DataType {spec.DataType!r} (numpy {dtype.name}) or values it holds exactly",
            f"{source} ({arr.dtype.name}) value {bad!r}",
            f"Return np.{dtype.name} values from your function (e.g. np.asarray(x, dtype=np.{dtype.name}))",
        )
    return cast


def finite_encoder(spec: rlFiniteSetSpec, batch: Optional[int] = None) -> Encoder:
    """MATLAB element value -> neutral index (np.int64), or an int64 array of indices."""
    if batch is None:
        return lambda value, subject: np.int64(spec.index(value, subject))
    return lambda values, subject: spec.indices(values, subject)


def spec_encoder(spec: Any, batch: Optional[int] = None) -> Encoder:
    return finite_encoder(spec, batch) if isinstance(spec, rlFiniteSetSpec) else numeric_encoder(spec, batch)


def channels_encoder(specs: List[Any], keys: Optional[List[str]], batch: Optional[int] = None) -> Encoder:
    """One observation value (or a list, one per channel) -> the neutral observation."""
    parts = [spec_encoder(s, batch) for s in specs]
    if keys is None:
        return parts[0]
    n = len(parts)

    def encode(value: Any, subject: str) -> dict:
        if not isinstance(value, (list, tuple)) or len(value) != n:
            got = f"{len(value)} values" if isinstance(value, (list, tuple)) else _describe_value(value)
            raise fail(
                subject,
                f"be a list of {n} channel values (one per observation spec)",
                got,
                "Return [channel1, channel2, ...] in the order of observationInfo",
            )
        return {key: part(v, f"{subject}{{{i + 1}}}") for i, (key, part, v) in enumerate(zip(keys, parts, value))}

    return encode


def spec_decoder(spec: Any, batch: bool = False) -> Callable[[Any], Any]:
    """Neutral value -> the MATLAB value the user's functions see."""
    if isinstance(spec, rlFiniteSetSpec):
        return spec.elements_at if batch else spec.element
    if spec.DataType == "logical":
        return lambda x: np.asarray(x).astype(bool)
    return lambda x: x


def channels_decoder(specs: List[Any], keys: Optional[List[str]], batch: bool = False) -> Callable[[Any], Any]:
    parts = [spec_decoder(s, batch) for s in specs]
    if keys is None:
        return parts[0]
    return lambda obs: [part(obs[key]) for key, part in zip(keys, parts)]


def action_decoder(specs: List[Any], batch: bool = False) -> Callable[[Any], Any]:
    """Neutral action -> MATLAB action (a hybrid action becomes ``[element, array]``)."""
    parts = [spec_decoder(s, batch) for s in specs]
    if len(parts) == 1:
        return parts[0]
    first, second = parts
    return lambda action: [first(action[0]), second(action[1])]


def action_encoder(specs: List[Any]) -> Encoder:
    """MATLAB action -> neutral action (used by ``sim`` for callable policies)."""
    parts = [spec_encoder(s) for s in specs]
    if len(parts) == 1:
        return parts[0]

    def encode(value: Any, subject: str) -> tuple:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise fail(
                subject,
                "be [discrete element, continuous array] (a hybrid action)",
                _describe_value(value),
                "Return a list of the two action channels",
            )
        return (parts[0](value[0], f"{subject}{{1}}"), parts[1](value[1], f"{subject}{{2}}"))

    return encode


# -- reward and IsDone ---------------------------------------------------------------------------
def to_reward(value: Any, subject: str = "StepFcn output Reward") -> float:
    """A real numeric scalar (MATLAB 1x1) -> Python float."""
    if type(value) is float:
        return value
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return float(value.reshape(()))
    raise fail(subject, "be a real numeric scalar", _describe_value(value), "Return one number, e.g. float(reward)")


def to_done(value: Any, subject: str = "StepFcn output IsDone") -> bool:
    """A scalar logical (True/False, or integer 0/1) -> Python bool."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if (
        isinstance(value, (int, np.integer, np.ndarray))
        and np.size(value) == 1
        and np.asarray(value).dtype.kind in "biu"
    ):
        flag = np.asarray(value).reshape(()).item()
        if flag in (0, 1):
            return bool(flag)
    raise fail(
        subject,
        "be a scalar logical (True or False; 0 or 1 also accepted)",
        _describe_value(value),
        "Return one logical, e.g. bool(abs(x) > 2.4)",
    )


def to_rewards(value: Any, n: int, subject: str = "StepFcn output Reward") -> np.ndarray:
    """A batch of ``n`` rewards -> float64 array of shape (n,)."""
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if arr is None or arr.dtype.kind not in "iuf" or not same_size(arr.shape, (n,)):
        raise fail(
            subject,
            f"be {n} real numbers (one per instance)",
            _describe_value(value),
            "Return an array of shape (NumEnv,)",
        )
    return arr.reshape(n).astype(np.float64)


def to_dones(value: Any, n: int, subject: str = "StepFcn output IsDone") -> np.ndarray:
    """A batch of ``n`` logicals -> bool array of shape (n,)."""
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    ok = arr is not None and arr.dtype.kind in "biu" and same_size(arr.shape, (n,))
    if ok and arr.dtype.kind != "b":
        ok = bool(((arr == 0) | (arr == 1)).all())
    if not ok:
        raise fail(
            subject,
            f"be {n} logicals (one per instance)",
            _describe_value(value),
            "Return a bool array of shape (NumEnv,)",
        )
    return arr.reshape(n).astype(bool)

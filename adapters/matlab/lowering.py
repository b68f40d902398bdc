"""The MATLAB lowering: neutral values <-> the MATLAB values of the specs (the facade's boundary).

``encode`` is neutral -> MATLAB (what a step function or a MATLAB policy receives: finite-set
element values, a list of channels, logical arrays), ``decode`` MATLAB -> neutral (what the
facade makes of a user's output or a policy's action), refusing with the house sentence any value
that would need a lossy conversion. Every converter is built once per env, over precomputed shapes,
dtypes and limits. :func:`lower` gives the lowering of any env: an rlFunctionEnv through its own
specs, any other env through the specs ``getObservationInfo`` / ``getActionInfo`` describe.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np
from bridge.adapters._shared.lowering import Lowering
from bridge.adapters.matlab.datatypes import CLASS_OF, matlab_size, same_size
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.specs import rlNumericSpec

from bridge.errors import BridgeError, ContractError, error
from bridge.spaces import Box, _describe_value
from bridge.spaces.base import Mismatch

__all__ = [
    "MatlabLowering",
    "specs_lowering",
    "channels_decoder",
    "channels_encoder",
    "action_decoder",
    "action_encoder",
    "numeric_decoder",
    "finite_decoder",
    "finite_encoder",
]

Decoder = Callable[[Any, str], Any]  # (MATLAB value, what it is called in errors) -> neutral value


class MatlabLowering(Lowering):
    """A lowering whose decode can name what it converts (``convert(y, subject)``).

    ``space`` is the neutral space of the MATLAB values (what the specs hold), ``specs`` the specs
    themselves (one spec, or a list of channels), as ``getObservationInfo`` returns them.
    """

    __slots__ = ("specs", "convert")

    def __init__(
        self, source: Any, space: Any, specs: Any, encode: Callable[[Any], Any], convert: Decoder, role: str
    ) -> None:
        self.specs, self.convert = specs, convert

        def invalid(y: Any, path: str) -> Optional[Mismatch]:
            try:
                convert(y, path)
            except BridgeError as e:
                return e.parts
            return None

        super().__init__(source, space, encode, lambda y: convert(y, role), invalid)


def specs_lowering(source: Any, specs: List[Any], keys: Optional[List[str]], role: str) -> MatlabLowering:
    """The lowering of the facade's neutral ``source`` space onto ``specs`` (one per channel).

    ``keys`` name the channels of a several-channel observation (None: one channel, or an action:
    one spec, or [rlFiniteSetSpec, rlNumericSpec] for a hybrid).
    """
    shown = specs if len(specs) > 1 else specs[0]
    if role == "action":
        return MatlabLowering(source, source, shown, action_encoder(specs), action_decoder(specs), role)
    return MatlabLowering(source, source, shown, channels_encoder(specs, keys), channels_decoder(specs, keys), role)


def numeric_decoder(spec: rlNumericSpec, batch: Optional[int] = None) -> Decoder:
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

    same = neutral == dtype
    ndarray = np.ndarray

    def encode(value: Any, subject: str) -> np.ndarray:
        # builtin dtypes are singletons: `is` is the cheap test (an equal non-canonical dtype takes
        # the general path); copy(), not astype(): +0.35k instr/step, 0.6 % of the rlFunctionEnv
        # cart-pole step (benchmarks/bench_matlab.py --instructions); under 1 %, kept with the batched
        # shortcuts (see vector_env.step_envs)
        if type(value) is ndarray and value.dtype is dtype and value.shape == want:
            arr = value.copy() if same else value.astype(neutral)  # a copy: the user's buffer may change later
        else:
            arr = _lossless(value, spec, subject, want, batch).astype(neutral)
        if low is not None:
            inside = (arr >= low) & (arr <= high)
            if not inside.all():
                at = tuple(int(i) for i in np.argwhere(~inside)[0])
                cell = at[1:] if batch is not None else at
                raise error(
                    ContractError,
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
        raise error(
            ContractError,
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
        raise error(
            ContractError,
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
        raise error(
            ContractError,
            subject,
            f"have DataType {spec.DataType!r} (numpy {dtype.name}) or values it holds exactly",
            f"{source} ({arr.dtype.name}) value {bad!r}",
            f"Return np.{dtype.name} values from your function (e.g. np.asarray(x, dtype=np.{dtype.name}))",
        )
    return cast


def finite_encoder(spec: rlFiniteSetSpec) -> Callable[[Any], Any]:
    """Neutral index -> element value, by one lookup in a table built once (the elements are
    immutable: numpy scalars or read-only arrays); any other index takes ``spec.element``."""
    table = {i: spec.element(i) for i in range(spec.to_space().n)}

    def element(index: Any) -> Any:
        try:
            return table[index]  # int, np.integer and equal numbers hash alike
        except (KeyError, TypeError):
            return spec.element(index)

    return element


def finite_decoder(spec: rlFiniteSetSpec, batch: Optional[int] = None) -> Decoder:
    """MATLAB element value -> neutral index (np.int64), or an int64 array of indices."""
    if batch is None:
        return lambda value, subject: np.int64(spec.index(value, subject))
    return lambda values, subject: spec.indices(values, subject)


def _matlab_to_neutral(spec: Any, batch: Optional[int] = None) -> Decoder:
    return finite_decoder(spec, batch) if isinstance(spec, rlFiniteSetSpec) else numeric_decoder(spec, batch)


def channels_decoder(specs: List[Any], keys: Optional[List[str]], batch: Optional[int] = None) -> Decoder:
    """One observation value (or a list, one per channel) -> the neutral observation."""
    parts = [_matlab_to_neutral(s, batch) for s in specs]
    if keys is None:
        return parts[0]
    n = len(parts)

    def encode(value: Any, subject: str) -> dict:
        if not isinstance(value, (list, tuple)) or len(value) != n:
            got = f"{len(value)} values" if isinstance(value, (list, tuple)) else _describe_value(value)
            raise error(
                ContractError,
                subject,
                f"be a list of {n} channel values (one per observation spec)",
                got,
                "Return [channel1, channel2, ...] in the order of observationInfo",
            )
        return {key: part(v, f"{subject}{{{i + 1}}}") for i, (key, part, v) in enumerate(zip(keys, parts, value))}

    return encode


def _neutral_to_matlab(spec: Any, batch: bool = False) -> Callable[[Any], Any]:
    """Neutral value -> the MATLAB value the user's functions see."""
    if isinstance(spec, rlFiniteSetSpec):
        return spec.elements_at if batch else finite_encoder(spec)
    if spec.DataType == "logical":
        return lambda x: np.asarray(x).astype(bool)
    return lambda x: x


def channels_encoder(specs: List[Any], keys: Optional[List[str]], batch: bool = False) -> Callable[[Any], Any]:
    parts = [_neutral_to_matlab(s, batch) for s in specs]
    if keys is None:
        return parts[0]
    return lambda obs: [part(obs[key]) for key, part in zip(keys, parts)]


def action_encoder(specs: List[Any], batch: bool = False) -> Callable[[Any], Any]:
    """Neutral action -> MATLAB action (a hybrid action becomes ``[element, array]``)."""
    parts = [_neutral_to_matlab(s, batch) for s in specs]
    if len(parts) == 1:
        return parts[0]
    first, second = parts
    return lambda action: [first(action[0]), second(action[1])]


def action_decoder(specs: List[Any]) -> Decoder:
    """MATLAB action -> neutral action (used by ``sim`` for callable policies)."""
    parts = [_matlab_to_neutral(s) for s in specs]
    if len(parts) == 1:
        return parts[0]

    def encode(value: Any, subject: str) -> tuple:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise error(
                ContractError,
                subject,
                "be [discrete element, continuous array] (a hybrid action)",
                _describe_value(value),
                "Return a list of the two action channels",
            )
        return (parts[0](value[0], f"{subject}{{1}}"), parts[1](value[1], f"{subject}{{2}}"))

    return encode

"""Dreamer-ready action lowering: what DreamerV2 2.2.0's agent emits -> the neutral action.

DreamerV2's agent acts on ``act_space["action"]`` only:

* Discrete(n, start) -> Discrete(n) (OneHotAction in front), offset back by ``start``;
* MultiDiscrete / MultiBinary -> one Discrete over the product when that is <= 1024 values;
* float Box with finite bounds -> the same bounds (NormalizeAction maps [-1, 1] onto them); an
  infinite bound needs ``action_bounds=(low, high)``; integer Box refused. An n-D or scalar Box
  (MATLAB's ``rlNumericSpec([1 1])``) is presented flat, shape ``(size,)``: DreamerV2's world model
  concatenates the previous action on the last axis, so it takes rank-1 actions only (reshaped
  back exactly on decode);
* Dict -> only as ``Dict(action=...)``; Tuple or other Dicts (hybrid actions) refused.
"""

from __future__ import annotations

import itertools
from typing import Any, Optional, Tuple

import numpy as np
from bridge.adapters._shared.lowering import Fn, Lowering, discrete_table
from bridge.adapters.gym.loader import load_gym

from bridge import spaces
from bridge.errors import ContractError, ConversionError, SpecError, error
from bridge.spaces.base import Mismatch, _describe

gym = load_gym("the DreamerV2 export")

MAX_JOINT_ACTIONS = 1024
# NormalizeAction's float32 affine map may overshoot a bound by rounding; within this many float32
# epsilons of the bounds' magnitude a value is snapped onto the bound, beyond it is invalid.
SNAP_EPSILONS = 8


class ActionLowering(Lowering):
    """Neutral action space -> one gym Discrete or float32 Box, with ``decode`` back to neutral.

    ``decode`` also validates (cheap, precomputed, fused with the decode) unless
    ``check_actions=False``: an invalid action raises :class:`~bridge.errors.ContractError` before
    the env is touched. ``bounds`` is the (low, high) that -1 and 1 map onto (Box actions only).
    A plain Discrete action has the shared :attr:`table`, so the guard decodes an int index by one
    lookup, as for every export.
    """

    __slots__ = ("principal_key", "discrete", "bounds", "_unchecked")

    def __init__(self, space: spaces.Space, action_bounds: Any = None, check_actions: bool = True) -> None:
        inner, self.principal_key = space, None
        if isinstance(space, spaces.Dict):
            if list(space.keys()) != ["action"]:
                raise error(
                    ConversionError,
                    "action",
                    "be a Dict with the single principal key 'action' (DreamerV2's agent acts only on "
                    "act_space['action'])",
                    f"keys {list(space.keys())}",
                    "Put the whole action under 'action', e.g. Dict(action=Box(...)), and split it in the env",
                )
            inner, self.principal_key = space["action"], "action"
        path = "action['action']" if self.principal_key else "action"
        target, checked, self.discrete = _lower_action(inner, path, action_bounds, True)
        unchecked = _lower_action(inner, path, action_bounds, False)[1]
        encode = _action_encoder(inner)
        key = self.principal_key
        if key is not None:
            encode, checked, unchecked = _principal(key, encode, checked, unchecked)
        self._unchecked = unchecked
        self.bounds = getattr(checked, "bounds", None)

        def invalid(a: Any, where: str) -> Optional[Mismatch]:
            try:
                checked(a)
            except ContractError as e:
                return e.parts
            return None

        table = discrete_table(inner.n, inner.start) if type(inner) is spaces.Discrete and key is None else None
        super().__init__(space, target, encode, checked if check_actions else unchecked, invalid, table=table)

    def preparer(self, check: bool = True, path: str = "action") -> Fn:
        """The fused check-and-decode (one pass over the action), or the bare decode."""
        return self.decode if check else self._unchecked


class ChainActions:
    """The outermost link of the ``to_dreamerv2`` chain: the action checked before DreamerV2 sees it.

    DreamerV2's own classes take whatever comes: ``OneHotAction`` argmaxes a one-hot of any length
    (``[0, 1]`` on a Discrete(3) became index 1) and indexes into a scalar or 2-D one
    (``IndexError``), ``NormalizeAction`` rescales with numpy (a list is a ``TypeError``, a wrong
    shape a broadcast ``ValueError``, strings a ``UFuncTypeError``). Here the action's type (a dict
    whose ``'action'`` is a numeric numpy array), shape and, for one-hot actions, exact one-hotness
    (one 1, the rest 0) are checked first, in DreamerV2's terms; values inside [-1, 1] are the
    Dreamer-ready env's check, after NormalizeAction. Everything else is read through to the chain.
    """

    def __init__(self, env: Any, lowering: ActionLowering) -> None:
        self._env = env
        self._discrete = lowering.discrete
        self._size = int(lowering.space.n) if lowering.discrete else int(lowering.space.shape[0])
        self._shape = (self._size,)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never forward private names (copy and pickle probe them first)
            raise AttributeError(name)
        return getattr(self._env, name)

    def step(self, action: Any) -> Any:
        problem = self.problem(action)
        if problem is not None:
            raise error(ContractError, *problem)
        return self._env.step(action)

    def reset(self) -> Any:
        return self._env.reset()

    def problem(self, action: Any) -> Optional[Mismatch]:
        """Why DreamerV2's chain cannot take ``action``, as message parts, or None."""
        if type(action) is not dict or "action" not in action:
            fix = "Pass {'action': value}, as DreamerV2's agent does"
            return "the DreamerV2 chain's action", "be a dict with the key 'action'", _describe(action), fix
        a, size = action["action"], self._size
        if self._discrete:
            ok = type(a) is np.ndarray and a.shape == self._shape and a.dtype.kind in "biuf"
            if ok:
                values = a.tolist()
                ok = values.count(1) == 1 and values.count(0) == size - 1
            if ok:
                return None
            expectation = f"be a one-hot numpy array of shape {self._shape} (one 1, every other value 0)"
            fix = f"Send np.eye({size}, dtype=np.float32)[index] for an index in [0, {size - 1}]"
        else:
            if type(a) is np.ndarray and a.shape == self._shape and a.dtype.kind in "iuf":
                return None
            expectation = (
                f"be a float numpy array of shape {self._shape} (NormalizeAction maps [-1, 1] onto the bounds)"
            )
            fix = "Send np.asarray(value, dtype=np.float32) with one value per dimension"
        return "the DreamerV2 chain's action['action']", expectation, _describe(a), fix


def _principal(key: str, encode: Fn, checked: Fn, unchecked: Fn) -> Tuple[Fn, Fn, Fn]:
    """The three functions of an action that sits under ``Dict(action=...)``."""
    return (lambda a: encode(a[key])), (lambda a: {key: checked(a)}), (lambda a: {key: unchecked(a)})


def _hybrid(space: spaces.Space, path: str) -> Exception:
    return error(
        ConversionError,
        path,
        "be one Discrete, MultiDiscrete, MultiBinary or float Box (DreamerV2's actor outputs "
        "one distribution: one-hot or continuous)",
        repr(space),
        "Split a hybrid action: discretize the continuous part into a MultiDiscrete, or make "
        "the discrete part a Box the env thresholds",
    )


def _lower_action(space: spaces.Space, path: str, bounds: Any, check: bool) -> Tuple[Any, Fn, bool]:
    if isinstance(space, spaces.Discrete):
        start = space.start
        # always np.int64 (the neutral Discrete's type), whatever integer type the agent sent
        make = lambda i: np.int64(start + i)  # noqa: E731
        return gym.spaces.Discrete(space.n), _index_decoder(space.n, path, check, make), True
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        if isinstance(space, spaces.MultiBinary):
            nvec, start, dtype = np.full(space.shape, 2, np.int64), np.zeros(space.shape, np.int64), np.int8
        else:
            nvec, start, dtype = space.nvec, space.start, np.int64
        joint = int(np.prod(nvec.astype(object)))
        if joint > MAX_JOINT_ACTIONS:
            raise error(
                ConversionError,
                path,
                f"have at most {MAX_JOINT_ACTIONS} joint values to become one DreamerV2 one-hot action",
                f"{joint} ({space!r})",
                "Use fewer values per entry, split the action across steps, or use a float Box",
            )
        table = np.array(list(itertools.product(*[range(int(n)) for n in nvec.reshape(-1)])), np.int64) + start.reshape(
            -1
        )
        table = table.reshape((joint,) + space.shape).astype(dtype)
        # a fresh array each step: the env may keep or mutate the one it gets
        copy = lambda i: table[i].copy()  # noqa: E731
        return gym.spaces.Discrete(joint), _index_decoder(joint, path, check, copy), True
    if isinstance(space, spaces.Box):
        return _lower_box_action(space, path, bounds, check)
    raise _hybrid(space, path)


_INDEX_TYPES = frozenset([int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64])


def _index_decoder(n: int, path: str, check: bool, make: Fn) -> Fn:
    """Index -> neutral action ``make(i)``, for any integer type (the guard's table lookup serves
    a Python int or np.int64 Discrete index first).

    Validation is a type-set probe, then Python int comparisons.
    """

    def refuse_index(a: Any) -> None:
        raise error(
            ContractError,
            f"the Dreamer-ready {path}",
            f"be an integer index in [0, {n - 1}]",
            _describe(a),
            "Send a one-hot through DreamerV2's OneHotAction, or an int index to this env",
        )

    def decode(a: Any) -> Any:
        if type(a) not in _INDEX_TYPES:
            if not (isinstance(a, np.ndarray) and a.shape == () and a.dtype.kind in "iu"):
                if check:
                    refuse_index(a)
                return make(int(a))
            a = a[()]
        i = int(a)  # exact: a is of an integer type
        if 0 <= i < n:
            return make(i)
        if check:
            refuse_index(a)
        return make(i)

    return decode


def _lower_box_action(space: spaces.Box, path: str, bounds: Any, check: bool) -> Tuple[Any, Fn, bool]:
    if space.dtype.kind != "f":
        raise error(
            ConversionError,
            path,
            "be a float Box (DreamerV2's NormalizeAction emits floats)",
            f"dtype {space.dtype.name}",
            "Use Discrete or MultiDiscrete for integer actions, or a float Box rounded in the env",
        )
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    if bounds is not None:
        low, high = _user_bounds(space, bounds)
    finite = np.isfinite(low) & np.isfinite(high)
    if not finite.all():  # (argwhere of a 0-d array is empty: test .all(), then locate)
        index = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise error(
            ConversionError,
            f"{path}{list(index)}" if index else path,
            "have finite bounds for DreamerV2's NormalizeAction (it passes unbounded dims through unscaled)",
            f"[{low[index]!r}, {high[index]!r}]",
            "Pass action_bounds=(low, high) with the finite range the policy should cover, or declare finite bounds",
        )
    with np.errstate(over="ignore", invalid="ignore"):  # NormalizeAction scales in float32
        span = high.astype(np.float32) - low.astype(np.float32)
    if not np.isfinite(span).all():  # it would pass these dims through unscaled, or scale them to inf
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(span))[0])
        at = f"{list(index)}" if index else ""
        expectation = (
            "have a range float32 holds (DreamerV2's NormalizeAction scales in float32: high - low at most "
            f"{float(np.finfo(np.float32).max)!r})"
        )
        fix = "Pass action_bounds=(low, high) with the finite range the policy should cover"
        kind, subject = (SpecError, f"action_bounds{at}") if bounds is not None else (ConversionError, f"{path}{at}")
        raise error(kind, subject, expectation, f"[{low[index]!r}, {high[index]!r}]", fix)
    dtype, shape = space.dtype, space.shape
    flat = (int(np.prod(shape)),)
    # relative to the bounds' magnitude (the size of NormalizeAction's float32 rounding error), so a
    # tiny Box such as [0, 1e-6] keeps its interior instead of snapping every action onto a bound
    magnitude = np.maximum(np.abs(low), np.abs(high))
    tol = SNAP_EPSILONS * np.finfo(np.float32).eps * np.maximum(magnitude, np.finfo(np.float32).tiny)
    low_t, high_t = low.astype(dtype), high.astype(dtype)
    box = gym.spaces.Box(low.astype(np.float32).reshape(-1), high.astype(np.float32).reshape(-1), flat, np.float32)

    inner_low, inner_high = (low + tol).astype(dtype), (high - tol).astype(dtype)
    # small 1-D actions: Python comparisons over .tolist(), not numpy calls (NaN fails them too):
    # 8.0k instructions a decode against 28.2k: -20k instr/step, ~5 % of the DreamerV2 PointMass chain
    # (the decode alone under callgrind, over the chain of benchmarks/bench_dreamerv2.py --instructions)
    small = list(zip(inner_low.tolist(), inner_high.tolist())) if len(shape) == 1 and shape[0] <= 16 else None
    ndarray = np.ndarray

    def decode(a: Any, sent: Any = None) -> np.ndarray:
        # fast path: clearly inside the bounds (what NormalizeAction sends), in the neutral dtype
        if type(a) is ndarray and (a.dtype is dtype or a.dtype == dtype) and a.shape == shape:
            if small is not None:
                for v, (low_v, high_v) in zip(a.tolist(), small):
                    if not low_v < v < high_v:
                        break
                else:
                    return a
            elif (a > inner_low).all() and (a < inner_high).all():
                return a
        x = np.asarray(a, dtype=np.float64)
        if check and (x.shape != shape or not (np.all(x >= low - tol) and np.all(x <= high + tol))):
            found = space.mismatch(np.asarray(a), "action") if x.shape != shape else None
            detail = _describe(a if sent is None else sent) if found is None else found[2]
            raise error(
                ContractError,
                f"the Dreamer-ready {path}",
                f"be a float array of shape {flat} inside [low, high] = [{_short(low)}, {_short(high)}]",
                detail,
                "Send values in [-1, 1] through DreamerV2's NormalizeAction",
            )
        # only a value past a bound (NormalizeAction's float32 overshoot, within tol) moves, onto the
        # bound; a value inside stays as sent (near a bound too: -0.999999 on [0, 1000] is 5e-4, not 0)
        return np.clip(x, low, high).astype(dtype)

    if shape != flat:  # what the agent sends is flat: back to the declared shape first (a view, exact)
        decode_shaped = decode

        def decode(a: Any, sent: Any = None) -> np.ndarray:  # type: ignore[misc]
            x = a
            if type(x) is not ndarray:
                try:
                    x = np.asarray(x, dtype=np.float64)  # what decode_shaped reads it as anyway
                except (TypeError, ValueError):
                    return decode_shaped(a)
            return decode_shaped(x.reshape(shape), a) if x.shape == flat else decode_shaped(x, a)

    decode.bounds = (low_t, high_t)  # type: ignore[attr-defined]  # in the neutral shape
    return box, decode, False


def _user_bounds(space: spaces.Box, bounds: Any) -> Tuple[np.ndarray, np.ndarray]:
    try:
        low, high = (np.broadcast_to(np.asarray(b, np.float64), space.shape) for b in bounds)
    except (TypeError, ValueError) as e:
        raise error(
            SpecError,
            "action_bounds",
            f"be a pair (low, high) broadcastable to {space.shape}",
            repr(bounds),
            "Pass e.g. action_bounds=(-1.0, 1.0)",
        ) from e
    ok = np.isfinite(low) & np.isfinite(high) & (low < high) & (low >= space.low) & (high <= space.high)
    if not ok.all():
        index = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise error(
            SpecError,
            f"action_bounds{list(index)}",
            f"be finite, low < high, and inside the action space [{space.low[index]!r}, {space.high[index]!r}]",
            f"[{low[index]!r}, {high[index]!r}]",
            "Pass finite bounds within the declared space",
        )
    return low, high


def _action_encoder(space: spaces.Space) -> Fn:
    """Neutral action -> the Dreamer-ready action (index or array), for tapes and tests."""
    if isinstance(space, spaces.Discrete):
        return lambda a: int(a) - space.start
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        nvec = space.nvec if isinstance(space, spaces.MultiDiscrete) else np.full(space.shape, 2)
        start = space.start if isinstance(space, spaces.MultiDiscrete) else np.zeros(space.shape, np.int64)
        return lambda a: int(np.ravel_multi_index(tuple((np.asarray(a) - start).reshape(-1)), tuple(nvec.reshape(-1))))
    return lambda a: np.asarray(a, np.float32).reshape(-1)  # the flat presentation of any Box


def _short(arr: np.ndarray) -> str:
    flat = arr.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        return repr(float(flat[0]))
    return np.array2string(arr, threshold=6, separator=", ")

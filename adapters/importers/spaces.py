"""A framework's spaces -> neutral spaces (the reverse of an export's lowering), exactly or refused.

One implementation for Gymnasium 1.x and gym 0.21-0.26: their space classes share the design, and
the caller passes the framework's ``spaces`` module, so every test is an ``isinstance``, never a
guess by name. Rules (docs/importers.md has the table with every refusal's whole message):
Box -> Box (dtype and per-element bounds kept); uint8 Box (H, W, 1 or 3) over [0, 255] -> Image;
Discrete(n, start) -> Discrete(n, start); MultiDiscrete (n-D, start) -> MultiDiscrete; MultiBinary
-> MultiBinary; Dict -> Dict (its order kept); Tuple -> Tuple. Text, Graph, Sequence, OneOf, a bool
Box and any other space are refused with their path and a fix.

Each rule gives ``(neutral space, to_neutral, to_foreign)``: the value conversions, None where the
value passes as it is (so an all-array env such as CartPole pays nothing per step). ``to_neutral(x,
at)`` follows the one rule for incoming values (``bridge/values.py``): a Discrete value must be an
integer, a narrower MultiDiscrete an integer array, never a float or str cast into one; a refusal
names ``at`` (the entry) and the path inside the space.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from bridge import spaces as ns
from bridge import values
from bridge.errors import ConversionError, error

__all__ = ["raise_space", "Raised", "KINDS"]

Fn = Optional[Callable[[Any], Any]]
In = Optional[values.Decode]  # to_neutral(x, where)
Raised = Tuple[ns.Space, In, Fn]

KINDS = "a Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple"
_WRAP = "Wrap the env in an {side}Wrapper that presents fixed-size arrays instead"
_MINIGRID = (
    " (MiniGrid: ImgObsWrapper or RGBImgObsWrapper; on the command line --wrapper minigrid.wrappers:ImgObsWrapper)"
)


def raise_space(space: Any, path: str, fw: ModuleType, drop_keys: Sequence[str] = ()) -> Raised:
    """The neutral space of the framework space ``space`` at ``path`` (``"observation_space"`` or
    ``"action_space"``) with its value conversions; ``drop_keys`` removes top-level Dict keys."""
    if drop_keys:
        if not isinstance(space, fw.Dict):
            raise error(
                ConversionError,
                f"{path} drop_keys",
                "name keys of a Dict space",
                f"{list(drop_keys)} with a {type(space).__name__} space",
                "Pass drop_keys only for an env that observes a Dict",
            )
        missing = [k for k in drop_keys if k not in space.spaces]
        if missing:
            fix = f"Pick from its keys {list(space.spaces)}"
            raise error(ConversionError, f"{path} drop_keys", "name keys of the Dict space", repr(missing), fix)
    return _raise(space, path, fw, tuple(drop_keys))


def _raise(space: Any, path: str, fw: ModuleType, drop: Tuple[str, ...] = ()) -> Raised:
    if isinstance(space, fw.Dict):
        return _raise_dict(space, path, fw, drop)
    if isinstance(space, fw.Tuple):
        return _raise_tuple(space, path, fw)
    if isinstance(space, fw.Box):
        return _raise_box(space, path)
    if isinstance(space, fw.Discrete):
        start = int(getattr(space, "start", 0))  # gym 0.21 has no start
        neutral = ns.Discrete(int(space.n), start)
        return neutral, values.decoder(neutral, _value_path(path)), None
    if isinstance(space, fw.MultiDiscrete):
        return _raise_multi_discrete(space, path)
    if isinstance(space, fw.MultiBinary):
        shape = tuple(int(d) for d in np.atleast_1d(space.n))
        neutral = ns.MultiBinary(shape if np.ndim(space.n) else shape[0])
        return neutral, None, None
    raise _refused(space, path)


def _refused(space: Any, path: str) -> ConversionError:
    side = "Action" if path.startswith("action_space") else "Observation"
    fix = _WRAP.format(side=side)
    if side == "Observation":
        fix += _MINIGRID
    key = _top_key(path)
    if key is not None:
        fix += f", or pass drop_keys=[{key!r}] (on the command line --drop-key {key})"
    return error(ConversionError, path, f"be {KINDS}", type(space).__name__, fix)  # type: ignore[return-value]


def _top_key(path: str) -> Optional[str]:
    """The key of a top-level Dict entry of the observation (what drop_keys can remove), or None."""
    head = "observation_space["
    if not path.startswith(head) or "]" in path[len(head) : -1] or not path.endswith("]"):
        return None
    inner = path[len(head) : -1]
    return inner[1:-1] if inner[:1] == inner[-1:] == "'" else None


def _value_path(path: str) -> str:
    """Where a value lies, for its refusal: ``observation_space['a']`` -> ``observation['a']``."""
    return path.replace("_space", "", 1)


def _raise_box(space: Any, path: str) -> Raised:
    dtype = np.dtype(space.dtype)
    if dtype.kind not in "fiu":
        fix = "Declare it as a MultiBinary (int8) in the env" if dtype.kind == "b" else "Use a float or integer dtype"
        raise error(ConversionError, path, "be a Box of a float or integer dtype", f"Box of dtype {dtype.name}", fix)
    shape = tuple(space.shape)
    low, high = np.asarray(space.low), np.asarray(space.high)
    if dtype == np.uint8 and len(shape) == 3 and shape[2] in (1, 3) and (low == 0).all() and (high == 255).all():
        return ns.Image(shape[0], shape[1], shape[2]), None, None
    return ns.Box(low, high, shape, dtype), None, None


def _raise_multi_discrete(space: Any, path: str) -> Raised:
    dtype = np.dtype(space.dtype)
    start = getattr(space, "start", None)
    neutral = ns.MultiDiscrete(np.asarray(space.nvec), None if start is None else np.asarray(start))
    if dtype == np.int64:
        return neutral, None, None
    if dtype.kind not in "iu" or (dtype.kind == "u" and dtype.itemsize == 8):
        got = f"MultiDiscrete of dtype {dtype.name}"
        raise error(ConversionError, path, "be a MultiDiscrete whose dtype fits int64", got, "Use dtype=np.int64")
    # a narrower integer dtype: integer values widen to int64 exactly (a float is refused, never
    # truncated) and actions narrow back exactly (they lie in nvec)
    return neutral, values.decoder(neutral, _value_path(path)), lambda a: np.asarray(a, dtype)


def _raise_dict(space: Any, path: str, fw: ModuleType, drop: Tuple[str, ...]) -> Raised:
    parts = [(key, _raise(sub, f"{path}[{key!r}]", fw)) for key, sub in space.spaces.items() if key not in drop]
    neutral = ns.Dict([(key, raised[0]) for key, raised in parts])
    ins = [(key, raised[1]) for key, raised in parts]
    outs = [(key, raised[2]) for key, raised in parts]
    if not drop and all(fn is None for _, fn in ins):
        to_neutral: In = None
    else:
        to_neutral = lambda x, at: {k: (x[k] if fn is None else fn(x[k], at)) for k, fn in ins}  # noqa: E731
    if all(fn is None for _, fn in outs):
        to_foreign: Fn = None
    else:
        to_foreign = lambda a: {k: (a[k] if fn is None else fn(a[k])) for k, fn in outs}  # noqa: E731
    return neutral, to_neutral, to_foreign


def _raise_tuple(space: Any, path: str, fw: ModuleType) -> Raised:
    parts = [_raise(sub, f"{path}[{i}]", fw) for i, sub in enumerate(space.spaces)]
    neutral = ns.Tuple([p[0] for p in parts])
    ins, outs = [p[1] for p in parts], [p[2] for p in parts]
    # values become tuples either way (a framework may return a list)
    to_neutral = lambda x, at: tuple(v if fn is None else fn(v, at) for v, fn in zip(x, ins))  # noqa: E731
    to_foreign: Fn = None
    if any(fn is not None for fn in outs):
        to_foreign = lambda a: tuple(v if fn is None else fn(v) for v, fn in zip(a, outs))  # noqa: E731
    return neutral, to_neutral, to_foreign

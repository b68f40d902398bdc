"""Dreamer-ready lowering: neutral spaces -> what DreamerV2 2.2.0's model can actually see and emit.

Observations are lowered here, actions in :mod:`bridge.adapters.dreamerv2.actions`.

Computed once at export as plain numpy functions. Each rule is lossless or a
:class:`~bridge.errors.ConversionError` that names the path and says what to do:

Observations (always a dict; DreamerV2's encoder reads only 1-D and 3-D entries):

* non-dict observation -> one key: ``"image"`` for a :class:`~bridge.spaces.Image`, else ``"vector"``;
* Dict -> its keys; nested Dict / Tuple entries -> ``"parent/child"`` / ``"parent/0"``
  (a top-level Tuple -> ``"obs/0"``, ...);
* Image -> uint8 HWC (transposed from CHW only when the space declares ``layout == "CHW"``);
  one that DreamerV2's ResizeImage must resize needs 3 or 4 channels (PIL);
* Box (float32/float16) -> 1-D float32, n-D flattened, a scalar becomes shape (1,); float64 refused;
  integer Box -> 1-D float32 when its bounds are within +-2**24 (exact), else refused;
* Discrete(n, start) -> one-hot float32 (n,); MultiDiscrete -> concatenated one-hots;
  MultiBinary -> flat float32 0/1;
* keys ``reward``, ``is_first``, ``is_last``, ``is_terminal``, ``action`` and the prefix ``log_``
  are refused (DreamerV2 writes the first five into the same dict and its replay drops ``log_*``).

Actions (DreamerV2's agent acts on ``act_space["action"]`` only):

* Discrete(n, start) -> Discrete(n), offset back by ``start``;
* MultiDiscrete / MultiBinary -> one Discrete over the product when that is <= 1024 values;
* float Box with finite bounds -> the same bounds (NormalizeAction maps [-1, 1] onto them); an
  infinite bound needs ``action_bounds=(low, high)``; integer Box refused;
* Dict -> only as ``Dict(action=...)``; Tuple or other Dicts (hybrid actions) refused.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, List, Sequence, Tuple
from typing import Dict as DictT

import numpy as np
from bridge.compat import optional_import

from bridge import spaces
from bridge.errors import ConversionError, message

gym = optional_import("gym", "the DreamerV2 export")

RESERVED_KEYS = ("reward", "is_first", "is_last", "is_terminal", "action")
FLOAT32_EXACT_INT = 2**24
Fn = Callable[[Any], Any]


def refuse(subject: str, expectation: str, actual: object, fix: str, error: type = ConversionError) -> Exception:
    """Build (not raise) the house error and keep its four parts for check reports."""
    found = error(message(subject, expectation, actual, fix))
    found.parts = (subject, expectation, actual if isinstance(actual, str) else repr(actual), fix)
    return found


# -- observations ------------------------------------------------------------------------------
class Leaf:
    """One Dreamer observation key: where it sits in the neutral value and how it converts."""

    def __init__(
        self, key: str, route: Tuple[Any, ...], path: str, space: Any, kind: str, encode: Fn, decode: Fn
    ) -> None:
        self.key, self.route, self.path, self.space, self.kind = key, route, path, space, kind
        self.encode, self.decode = encode, decode


class ObservationLowering:
    """Neutral observation space -> a gym ``Dict`` of 1-D float32 vectors and HWC uint8 images."""

    def __init__(self, space: spaces.Space, size: Sequence[int] = (64, 64)) -> None:
        self.neutral = space
        self.size = (int(size[0]), int(size[1]))
        self.leaves: List[Leaf] = []
        if isinstance(space, spaces.Dict):
            for key, sub in space.items():
                self._collect(sub, key, (key,), f"observation[{key!r}]")
        elif isinstance(space, spaces.Tuple):
            for i, sub in enumerate(space):
                self._collect(sub, f"obs/{i}", (i,), f"observation[{i}]")
        else:
            self._collect(space, "image" if isinstance(space, spaces.Image) else "vector", (), "observation")
        self.space = gym.spaces.Dict(OrderedDict((leaf.key, leaf.space) for leaf in self.leaves))
        self.image_keys = [leaf.key for leaf in self.leaves if leaf.kind == "image"]
        self.vector_keys = [leaf.key for leaf in self.leaves if leaf.kind != "image"]
        self.encode = self._encoder()

    def _encoder(self) -> Fn:
        """The per-step encode, picked once: the common shapes get a closure without loops."""
        if len(self.leaves) == 1 and not self.leaves[0].route:
            key, enc = self.leaves[0].key, self.leaves[0].encode
            return (lambda obs: {key: obs}) if enc is _same else (lambda obs: {key: enc(obs)})
        if all(len(leaf.route) == 1 for leaf in self.leaves):
            flat = [(leaf.key, leaf.route[0], leaf.encode) for leaf in self.leaves]
            return lambda obs: {key: enc(obs[part]) for key, part, enc in flat}
        return self._encode_nested

    def _collect(self, space: spaces.Space, key: str, route: Tuple[Any, ...], path: str) -> None:
        if isinstance(space, spaces.Dict):
            for sub_key, sub in space.items():
                self._collect(sub, f"{key}/{sub_key}", route + (sub_key,), f"{path}[{sub_key!r}]")
            return
        if isinstance(space, spaces.Tuple):
            for i, sub in enumerate(space):
                self._collect(sub, f"{key}/{i}", route + (i,), f"{path}[{i}]")
            return
        if key in RESERVED_KEYS or key.startswith("log_"):
            raise refuse(
                path,
                "not lower to a key DreamerV2 reserves (reward, is_first, is_last, is_terminal, action) "
                "or one starting with 'log_' (its replay drops those)",
                repr(key),
                f"Rename the key, e.g. 'obs_{key}'",
            )
        for other in self.leaves:
            if other.key == key:
                raise refuse(
                    path,
                    "lower to a DreamerV2 key no other entry uses",
                    f"{key!r}, also used by {other.path}",
                    "Rename one of the two entries",
                )
        gym_space, kind, encode, decode = _lower_leaf(space, path, self.size)
        self.leaves.append(Leaf(key, route, path, gym_space, kind, encode, decode))

    def _encode_nested(self, obs: Any) -> dict:
        """Neutral observation -> a new dict of Dreamer arrays (GymWrapper adds keys to it)."""
        out = {}
        for leaf in self.leaves:
            value = obs
            for part in leaf.route:
                value = value[part]
            out[leaf.key] = leaf.encode(value)
        return out

    def decode(self, obs: dict) -> Any:
        """Dreamer observation (extra keys ignored) -> the neutral observation."""
        return self._rebuild(self.neutral, (), {leaf.route: leaf for leaf in self.leaves}, obs)

    def _rebuild(self, space: spaces.Space, route: Tuple[Any, ...], by_route: dict, obs: dict) -> Any:
        if isinstance(space, spaces.Dict):
            return {k: self._rebuild(s, route + (k,), by_route, obs) for k, s in space.items()}
        if isinstance(space, spaces.Tuple):
            return tuple(self._rebuild(s, route + (i,), by_route, obs) for i, s in enumerate(space))
        leaf = by_route[route]
        return leaf.decode(obs[leaf.key])


def _lower_leaf(space: spaces.Space, path: str, size: Tuple[int, int]) -> Tuple[Any, str, Fn, Fn]:
    """(gym space, "image" | "vector", encode, decode) for one observation leaf."""
    if isinstance(space, spaces.Image):
        return _lower_image(space, path, size)
    if isinstance(space, spaces.Box):
        return _lower_box_obs(space, path)
    if isinstance(space, spaces.Discrete):
        n, start = space.n, space.start
        eye = np.eye(n, dtype=np.float32)
        box = gym.spaces.Box(0.0, 1.0, (n,), np.float32)
        return box, "vector", lambda x: eye[int(x) - start].copy(), lambda v: np.int64(int(np.argmax(v)) + start)
    if isinstance(space, spaces.MultiDiscrete):
        return _lower_multidiscrete_obs(space)
    if isinstance(space, spaces.MultiBinary):
        shape, size_ = space.shape, int(np.prod(space.shape))
        box = gym.spaces.Box(0.0, 1.0, (size_,), np.float32)
        return (
            box,
            "vector",
            lambda x: x.astype(np.float32).reshape(-1),
            lambda v: np.asarray(v).reshape(shape).astype(np.int8),
        )
    raise refuse(
        path,
        "be a space DreamerV2 can observe",
        type(space).__name__,
        "Use Box, Image, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple",
    )


def _lower_image(space: spaces.Image, path: str, size: Tuple[int, int]) -> Tuple[Any, str, Fn, Fn]:
    chw = getattr(space, "layout", "HWC") == "CHW"
    h, w, c = (space.shape[1], space.shape[2], space.shape[0]) if chw else space.shape
    if (h, w) != size and c not in (3, 4):
        raise refuse(
            path,
            f"have 3 or 4 channels to be resized to {size} by DreamerV2's ResizeImage (PIL)",
            f"{c} channel(s) at {h}x{w}",
            f"Render at {size[0]}x{size[1]}, or pass size=({h}, {w}) to to_dreamerv2",
        )
    box = gym.spaces.Box(0, 255, (h, w, c), np.uint8)
    if chw:
        return (
            box,
            "image",
            lambda x: np.ascontiguousarray(np.transpose(x, (1, 2, 0))),
            lambda v: np.ascontiguousarray(np.transpose(v, (2, 0, 1))),
        )
    return box, "image", _same, _same


def _same(x: Any) -> Any:
    return x


def _lower_box_obs(space: spaces.Box, path: str) -> Tuple[Any, str, Fn, Fn]:
    dtype, shape = space.dtype, space.shape
    if dtype.kind == "f" and dtype.itemsize > 4:
        raise refuse(
            path,
            "have dtype float32 or float16 (DreamerV2 computes in float32)",
            f"dtype {dtype.name}",
            "Declare the Box with dtype=np.float32 and cast in the env",
        )
    if dtype.kind in "iu" and max(abs(int(space.low.min())), abs(int(space.high.max()))) > FLOAT32_EXACT_INT:
        raise refuse(
            path,
            f"have bounds within +-{FLOAT32_EXACT_INT} to be exact as float32",
            f"[{int(space.low.min())}, {int(space.high.max())}]",
            "Narrow the bounds, or scale the value in the env and declare a float32 Box",
        )
    if space.low.size == 0:
        raise refuse(
            path, "have at least one element (DreamerV2 has no empty inputs)", f"shape {shape}", "Drop the entry"
        )
    box = gym.spaces.Box(
        space.low.astype(np.float32).reshape(-1),
        space.high.astype(np.float32).reshape(-1),
        (space.low.size,),
        np.float32,
    )
    if dtype == np.float32 and len(shape) == 1:
        return box, "vector", _same, _same
    if dtype == np.float32:
        return box, "vector", lambda x: x.reshape(-1), lambda v: np.asarray(v).reshape(shape)
    return (
        box,
        "vector",
        lambda x: x.astype(np.float32).reshape(-1),
        lambda v: np.asarray(v).reshape(shape).astype(dtype),
    )


def _lower_multidiscrete_obs(space: spaces.MultiDiscrete) -> Tuple[Any, str, Fn, Fn]:
    nvec, start, shape = space.nvec.reshape(-1), space.start.reshape(-1), space.shape
    offsets = np.concatenate([[0], np.cumsum(nvec)[:-1]]).astype(np.int64)
    total = int(nvec.sum())
    box = gym.spaces.Box(0.0, 1.0, (total,), np.float32)

    def encode(x: np.ndarray) -> np.ndarray:
        out = np.zeros(total, np.float32)
        out[offsets + (x.reshape(-1) - start)] = 1.0
        return out

    def decode(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v)
        values = [int(np.argmax(v[o : o + n])) for o, n in zip(offsets, nvec)]
        return (np.asarray(values, np.int64) + start).reshape(shape)

    return box, "vector", encode, decode


def _show(x: Any) -> str:
    from bridge.spaces import _describe_value

    return _describe_value(x)


def _short(arr: np.ndarray) -> str:
    flat = arr.reshape(-1)
    return (
        repr(float(flat[0]))
        if flat.size and np.all(flat == flat[0])
        else np.array2string(arr, threshold=6, separator=", ")
    )


def lowering_summary(obs: ObservationLowering, act: Any) -> DictT[str, Any]:
    """A readable account of both lowerings (for docs, logs and the CLI)."""
    return {
        "observation": {
            leaf.key: f"{leaf.path} -> {leaf.kind} {tuple(leaf.space.shape)} {leaf.space.dtype}" for leaf in obs.leaves
        },
        "action": f"{act.neutral!r} -> {act.space!r}",
    }

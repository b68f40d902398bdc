"""Dreamer-ready observation lowering: neutral spaces -> what DreamerV2 2.2.0's model can see.

Actions are lowered in :mod:`bridge.adapters.dreamerv2.actions`. Both follow the lowering protocol
(:mod:`bridge.adapters._shared.lowering`): computed once, used by the export and by its view.
Each rule is lossless, announced (``roundings``) or a ConversionError naming the path:

* the observation is always a dict: a non-dict one becomes one key, ``"image"`` for an
  :class:`~bridge.spaces.Image`, else ``"vector"``; Dict -> its keys; nested Dict / Tuple entries ->
  ``"parent/child"`` / ``"parent/0"`` (a top-level Tuple -> ``"obs/0"``, ...);
* Image -> uint8 HWC (transposed from CHW only when the space declares ``layout == "CHW"``).
  DreamerV2's own ResizeImage resizes it to ``size`` (nearest neighbour): an
  upscale keeps every pixel (decoded exactly); a downscale drops pixels (announced). A resize needs
  3 or 4 channels (PIL);
* Box float32/float16 -> 1-D float32 (n-D flattened, a scalar becomes shape (1,)); float64 ->
  float32 (the one float policy, announced; ``float64_as_float32=False`` refuses instead);
  integer Box -> 1-D float32 when its bounds are within +-2**24 (exact), else refused;
* Discrete(n, start) -> one-hot float32 (n,); MultiDiscrete -> concatenated one-hots;
  MultiBinary -> flat float32 0/1;
* keys ``reward``, ``is_first``, ``is_last``, ``is_terminal``, ``action`` and the prefix ``log_``
  are refused (DreamerV2 writes the first five into the same dict and its replay drops ``log_*``).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from bridge.adapters._shared.lowering import Fn, Lowering, float32_presentation, role, same
from bridge.adapters.dreamerv2.actions import ActionLowering
from bridge.adapters.gym.loader import load_gym

from bridge import spaces
from bridge.errors import ConversionError, error
from bridge.spaces.base import Mismatch, _describe

gym = load_gym("the DreamerV2 export")

__all__ = ["lower", "ObservationLowering", "RESERVED_KEYS"]

RESERVED_KEYS = ("reward", "is_first", "is_last", "is_terminal", "action")
FLOAT32_EXACT_INT = 2**24


def lower(space: spaces.Space, *, path: str, options: Dict[str, Any]) -> Lowering:
    """DreamerV2's lowering of ``space`` (the protocol's one constructor shape): observations as
    :class:`ObservationLowering` (options ``size``, ``float64_as_float32``), actions as
    :class:`~bridge.adapters.dreamerv2.actions.ActionLowering` (``action_bounds``, ``check_actions``)."""
    if role(path) == "action":
        return ActionLowering(space, options.get("action_bounds"), options.get("check_actions", True))
    return ObservationLowering(space, options.get("size", (64, 64)), options.get("float64_as_float32", True))


class Leaf:
    """One Dreamer observation key: where it sits in the neutral value and how it converts."""

    def __init__(self, key: str, route: Tuple[Any, ...], path: str, space: Any, kind: str, encode: Fn, decode: Fn):
        self.key, self.route, self.path, self.space, self.kind = key, route, path, space, kind
        self.encode, self.decode = encode, decode
        self.resize: Optional[Tuple[np.ndarray, np.ndarray]] = None  # ResizeImage's row and column maps
        self.rounding = ""


class ObservationLowering(Lowering):
    """Neutral observation space -> a gym ``Dict`` of 1-D float32 vectors and HWC uint8 images.

    ``space`` is what the Dreamer-ready env declares (images at their own size); ``decode`` also
    takes the observation after DreamerV2's ResizeImage (what the agent sees, ``agent_view``).
    """

    __slots__ = ("size", "leaves", "image_keys", "vector_keys", "_by_route")

    def __init__(self, space: spaces.Space, size: Sequence[int] = (64, 64), float64_as_float32: bool = True) -> None:
        self.size = (int(size[0]), int(size[1]))
        self.leaves: List[Leaf] = []
        if isinstance(space, spaces.Dict):
            for key, sub in space.items():
                self._collect(sub, key, (key,), f"observation[{key!r}]", float64_as_float32)
        elif isinstance(space, spaces.Tuple):
            for i, sub in enumerate(space):
                self._collect(sub, f"obs/{i}", (i,), f"observation[{i}]", float64_as_float32)
        else:
            key = "image" if isinstance(space, spaces.Image) else "vector"
            self._collect(space, key, (), "observation", float64_as_float32)
        self.image_keys = [leaf.key for leaf in self.leaves if leaf.kind == "image"]
        self.vector_keys = [leaf.key for leaf in self.leaves if leaf.kind != "image"]
        self._by_route = {leaf.route: leaf for leaf in self.leaves}
        target = gym.spaces.Dict(OrderedDict((leaf.key, leaf.space) for leaf in self.leaves))
        super().__init__(
            space,
            target,
            self._encoder(),
            self.decode_view,
            self._invalid,
            roundings=tuple(leaf.rounding for leaf in self.leaves if leaf.rounding),
        )

    def _encoder(self) -> Fn:
        """The per-step encode, picked once: the common shapes get a closure without loops."""
        if len(self.leaves) == 1 and not self.leaves[0].route:
            key, enc = self.leaves[0].key, self.leaves[0].encode
            return (lambda obs: {key: obs}) if enc is same else (lambda obs: {key: enc(obs)})
        if all(len(leaf.route) == 1 for leaf in self.leaves):
            flat = [(leaf.key, leaf.route[0], leaf.encode) for leaf in self.leaves]
            return lambda obs: {key: enc(obs[part]) for key, part, enc in flat}
        return self._encode_nested

    def _collect(self, space: spaces.Space, key: str, route: Tuple[Any, ...], path: str, narrow: bool) -> None:
        if isinstance(space, (spaces.Dict, spaces.Tuple)):
            items = space.items() if isinstance(space, spaces.Dict) else enumerate(space)
            for sub_key, sub in items:
                self._collect(sub, f"{key}/{sub_key}", route + (sub_key,), f"{path}[{sub_key!r}]", narrow)
            return
        if key in RESERVED_KEYS or key.startswith("log_"):
            raise error(
                ConversionError,
                path,
                "not lower to a key DreamerV2 reserves (reward, is_first, is_last, is_terminal, action) "
                "or one starting with 'log_' (its replay drops those)",
                repr(key),
                f"Rename the key, e.g. 'obs_{key}'",
            )
        for other in self.leaves:
            if other.key == key:
                raise error(
                    ConversionError,
                    path,
                    "lower to a DreamerV2 key no other entry uses",
                    f"{key!r}, also used by {other.path}",
                    "Rename one of the two entries",
                )
        if isinstance(space, spaces.Image):
            leaf = _image_leaf(space, key, route, path, self.size)
        else:
            gym_space, encode, decode, rounding = _lower_vector(space, path, narrow)
            leaf = Leaf(key, route, path, gym_space, "vector", encode, decode)
            leaf.rounding = rounding
        self.leaves.append(leaf)

    def _encode_nested(self, obs: Any) -> dict:
        """Neutral observation -> a new dict of Dreamer arrays (GymWrapper adds keys to it)."""
        out = {}
        for leaf in self.leaves:
            value = obs
            for part in leaf.route:
                value = value[part]
            out[leaf.key] = leaf.encode(value)
        return out

    def agent_view(self, obs: Any) -> dict:
        """Neutral observation -> what DreamerV2's agent sees: the encode, then ResizeImage's resize."""
        out = self.encode(obs)
        for leaf in self.leaves:
            if leaf.resize is not None:
                rows, cols = leaf.resize
                out[leaf.key] = out[leaf.key][rows][:, cols]
        return out

    def decode_view(self, obs: dict) -> Any:
        """A Dreamer observation dict (extra keys ignored; images at the ready size or after
        ResizeImage) -> the neutral observation."""
        return self._rebuild(self.source, (), obs)

    def expected(self, x: Any) -> Any:
        """What the agent's view of ``x`` decodes to (``x`` itself when every rule is lossless)."""
        return self.decode_view(self.agent_view(x)) if self.roundings else x

    def _rebuild(self, space: spaces.Space, route: Tuple[Any, ...], obs: dict) -> Any:
        if isinstance(space, spaces.Dict):
            return {k: self._rebuild(s, route + (k,), obs) for k, s in space.items()}
        if isinstance(space, spaces.Tuple):
            return tuple(self._rebuild(s, route + (i,), obs) for i, s in enumerate(space))
        leaf = self._by_route[route]
        return leaf.decode(obs[leaf.key])

    def _invalid(self, obs: Any, path: str) -> Optional[Mismatch]:
        if not isinstance(obs, dict) or any(leaf.key not in obs for leaf in self.leaves):
            return (path, f"be a dict with the keys {[leaf.key for leaf in self.leaves]}", _describe(obs), "Pass it")
        for leaf in self.leaves:
            if not leaf.space.contains(obs[leaf.key]):
                return (f"{path}[{leaf.key!r}]", f"lie in {leaf.space!r}", _describe(obs[leaf.key]), "Pass it")
        return None


def _image_leaf(space: spaces.Image, key: str, route: Tuple[Any, ...], path: str, size: Tuple[int, int]) -> Leaf:
    chw = getattr(space, "layout", "HWC") == "CHW"  # declared, never guessed from the shape
    h, w, c = (space.shape[1], space.shape[2], space.shape[0]) if chw else space.shape
    box = gym.spaces.Box(0, 255, (h, w, c), np.uint8)
    to_hwc = (lambda x: np.ascontiguousarray(np.transpose(x, (1, 2, 0)))) if chw else same
    to_source = (lambda v: np.ascontiguousarray(np.transpose(v, (2, 0, 1)))) if chw else same
    if (h, w) == size:
        return Leaf(key, route, path, box, "image", to_hwc, to_source)
    if c not in (3, 4):
        raise error(
            ConversionError,
            path,
            f"have 3 or 4 channels to be resized to {size} by DreamerV2's ResizeImage (PIL)",
            f"{c} channel(s) at {h}x{w}",
            f"Render at {size[0]}x{size[1]}, or pass size=({h}, {w}) to to_dreamerv2",
        )
    rows, cols = _resize_maps((h, w), size)
    # back to (h, w): from an upscale, the first output pixel of each source pixel (exact); from a
    # downscale, the nearest kept pixel (the announced loss)
    back_rows = np.searchsorted(rows, np.arange(h)).clip(0, len(rows) - 1)
    back_cols = np.searchsorted(cols, np.arange(w)).clip(0, len(cols) - 1)

    def decode(y: Any) -> np.ndarray:
        y = np.asarray(y)
        return to_source(y[back_rows][:, back_cols] if y.shape[:2] == size else y)

    leaf = Leaf(key, route, path, box, "image", to_hwc, decode)
    leaf.resize = (rows, cols)
    if h > size[0] or w > size[1]:
        leaf.rounding = f"{path}: {h}x{w} resized to {size[0]}x{size[1]} by DreamerV2's ResizeImage (pixels dropped)"
    return leaf


def _resize_maps(source: Tuple[int, int], size: Tuple[int, int]) -> Tuple[np.ndarray, np.ndarray]:
    """Which source row and column each output pixel of DreamerV2's ``ResizeImage`` comes from.

    Read off PIL itself (the library ResizeImage calls, with the same NEAREST filter) by resizing
    images whose pixels hold their own coordinates, so the map is exact, not a re-derivation.
    """
    from PIL import Image

    h, w = source
    ramp = np.zeros((h, w, 3), np.uint8)
    ramp[..., 0] = (np.arange(h) % 256)[:, None]
    ramp[..., 1] = (np.arange(h) // 256)[:, None]
    ramp[..., 2] = 0
    out = np.array(Image.fromarray(ramp).resize(size, Image.NEAREST))
    rows = out[:, 0, 0].astype(np.int64) + 256 * out[:, 0, 1].astype(np.int64)
    ramp[..., 0] = (np.arange(w) % 256)[None, :]
    ramp[..., 1] = (np.arange(w) // 256)[None, :]
    out = np.array(Image.fromarray(ramp).resize(size, Image.NEAREST))
    cols = out[0, :, 0].astype(np.int64) + 256 * out[0, :, 1].astype(np.int64)
    return rows, cols


def _lower_vector(space: spaces.Space, path: str, narrow: bool) -> Tuple[Any, Fn, Fn, str]:
    """(gym space, encode, decode, rounding) of one non-image leaf: a 1-D float32 vector."""
    if isinstance(space, spaces.Box):
        return _lower_box_obs(space, path, narrow)
    if isinstance(space, spaces.Discrete):
        n, start = space.n, space.start
        eye = np.eye(n, dtype=np.float32)
        box = gym.spaces.Box(0.0, 1.0, (n,), np.float32)
        # int(): exact for every integer type (the guard already checked the range)
        return box, lambda x: eye[int(x) - start].copy(), lambda v: np.int64(int(np.argmax(v)) + start), ""
    if isinstance(space, spaces.MultiDiscrete):
        return _lower_multidiscrete_obs(space)
    if isinstance(space, spaces.MultiBinary):
        shape, size_ = space.shape, int(np.prod(space.shape))
        box = gym.spaces.Box(0.0, 1.0, (size_,), np.float32)
        encode = lambda x: x.astype(np.float32).reshape(-1)  # noqa: E731
        return box, encode, lambda v: np.asarray(v).reshape(shape).astype(np.int8), ""
    raise error(
        ConversionError,
        path,
        "be a space DreamerV2 can observe",
        type(space).__name__,
        "Use Box, Image, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple",
    )


def _lower_box_obs(space: spaces.Box, path: str, narrow: bool) -> Tuple[Any, Fn, Fn, str]:
    dtype, shape = space.dtype, space.shape
    if space.low.size == 0:
        raise error(
            ConversionError,
            path,
            "have at least one element (DreamerV2 has no empty inputs)",
            f"shape {shape}",
            "Drop the entry",
        )
    if dtype.kind == "f" and dtype.itemsize > 4:
        if not narrow:
            raise error(
                ConversionError,
                path,
                "have dtype float32 or float16 with float64_as_float32=False (DreamerV2 computes in float32)",
                f"dtype {dtype.name}",
                "Leave float64_as_float32 at True (the default), or declare float32 observations "
                '(dtype=np.float32 in a Box; DataType="single" in an rlNumericSpec)',
            )
        low32, high32, to32, back = float32_presentation(space.low, space.high)
        box = gym.spaces.Box(low32.reshape(-1), high32.reshape(-1), (space.low.size,), np.float32)
        encode = lambda x: to32(x).reshape(-1)  # noqa: E731
        return box, encode, lambda v: back(np.asarray(v).reshape(shape)), f"{path}: float64 presented as float32"
    if dtype.kind in "iu" and max(abs(int(space.low.min())), abs(int(space.high.max()))) > FLOAT32_EXACT_INT:
        raise error(
            ConversionError,
            path,
            f"have bounds within +-{FLOAT32_EXACT_INT} to be exact as float32",
            f"[{int(space.low.min())}, {int(space.high.max())}]",
            "Narrow the bounds, or scale the value in the env and declare a float32 Box",
        )
    box = gym.spaces.Box(
        space.low.astype(np.float32).reshape(-1),
        space.high.astype(np.float32).reshape(-1),
        (space.low.size,),
        np.float32,
    )
    if dtype == np.float32 and len(shape) == 1:
        return box, same, same, ""
    if dtype == np.float32:
        return box, lambda x: x.reshape(-1), lambda v: np.asarray(v).reshape(shape), ""
    return (
        box,
        lambda x: x.astype(np.float32).reshape(-1),
        lambda v: np.asarray(v).reshape(shape).astype(dtype),
        "",
    )


def _lower_multidiscrete_obs(space: spaces.MultiDiscrete) -> Tuple[Any, Fn, Fn, str]:
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

    return box, encode, decode, ""

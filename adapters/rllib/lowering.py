"""What RLlib's default RLModules and connectors need, on top of the Gymnasium lowering.

RLlib 2.60 (new API stack) reads Gymnasium 1.2 spaces, so the base is
:mod:`bridge.adapters.gymnasium.lowering` (Discrete ``start`` -> 0 with the shift inside the export,
n-D MultiDiscrete -> 1-D, nested Dict/Tuple -> one level of Dict), with RLlib's choices:

* images stay HWC (RLlib's CNN encoders are channels-last) and are presented as float32 with the
  same integer values (lossless; RLlib's torch CNN cannot convolve uint8);
* float64 Box observations are presented as float32 (the one float policy: RLlib's torch modules
  compute in float32 and cast anyway);
* observations that are not a 1-D Box or an HWC image (Dict, Tuple, Discrete, MultiDiscrete,
  MultiBinary, n-D Box) need RLlib's own ``FlattenObservations`` connector, which an RLlib user
  adds (:func:`needs_flatten`; ``bridge.adapters.rllib.train`` adds it);
* an n-D float Box action is presented flat (1-D, reshaped back in the export: lossless);
* refused, as ConversionErrors naming the path: integer Box actions, and n-D Box actions inside a
  Dict or Tuple (RLlib has no default action distribution for them).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
from bridge.adapters._shared.lowering import Lowering, array_checks, role, same
from bridge.adapters.gymnasium.lowering import FLAT
from bridge.adapters.gymnasium.lowering import lower as gymnasium_lower
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.errors import ConversionError, error

gymnasium = optional_import("gymnasium", "the RLlib export")

__all__ = ["lower", "rllib_refusal", "needs_flatten", "no_default_cnn", "CNN_SIZES"]

# the image sizes RLlib's default CNN has filters for (ray/rllib/models/utils.py get_filter_config)
CNN_SIZES = ((96, 96), (84, 84), (64, 64), (42, 42), (10, 10))


def lower(space: ns.Space, *, path: str, options: Dict[str, Any]) -> Lowering:
    """The lowering of the RLlib export (see module doc; the protocol's one constructor shape).
    ``options``: ``normalize_actions`` (a bounded float Box action as [-1, 1], flat if n-D)."""
    if role(path) == "observation":
        if isinstance(space, ns.Image):
            return _image_as_float32(space)
        return gymnasium_lower(space, path=path, options=_OBSERVATION)
    refusal = rllib_refusal(space, path)
    if refusal is not None:
        raise refusal
    normalize = bool(options.get("normalize_actions", False))
    if _flat_box(space):
        inner = gymnasium_lower(space, path=path, options={"normalize_actions": True}) if normalize else None
        return _box_as_flat(space, inner)
    return gymnasium_lower(
        space, path=path, options={"image_layout": "HWC", "normalize_actions": normalize, FLAT: True}
    )


_OBSERVATION = {"image_layout": "HWC", "float64_as_float32": True, FLAT: True}


def _flat_box(space: ns.Space) -> bool:
    return type(space) is ns.Box and space.dtype.kind == "f" and len(space.shape) > 1


def rllib_refusal(space: ns.Space, path: str = "action") -> Optional[ConversionError]:
    """Why RLlib's default action distributions cannot emit ``space`` (None: they can)."""
    if path in ("action", "actions") and _flat_box(space):
        return None  # presented flat
    if isinstance(space, (ns.Dict, ns.Tuple)):
        items = space.spaces.items() if isinstance(space, ns.Dict) else enumerate(space.spaces)
        for key, sub in items:
            found = rllib_refusal(sub, f"{path}[{key!r}]")
            if found is not None:
                return found
        return None
    if type(space) is ns.Box and space.dtype.kind != "f":
        return error(
            ConversionError,
            f"{path} space for RLlib",
            "be a float Box (RLlib has no action distribution for integer Box actions)",
            repr(space),
            "Declare a MultiDiscrete (or Discrete) action, or a float Box and round in the env",
        )
    if type(space) is ns.Box and len(space.shape) > 1:
        return error(
            ConversionError,
            f"{path} space for RLlib",
            "be a 1-D Box (RLlib's DiagGaussian takes a vector of actions)",
            repr(space),
            f"Declare Box(..., shape=({int(np.prod(space.shape))},)) and reshape inside the env",
        )
    return None


def needs_flatten(space: Any) -> bool:
    """True when RLlib's default encoders need ``FlattenObservations`` for this exported space: not
    a Box, a Box neither 1-D nor 3-D, or an image of a size RLlib's default CNN has no filters for
    (its module would not build; flattened, an MLP reads it)."""
    if not isinstance(space, gymnasium.spaces.Box):
        return True
    if len(space.shape) == 3:
        return no_default_cnn(space)
    return len(space.shape) != 1


def no_default_cnn(space: Any) -> bool:
    """A 3-D Box whose height x width RLlib's default CNN has no filters for."""
    shape = space.shape if isinstance(space, gymnasium.spaces.Box) else ()
    return len(shape) == 3 and tuple(shape[:2]) not in CNN_SIZES


def _box_as_flat(space: ns.Box, inner: Optional[Lowering] = None) -> Lowering:
    """n-D float Box -> 1-D Box of the same values (C order), reshaped back before the env; over
    ``inner`` (the [-1, 1] lowering of ``normalize_actions``) when given."""
    shape, size = space.shape, int(np.prod(space.shape))
    given = inner.space if inner is not None else space
    low, high, dtype = np.asarray(given.low).reshape(size), np.asarray(given.high).reshape(size), given.dtype
    target = gymnasium.spaces.Box(low, high, (size,), dtype)
    invalid, invalid_batch = array_checks((size,), np.dtype(dtype), low, high, False)
    to_env = inner.decode if inner is not None else same
    from_env = inner.encode if inner is not None else same

    def encode(x: Any) -> np.ndarray:
        return np.asarray(from_env(x)).reshape(size)

    def decode(y: Any) -> np.ndarray:
        return to_env(np.asarray(y, dtype=dtype).reshape(shape))

    def encode_batch(x: Any) -> np.ndarray:
        return np.asarray(from_env(x)).reshape(-1, size)

    def decode_batch(y: Any) -> np.ndarray:
        return to_env(np.asarray(y, dtype=dtype).reshape((-1, *shape)))

    return Lowering(
        space,
        target,
        encode,
        decode,
        invalid,
        encode_batch=encode_batch,
        decode_batch=decode_batch,
        invalid_batch=invalid_batch,
        roundings=inner.roundings if inner is not None else (),
    )


def _image_as_float32(space: ns.Image) -> Lowering:
    """uint8 HWC image -> float32 HWC Box [0, 255] with the same values (exact both ways)."""
    target = gymnasium.spaces.Box(0.0, 255.0, space.shape, np.float32)
    low, high = np.zeros(space.shape, np.float32), np.full(space.shape, 255.0, np.float32)
    invalid, invalid_batch = array_checks(space.shape, np.dtype(np.float32), low, high, False)
    float32, uint8 = np.float32, np.uint8

    def encode(x: Any) -> np.ndarray:
        return x.astype(float32)

    def decode(y: Any) -> np.ndarray:
        return np.asarray(y).astype(uint8)

    return Lowering(
        space,
        target,
        encode,
        decode,
        invalid,
        encode_batch=encode,
        decode_batch=decode,
        invalid_batch=invalid_batch,
    )

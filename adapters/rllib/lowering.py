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

from typing import Any, Optional

import numpy as np
from bridge.adapters._shared.lowering import Lowering, array_checks
from bridge.adapters.gymnasium.lowering import lower
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.errors import ConversionError, error

gymnasium = optional_import("gymnasium", "the RLlib export")

__all__ = ["observation_lowering", "action_lowering", "rllib_refusal", "needs_flatten", "CNN_SIZES"]

# the image sizes RLlib's default CNN has filters for (ray/rllib/models/utils.py get_filter_config)
CNN_SIZES = ((96, 96), (84, 84), (64, 64), (42, 42), (10, 10))


def observation_lowering(space: ns.Space) -> Lowering:
    """The observation lowering of the RLlib export (see module doc)."""
    if isinstance(space, ns.Image):
        return _image_as_float32(space)
    return lower(space, "observation", gymnasium, "HWC", float64_as_float32=True)


def action_lowering(space: ns.Space) -> Lowering:
    """The action lowering of the RLlib export, or the ConversionError of :func:`rllib_refusal`."""
    if _flat_box(space):
        return _box_as_flat(space)
    lowering = lower(space, "action", gymnasium, "HWC")
    refusal = rllib_refusal(space)
    if refusal is not None:
        raise refusal
    return lowering


def _flat_box(space: ns.Space) -> bool:
    return type(space) is ns.Box and space.dtype.kind == "f" and len(space.shape) > 1


def rllib_refusal(space: ns.Space, path: str = "action") -> Optional[ConversionError]:
    """Why RLlib's default action distributions cannot emit ``space`` (None: they can)."""
    if path == "action" and _flat_box(space):
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
    """True when RLlib's default encoders need ``FlattenObservations`` for this exported space."""
    if not isinstance(space, gymnasium.spaces.Box):
        return True
    return len(space.shape) not in (1, 3)


def _box_as_flat(space: ns.Box) -> Lowering:
    """n-D float Box -> 1-D Box of the same values (C order), reshaped back before the env."""
    shape, size = space.shape, int(np.prod(space.shape))
    low, high = space.low.reshape(size), space.high.reshape(size)
    target = gymnasium.spaces.Box(low, high, (size,), space.dtype)
    invalid, invalid_batch = array_checks((size,), space.dtype, low, high, False)
    dtype = space.dtype

    def encode(x: Any) -> np.ndarray:
        return np.asarray(x).reshape(size)

    def decode(y: Any) -> np.ndarray:
        return np.asarray(y, dtype=dtype).reshape(shape)

    return Lowering(
        space,
        target,
        encode,
        decode,
        invalid,
        encode_batch=lambda x: np.asarray(x).reshape(-1, size),
        decode_batch=lambda y: np.asarray(y, dtype=dtype).reshape((-1, *shape)),
        invalid_batch=invalid_batch,
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

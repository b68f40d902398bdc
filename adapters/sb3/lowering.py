"""What SB3 can train on: its refusals, its policy for an observation space, the float policy.

SB3 sits on the Gymnasium export (:mod:`bridge.adapters.gymnasium.lowering`); on top of it, SB3 has
one action distribution per policy (no Dict or hybrid action, no integer Box action) and computes
in float32, so a float64 Box observation is presented as float32 (``float64_as_float32``). Its
default CNN (``NatureCNN``) needs images of a minimum size; :func:`cnn_refusal` predicts that
failure with SB3's own rules and classes before a model is built.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.errors import ConversionError, error

gymnasium = optional_import("gymnasium", "the SB3 export")

__all__ = ["sb3_refusal", "policy_for", "POLICY_REASONS", "cnn_refusal"]

# why policy_for picks each policy, in the words advice and verbose lines use
POLICY_REASONS = {
    "MultiInputPolicy": "a Dict observation",
    "CnnPolicy": "an image observation",
    "MlpPolicy": "a flat observation",
}


def sb3_refusal(neutral_action_space: ns.Space, action: Any) -> Optional[ConversionError]:
    """The reason SB3 cannot train on an export of this (Gymnasium) action space, as a ConversionError, or None."""
    if isinstance(action, (gymnasium.spaces.Dict, gymnasium.spaces.Tuple)):  # flat (to_sb3) or as it is
        entries = action.spaces.values() if isinstance(action, gymnasium.spaces.Dict) else action.spaces
        kinds = {type(s).__name__ for s in entries}
        hybrid = "Box" in kinds and len(kinds) > 1
        what = "a hybrid (discrete + continuous) action" if hybrid else "a composite action"
        return error(
            ConversionError,
            "action space for SB3",
            "be a single Box, Discrete, MultiDiscrete or MultiBinary (SB3's policies have one action distribution)",
            f"{what}: {neutral_action_space!r}",
            "Use the plain Gymnasium export (to_gymnasium) with an algorithm that supports it, "
            "or redesign the action as one MultiDiscrete or one Box",
        )
    if isinstance(action, gymnasium.spaces.Box) and action.dtype.kind != "f":
        return error(
            ConversionError,
            "action space for SB3",
            "be a float Box (SB3 emits continuous actions as floats)",
            repr(neutral_action_space),
            "Declare a float Box and round in the env, or use Discrete/MultiDiscrete",
        )
    return None


def policy_for(observation_space: Any) -> str:
    """SB3's policy name for an exported observation space: MultiInput / Cnn / Mlp."""
    from stable_baselines3.common.preprocessing import is_image_space  # SB3's own rule

    if isinstance(observation_space, gymnasium.spaces.Dict):
        return "MultiInputPolicy"
    if is_image_space(observation_space, check_channels=False):
        return "CnnPolicy"
    return "MlpPolicy"


def cnn_refusal(
    observation_space: Any, policy: str, policy_kwargs: Optional[Dict[str, Any]] = None
) -> Optional[ConversionError]:
    """The image SB3's NatureCNN cannot convolve under ``policy``, as a ConversionError, or None.

    SB3's own code decides: the images are what ``is_image_space`` finds with the arguments the
    policy passes, laid out as ``VecTransposeImage`` presents them, and NatureCNN is built on each.
    A custom ``features_extractor_class`` is the user's own and is not predicted.
    """
    from stable_baselines3.common.preprocessing import is_image_space
    from stable_baselines3.common.torch_layers import CombinedExtractor, NatureCNN

    kwargs = dict(policy_kwargs or {})
    default = {"CnnPolicy": NatureCNN, "MultiInputPolicy": CombinedExtractor}.get(policy)
    extractor = kwargs.get("features_extractor_class", default)
    # SB3's BaseModel: normalize_images=False makes both extractors take any 3-D Box as an image
    normalized = not kwargs.get("normalize_images", True) or bool(
        kwargs.get("features_extractor_kwargs", {}).get("normalized_image", False)
    )
    if extractor is NatureCNN:
        images = [("observation", observation_space)]
    elif extractor is CombinedExtractor and isinstance(observation_space, gymnasium.spaces.Dict):
        images = [(f"observation[{key!r}]", space) for key, space in observation_space.spaces.items()]
    else:
        return None
    for path, space in images:
        seen = _as_the_policy_sees(space)
        if not is_image_space(seen, check_channels=False, normalized_image=normalized):
            continue  # CombinedExtractor flattens it; for NatureCNN, SB3's own assertion speaks
        found = _nature_cnn_minimum(seen, normalized)
        if found is not None:
            return _too_small(path, policy, space, seen, *found)
    return None


def _as_the_policy_sees(space: Any) -> Any:
    """A fresh copy of ``space`` after SB3's VecTransposeImage (channel-last images become CHW)."""
    from stable_baselines3.common.preprocessing import is_image_space, is_image_space_channels_first
    from stable_baselines3.common.vec_env import VecTransposeImage

    if not isinstance(space, gymnasium.spaces.Box):
        return space
    if is_image_space(space) and not is_image_space_channels_first(space):
        return VecTransposeImage.transpose_space(space)
    # a copy: NatureCNN samples the space, which must not seed the export's own space
    return gymnasium.spaces.Box(space.low, space.high, space.shape, space.dtype)


def _nature_cnn_minimum(space: Any, normalized: bool) -> Optional[Tuple[Tuple[int, int], List[Any]]]:
    """None if SB3's NatureCNN builds on ``space``; else its smallest (height, width) and its convolutions."""
    import torch
    from stable_baselines3.common.torch_layers import NatureCNN

    # built in two steps so its layers stay readable when __init__'s probe forward pass raises
    cnn = NatureCNN.__new__(NatureCNN)
    with torch.random.fork_rng(devices=[]):  # weight init must not move the caller's torch RNG
        try:
            cnn.__init__(space, features_dim=1, normalized_image=normalized)
            return None
        except RuntimeError as e:
            failure = e
    convs = [m for m in cnn.cnn if isinstance(m, torch.nn.Conv2d)]
    smallest = [1, 1]
    for conv in reversed(convs):  # the input that leaves one output pixel, layer by layer backwards
        for axis in (0, 1):
            k, s, d, p = conv.kernel_size[axis], conv.stride[axis], conv.dilation[axis], conv.padding[axis]
            smallest[axis] = (smallest[axis] - 1) * s + d * (k - 1) + 1 - 2 * p
    if space.shape[1] >= smallest[0] and space.shape[2] >= smallest[1]:
        raise failure  # not a size problem: let torch's own message speak
    return (smallest[0], smallest[1]), convs


def _too_small(
    path: str, policy: str, space: Any, seen: Any, smallest: Tuple[int, int], convs: List[Any]
) -> ConversionError:
    layers = ", ".join(f"{c.kernel_size[0]}x{c.kernel_size[1]} stride {c.stride[0]}" for c in convs)
    minimum = f"{smallest[0]}x{smallest[1]}"
    where = "the image in the env" if path == "observation" else f"{path} in the env"
    instead = ", or use 'MlpPolicy' (--policy MlpPolicy)" if path == "observation" else ""
    return error(
        ConversionError,
        f"{path} for SB3's {policy!r}",
        f"be at least {minimum} pixels (the smallest image SB3's NatureCNN convolves: {layers})",
        f"{seen.shape[1]}x{seen.shape[2]}: {space!r}",
        f"Resize {where} to at least {minimum}, pass policy_kwargs={{'features_extractor_class': ...}} "
        f"with a features extractor for small images (envbridge train sb3 --policy-kwargs MODULE:ATTR){instead}; "
        "normalize_images=False alone does not help (SB3 still builds NatureCNN)",
    )

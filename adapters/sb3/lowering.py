"""What SB3 can train on: its refusals, its policy for an observation space, the float policy.

SB3 sits on the Gymnasium export (:mod:`bridge.adapters.gymnasium.lowering`); on top of it, SB3 has
one action distribution per policy (no Dict or hybrid action, no integer Box action) and computes
in float32, so a float64 Box observation is presented as float32 (``float64_as_float32``).
"""

from __future__ import annotations

from typing import Any, Optional

from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.errors import ConversionError, error

gymnasium = optional_import("gymnasium", "the SB3 export")

__all__ = ["sb3_refusal", "policy_for"]


def sb3_refusal(neutral_action_space: ns.Space, export: Any) -> Optional[ConversionError]:
    """The reason SB3 cannot train on this export, as a ConversionError, or None."""
    action = export.action_space
    if isinstance(action, gymnasium.spaces.Dict):
        kinds = {type(s).__name__ for s in action.spaces.values()}
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

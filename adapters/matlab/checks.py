"""The one-step validation behind ``validateEnvironment`` (reset, one sampled step, every output).

It knows no env class: an rlFunctionEnv passes its own vocabulary and a ``keep`` hook that puts it
back to just after the reset (MATLAB leaves the env as it was after validation's reset).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.errors import ContractError, error
from bridge.spaces import _describe_value

__all__ = ["validate_once", "NEUTRAL_WHERE", "FUNCTION_WHERE"]

ACTION_SEED = 0  # the sampled action does not touch env.np_random
NEUTRAL_WHERE = ("reset observation", "step observation")
FUNCTION_WHERE = ("ResetFcn output InitialObservation", "StepFcn output NextObservation")


def validate_once(env: Any, where: Tuple[str, str], keep: Optional[Callable[[], Callable[[], None]]] = None) -> None:
    """Reset ``env``, step once with a sampled action, and check every output against its spaces.

    ``keep()`` runs after the reset and returns the function that restores that moment afterwards.
    """
    out = env.reset()
    if not isinstance(out, tuple) or len(out) != 2:
        raise error(
            ContractError, "env.reset()", "return (observation, info)", _describe_value(out), "Return obs, info"
        )
    check_value(env.observation_space, out[0], where[0])
    restore = keep() if keep is not None else None
    action = env.action_space.sample(np.random.default_rng(ACTION_SEED))
    out = env.step(action)
    if not isinstance(out, tuple) or len(out) != 5:
        raise error(
            ContractError,
            "env.step()",
            "return (observation, reward, terminated, truncated, info)",
            _describe_value(out),
            "Return a 5-tuple",
        )
    observation, reward, terminated, truncated, _ = out
    check_value(env.observation_space, observation, where[1])
    if type(reward) is not float:
        raise error(ContractError, "step reward", "be a Python float", _describe_value(reward), "Return float(reward)")
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if type(flag) is not bool:
            raise error(
                ContractError, f"step {name}", "be a Python bool", _describe_value(flag), f"Return bool({name})"
            )
    if restore is not None:
        restore()


def check_value(space: spaces.Space, value: Any, where: str) -> None:
    found = space.mismatch(value, where)
    if found is not None:
        raise error(ContractError, *found)

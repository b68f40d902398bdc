"""A neutral :class:`bridge.VectorEnv` seen as a ``gymnasium.vector.VectorEnv``.

Batches stay batches: the lowering's batch functions map whole arrays, with no per-env loop. The
VectorEnv base owns autoreset (either mode, declared as Gymnasium's ``metadata["autoreset_mode"]``),
the lifecycle and the output checks; the export checks each batch of actions whole, in Gymnasium's
terms, before any sub-env moves, then hands it over decoded (one check per step).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np
from bridge.adapters.gymnasium.lowering import lower
from bridge.compat import optional_import

from bridge.errors import ContractError, SpecError, message
from bridge.vector import VectorEnv

gymnasium = optional_import("gymnasium", "the Gymnasium vector export")
from gymnasium.vector import AutoresetMode  # noqa: E402

__all__ = ["GymnasiumVectorEnv", "to_gymnasium_vector"]

_MODES = {"next-step": AutoresetMode.NEXT_STEP, "same-step": AutoresetMode.SAME_STEP}


class GymnasiumVectorEnv(gymnasium.vector.VectorEnv):
    """The export built by :func:`to_gymnasium_vector`."""

    def __init__(
        self,
        vector_env: VectorEnv,
        *,
        image_layout: str = "CHW",
        check_actions: bool = True,
        autoreset_mode: Optional[str] = None,
        float64_as_float32: bool = False,
    ) -> None:
        if not isinstance(vector_env, VectorEnv):
            raise SpecError(
                message(
                    "to_gymnasium_vector env",
                    "be a bridge.VectorEnv",
                    type(vector_env).__name__,
                    "Vectorize with bridge.vectorize or subclass bridge.VectorEnv",
                )
            )
        self.neutral = vector_env
        if autoreset_mode is not None:
            vector_env.autoreset_mode = autoreset_mode  # the base presents either mode
        self.num_envs = vector_env.num_envs
        self.observation_lowering = lower(
            vector_env.single_observation_space, "observation", gymnasium, image_layout, float64_as_float32
        )
        self.action_lowering = lower(vector_env.single_action_space, "actions", gymnasium, image_layout)
        self.single_observation_space = self.observation_lowering.space
        self.single_action_space = self.action_lowering.space
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.autoreset_mode = _MODES[vector_env.autoreset_mode]
        self.metadata = dict(vector_env.metadata or {})
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = vector_env.render_mode
        self._encode = self.observation_lowering.encode_batch
        self._decode = self.action_lowering.decode_batch
        self._invalid = self.action_lowering.invalid_batch if check_actions else None

    @property
    def np_random(self) -> np.random.Generator:  # type: ignore[override]
        return self.neutral.np_random

    def reset(self, *, seed: Any = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        obs, info = self.neutral.reset(seed=seed, options=options)
        return self._encode(obs), info

    def step(self, actions: Any) -> Tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        self.neutral.check_running()  # misuse is named before the actions
        if self._invalid is not None:
            bad = self._invalid(actions, "actions")
            if bad is None and _batch_size(actions) != self.num_envs:
                expectation = f"hold one action per env ({self.num_envs})"
                bad = ("actions", expectation, str(_batch_size(actions)), "Pass a batch from env.action_space.sample()")
            if bad is not None:
                raise ContractError(message(*bad))
        obs, rewards, terminated, truncated, infos = self.neutral.step_validated(self._decode(actions))
        if "final_obs" in infos:
            infos = dict(infos)
            infos["final_obs"] = self._encode(infos["final_obs"])
        return self._encode(obs), rewards, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        self.neutral.close()

    def __repr__(self) -> str:
        return f"GymnasiumVectorEnv({self.neutral!r})"


def _batch_size(actions: Any) -> int:
    while isinstance(actions, dict):
        actions = next(iter(actions.values()))
    return int(np.shape(actions)[0]) if np.ndim(actions) else -1


def to_gymnasium_vector(
    vector_env: VectorEnv,
    *,
    image_layout: str = "CHW",
    check_actions: bool = True,
    autoreset_mode: Optional[str] = None,
    float64_as_float32: bool = False,
) -> Any:
    """Export a :class:`bridge.VectorEnv` as a ``gymnasium.vector.VectorEnv``.

    ``autoreset_mode`` ("next-step" or "same-step") is the mode Gymnasium sees; None keeps the
    VectorEnv's own. The export owns the VectorEnv from now on.
    """
    return GymnasiumVectorEnv(
        vector_env,
        image_layout=image_layout,
        check_actions=check_actions,
        autoreset_mode=autoreset_mode,
        float64_as_float32=float64_as_float32,
    )

"""A neutral :class:`bridge.VectorEnv` seen as a ``gymnasium.vector.VectorEnv``.

Batches stay batches: the lowering's batch functions map whole arrays, with no per-env loop. The
VectorEnv base owns autoreset (either mode, declared as Gymnasium's ``metadata["autoreset_mode"]``),
the lifecycle and the output checks; the batch port (:mod:`bridge.adapters._shared.batch`) checks
each batch of actions whole, in Gymnasium's terms, before any sub-env moves, then hands it over
decoded (one check per step).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Optional, Tuple

import numpy as np
from bridge.adapters._shared.batch import BatchExport
from bridge.adapters.gymnasium.lowering import lower
from bridge.compat import optional_import

from bridge.errors import ContractError, error

gymnasium = optional_import("gymnasium", "the Gymnasium vector export")
from gymnasium.vector import AutoresetMode  # noqa: E402

__all__ = ["GymnasiumVectorEnv", "to_gymnasium_vector"]

_MODES = {
    "next-step": AutoresetMode.NEXT_STEP,
    "same-step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}
_BASE_FINAL = ("final_obs", "_final_obs", "final_info")  # the VectorEnv base's same-step keys


class GymnasiumVectorEnv(BatchExport, gymnasium.vector.VectorEnv):
    """The export built by :func:`to_gymnasium_vector`."""

    runtime = "gymnasium"
    export_name = "to_gymnasium_vector"
    lower = staticmethod(lower)

    def present(self) -> None:
        vector_env = self.neutral
        self.single_observation_space = self.observation_lowering.space
        self.single_action_space = self.action_lowering.space
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.autoreset_mode = _MODES[vector_env.autoreset_mode]
        self.metadata = dict(vector_env.metadata or {})
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = vector_env.render_mode

    @property
    def np_random(self) -> np.random.Generator:  # type: ignore[override]
        return self.neutral.np_random

    @property
    def np_random_seed(self) -> Tuple[Optional[int], ...]:  # type: ignore[override]
        """The seed of each sub-env's last seeded reset (None: never seeded), as SyncVectorEnv's tuple."""
        return self.neutral.seeds

    def reset(self, *, seed: Any = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        return self.reset_batch(seed, options)

    def step(self, actions: Any) -> Tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, rewards, terminated, truncated, infos = self.step_batch(actions)
        if "_final_obs" in infos:  # same-step: the base's keys in Gymnasium's own layout
            infos = self._final_layout(infos)
        return obs, rewards, terminated, truncated, infos

    def _final_layout(self, infos: Dict[str, Any]) -> Dict[str, Any]:
        """Gymnasium 1.3's same-step keys: only on a step where some sub-env ended, ``final_obs`` an
        object array of the ended sub-envs' final observations (None elsewhere), ``final_info``
        their ending step's infos, each with its mask (``_final_obs``, ``_final_info``)."""
        ended = infos["_final_obs"]
        out = {k: v for k, v in infos.items() if k not in _BASE_FINAL}
        if not ended.any():
            return out
        final = np.full(self.num_envs, None, dtype=object)
        rows = list(gymnasium.vector.utils.iterate(self.observation_space, self._encode(infos["final_obs"])))
        for i in np.flatnonzero(ended).tolist():
            final[i] = copy.deepcopy(rows[i])  # its own arrays, as a sub-env's observation
        out.update(final_obs=final, _final_obs=ended, final_info=infos.get("final_info", {}), _final_info=ended.copy())
        return out

    # -- Gymnasium's sub-env access (the VectorEnv's sub-env objects, where it has them) ----------
    def call(self, name: str, *args: Any, **kwargs: Any) -> Tuple[Any, ...]:
        return self._sub_envs("call").call(name, *args, **kwargs)

    def get_attr(self, name: str) -> Tuple[Any, ...]:
        return self._sub_envs("get_attr").get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        self._sub_envs("set_attr").set_attr(name, values)

    def _sub_envs(self, method: str) -> Any:
        if not hasattr(self.neutral, "apply_envs"):
            raise error(
                ContractError,
                f"{type(self).__name__}.{method}()",
                "reach sub-env objects (a bridge.SyncVectorEnv or ProcessVectorEnv has them)",
                f"a {type(self.neutral).__name__}, one batched simulator",
                "Read or set the attribute on the VectorEnv itself (export.neutral)",
            )
        return self.neutral

    def close_extras(self, **kwargs: Any) -> None:
        neutral = self.__dict__.get("neutral")  # a refused export has none (Gymnasium's __del__ still closes it)
        if neutral is not None:
            neutral.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.neutral!r})"


def to_gymnasium_vector(vector_env: Any, **options: Any) -> GymnasiumVectorEnv:
    """Export a :class:`bridge.VectorEnv` (an instance, or its class/factory with kwargs) as a
    ``gymnasium.vector.VectorEnv``; the export owns it from now on.

    Options (docs/options.md): ``check_actions``, ``strict``, ``float64_as_float32``,
    ``normalize_actions``, ``image_layout`` (as for :func:`to_gymnasium`) and ``autoreset_mode``
    ("next-step", "same-step" or "disabled": the mode Gymnasium sees; None keeps the VectorEnv's own;
    Gymnasium's own ``AutoresetMode.NEXT_STEP`` or its value ``"NextStep"`` name the same modes).
    """
    mode = options.get("autoreset_mode")
    if isinstance(mode, (AutoresetMode, str)):
        options["autoreset_mode"] = _NEUTRAL_MODES.get(mode, mode)
    return GymnasiumVectorEnv(vector_env, **options)


# Gymnasium's spellings of the modes (the enum and its values) -> the neutral ones
_NEUTRAL_MODES = {
    **{gym_mode: mode for mode, gym_mode in _MODES.items()},
    **{gym_mode.value: mode for mode, gym_mode in _MODES.items()},
}

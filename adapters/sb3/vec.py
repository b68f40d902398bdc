"""A neutral :class:`bridge.VectorEnv` as an SB3 ``VecEnv``, stepped as one numpy batch.

The VectorEnv base presents its batch in SB3's "same-step" autoreset mode whatever mode it was
built with, owns the lifecycle and the output checks; the export checks each batch of actions whole
before any sub-env moves and presents float64 observations as float32 (the one float policy).
SB3's conventions are kept: automatic reset on the ending step,
``info["terminal_observation"]``, ``info["TimeLimit.truncated"] = truncated and not terminated``
and Monitor-style ``info["episode"] = {"r", "l", "t"}``. Every env gets a fresh dict each step
(VecMonitor and users write into them, so none is shared or reused); the only per-env Python loop
is over the envs whose episode just ended.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from bridge.adapters._shared.batch import BatchExport
from bridge.adapters._shared.lowering import Lowering
from bridge.adapters.gymnasium.lowering import lower
from bridge.compat import optional_import

from bridge.vector import VectorEnv

optional_import("stable_baselines3", "the SB3 export")
import gymnasium  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

__all__ = ["BatchedVecEnv"]

_FINAL = ("final_obs", "_final_obs", "final_info")  # the VectorEnv base's same-step autoreset keys


class BatchedVecEnv(BatchExport, VecEnv):
    """The SB3 face of a same-step :class:`bridge.VectorEnv` (build it with ``make_vec_env``)."""

    runtime = "sb3"
    export_name = "make_vec_env"
    autoreset_mode = "same-step"  # SB3 resets on the ending step; the base presents it

    def lowerings(self, vector_env: VectorEnv, options: Dict[str, Any]) -> Tuple[Lowering, Lowering]:
        return (
            lower(vector_env.single_observation_space, path="observation", options=options),
            lower(vector_env.single_action_space, path="actions", options=options),
        )

    def present(self) -> None:
        n = self.num_envs
        self._encode = self.observation_lowering.encode_batch
        self._decode = self.action_lowering.decode_batch
        self._check = self.port.check
        self._dict_obs = isinstance(self.observation_lowering.space, gymnasium.spaces.Dict)
        self._actions: Any = None
        self._returns = np.zeros(n, dtype=np.float64)
        self._begin = [0] * n  # the step count at which each episode began (Python ints: set per ended env)
        self._envs = range(n)
        self._count = 0  # steps since reset(): an episode's length is count - begin, nothing per env
        self._t_start = time.time()
        VecEnv.__init__(self, n, self.observation_lowering.space, self.action_lowering.space)

    # -- stepping ------------------------------------------------------------------------------
    def reset(self) -> Any:
        # one Generator serves the batch: the first seed SB3 planned seeds it
        seed = self._seeds[0]
        obs, info = self.neutral.reset(seed=seed, options=self._options[0] or None)
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._begin[:] = [0] * self.num_envs
        self._count = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._encode(obs)

    def step(self, actions: np.ndarray) -> Any:
        # SB3's step_async + step_wait in one call: the same checks, one indirection less
        self._check(actions)
        return self._step(actions)

    def step_async(self, actions: np.ndarray) -> None:
        self._check(actions)
        self._actions = actions

    def step_wait(self) -> Any:
        return self._step(self._actions)

    def _step(self, actions: Any) -> Any:
        obs, rewards, terminated, truncated, infos = self.neutral.step_validated(self._decode(actions))
        self._returns += rewards
        self._count += 1
        out: List[dict] = [{} for _ in self._envs]  # fresh: SB3 and users write into them
        if len(infos) > 2 + ("final_info" in infos):  # the env reported something besides the autoreset keys
            _scatter(infos, out)
        if "final_info" in infos:  # the base adds it exactly when some env ended
            self._finish(out, infos, terminated, truncated)
        return self._encode(obs), rewards.astype(np.float32), infos["_final_obs"], out

    def _finish(self, out: List[dict], infos: dict, terminated: Any, truncated: Any) -> None:
        """SB3's end-of-episode keys for the ended envs (the only per-env loop, over them alone)."""
        ended = infos["_final_obs"].nonzero()[0]  # the base's terminated | truncated (same-step mode)
        final_info = infos["final_info"]
        final = self._encode(infos["final_obs"])
        now = round(time.time() - self._t_start, 6)
        final_keys: List[str] = []
        masks = {}
        if final_info:
            final_keys = [k for k in final_info if not k.startswith("_") and k not in _FINAL]
            masks = {k: final_info.get("_" + k, np.ones(self.num_envs, bool)) for k in final_keys}
        index = ended.tolist()
        if self._dict_obs:
            picked: Any = [{k: v[i] for k, v in final.items()} for i in index]
        else:
            picked = final[ended]  # a copy: rows that no later step of the env can change
        # on bools, truncated > terminated is truncated and not terminated: one numpy call, not two
        cut = (truncated > terminated)[ended].tolist()
        returns = self._returns[ended].tolist()
        self._returns[ended] = 0.0
        begin, count = self._begin, self._count
        for i, terminal, time_out, ret in zip(index, picked, cut, returns):
            info = {
                "terminal_observation": terminal,
                "TimeLimit.truncated": time_out,
                "episode": {"r": round(ret, 6), "l": count - begin[i], "t": now},  # Monitor's rounding
            }
            begin[i] = count
            if final_info:  # SB3 shows the ending step's info (the new episode's is a reset info)
                info = {**{k: final_info[k][i] for k in final_keys if masks[k][i]}, **info}
            out[i] = info

    # -- the rest of SB3's VecEnv interface: one env object serves every index ---------------------
    def close(self) -> None:
        self.neutral.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> List[Any]:
        return [getattr(self.neutral, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.neutral, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> List[Any]:
        result = getattr(self.neutral, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> List[bool]:
        return [False] * len(self._get_indices(indices))

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return [None] * self.num_envs


def _scatter(infos: dict, out: List[Any]) -> None:
    """Gymnasium's batched info layout (``key`` + ``_key`` mask) to SB3's list of dicts."""
    for key, value in infos.items():
        if key.startswith("_") or key in _FINAL:
            continue
        mask = infos.get("_" + key)
        where = np.flatnonzero(mask).tolist() if mask is not None else range(len(out))
        for i in where:
            out[i][key] = value[i]

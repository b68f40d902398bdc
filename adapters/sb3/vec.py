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
import warnings
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
from bridge.adapters._shared.batch import BatchExport
from bridge.adapters._shared.lowering import Lowering
from bridge.adapters.gymnasium.lowering import FLAT, lower
from bridge.adapters.sb3.lowering import sb3_refusal
from bridge.compat import optional_import

from bridge.errors import SpecError, error
from bridge.vector.batches import as_batch
from bridge.vector.infos import env_infos

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

    def lower(self, space: Any, *, path: str, options: Dict[str, Any]) -> Lowering:
        """The Gymnasium lowering, flattened as SB3's batched policies read it."""
        return lower(space, path=path, options={**options, FLAT: True})

    def present(self) -> None:
        refusal = sb3_refusal(self.neutral.single_action_space, self.action_lowering.space)
        if refusal is not None:  # what SB3 cannot train on is refused here, as for scalar envs
            raise refusal
        n = self.num_envs
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
        obs, infos = self.neutral.reset(seed=seed, options=self._options[0] or None)
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._begin[:] = [0] * self.num_envs
        self._count = 0
        self.reset_infos = env_infos(infos, [{} for _ in self._envs])
        return self._encode(obs)

    def set_options(self, options: Any = None) -> None:
        """SB3's ``set_options``; the batch resets with one options dict, so per-env options that
        differ are refused here (not handed to every env as env 0's)."""
        listed = options if isinstance(options, (list, tuple)) else [options or {}] * self.num_envs
        if len(listed) != self.num_envs or any(not _same_options(o or {}, listed[0] or {}) for o in listed):
            fix = (
                "Pass one dict for every env, or build scalar envs (make_vec_env(factory, n_envs)) for per-env options"
            )
            expectation = "be one options dict for every env of a batched VecEnv (they reset as one batch)"
            raise error(SpecError, "set_options options", expectation, f"{len(listed)} differing dicts", fix)
        super().set_options(options)

    def step(self, actions: np.ndarray) -> Any:
        # SB3's step_async + step_wait in one call: the same checks, one indirection less
        actions = as_batch(actions)  # a list of per-env actions, as DummyVecEnv takes
        self.check_batch(actions)
        return self._step(actions)

    def step_async(self, actions: np.ndarray) -> None:
        actions = as_batch(actions)
        self.check_batch(actions)
        self._actions = actions

    def step_wait(self) -> Any:
        return self._step(self._actions)

    def _step(self, actions: Any) -> Any:
        obs, rewards, terminated, truncated, infos = self.neutral.step_validated(self._decode(actions))
        self._returns += rewards
        self._count += 1
        out: List[dict] = [{} for _ in self._envs]  # fresh: SB3 and users write into them
        if len(infos) > 2 + ("final_info" in infos):  # the env reported something besides the autoreset keys
            env_infos(infos, out, _FINAL)
        cut = (truncated > terminated).tolist()  # on bools: truncated and not terminated, one numpy call
        for info, time_out in zip(out, cut):
            info["TimeLimit.truncated"] = time_out  # on every env, as DummyVecEnv sets it
        if "final_info" in infos:  # the base adds it exactly when some env ended
            self._finish(out, infos)
        return self._encode(obs), rewards.astype(np.float32), infos["_final_obs"], out

    def _finish(self, out: List[dict], infos: dict) -> None:
        """SB3's end-of-episode keys for the ended envs (the only per-env loop, over them alone): the
        ending step's info with ``terminal_observation`` and Monitor's ``episode``; the new
        episode's reset info goes to ``reset_infos``, as DummyVecEnv does."""
        ended = infos["_final_obs"].nonzero()[0]  # the base's terminated | truncated (same-step mode)
        final = self._encode(infos["final_obs"])
        now = round(time.time() - self._t_start, 6)
        index = ended.tolist()
        finals = env_infos(infos["final_info"], [{} for _ in self._envs])
        if self._dict_obs:
            picked: Any = [{k: v[i] for k, v in final.items()} for i in index]
        else:
            picked = final[ended]  # a copy: rows that no later step of the env can change
        returns = self._returns[ended].tolist()
        self._returns[ended] = 0.0
        begin, count = self._begin, self._count
        for i, terminal, ret in zip(index, picked, returns):
            finals[i].update(
                {
                    "TimeLimit.truncated": out[i]["TimeLimit.truncated"],
                    "terminal_observation": terminal,
                    "episode": {"r": round(ret, 6), "l": count - begin[i], "t": now},  # Monitor's rounding
                }
            )
            # the top level holds the reset info of an env that just reset
            self.reset_infos[i] = {k: v for k, v in out[i].items() if k != "TimeLimit.truncated"}
            begin[i] = count
            out[i] = finals[i]

    # -- the rest of SB3's VecEnv interface: one env object serves every index ---------------------
    def close(self) -> None:
        self.neutral.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> List[Any]:
        if hasattr(self.neutral, "apply_envs"):  # scalar sub-envs: each one's own attribute
            return self.neutral.apply_envs("get", attr_name, None, self._get_indices(indices))
        return [getattr(self.neutral, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        chosen = self._get_indices(indices)
        if hasattr(self.neutral, "apply_envs"):
            self.neutral.apply_envs("set", attr_name, [value] * len(chosen), chosen)
            return
        # a batched simulator: an attribute with one row per env is set in the chosen rows; one
        # value shared by every env is set only when every env is chosen (never silently for all)
        current = getattr(self.neutral, attr_name, None)
        rows = isinstance(current, np.ndarray) and current.shape[:1] == (self.num_envs,)
        if rows:
            current[list(chosen)] = value
        elif sorted(chosen) == list(range(self.num_envs)):
            setattr(self.neutral, attr_name, value)
        else:
            fix = (
                "Pass indices=None to set it for every env, or hold it per env as an array with one row per env "
                f"({type(self.neutral).__name__} steps all envs as one batch)"
            )
            got = f"indices {list(chosen)} of {self.num_envs} envs that share one {attr_name!r}"
            raise error(SpecError, f"set_attr({attr_name!r})", "set one value for every env of the batch", got, fix)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> List[Any]:
        chosen = self._get_indices(indices)
        if hasattr(self.neutral, "apply_envs"):  # HER's compute_reward reaches the user env here
            return self.neutral.apply_envs("call", method_name, (method_args, method_kwargs), chosen)
        result = getattr(self.neutral, method_name)(*method_args, **method_kwargs)
        return [result] * len(chosen)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> List[bool]:
        return [False] * len(self._get_indices(indices))

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        if self.render_mode != "rgb_array":
            warnings.warn(f"The render mode is {self.render_mode}, but get_images() needs 'rgb_array'", stacklevel=2)
            return [None] * self.num_envs
        if hasattr(self.neutral, "apply_envs"):
            return self.neutral.apply_envs("call", "render", ((), {}))
        frames = self.neutral.render() if hasattr(self.neutral, "render") else None
        return list(frames) if frames is not None else [None] * self.num_envs


def _same_options(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except ValueError:  # arrays inside: compare as identical objects only
        return a is b

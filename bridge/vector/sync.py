"""Scalar envs behind the VectorEnv base: in this process (:class:`SyncVectorEnv`) or one worker
process each (:class:`~bridge.vector.process.ProcessVectorEnv`), and what both share."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from bridge import checks, spaces
from bridge.env import Env
from bridge.errors import ContractError, SpecError, error
from bridge.vector.base import VectorEnv, VectorStepResult
from bridge.workers import raised

__all__ = ["SyncVectorEnv", "ScalarBatch", "merge_env_infos", "check_scalar_step", "same_spaces"]


def same_spaces(described: Sequence[Tuple[spaces.Space, spaces.Space]], close: Callable[[], None]) -> None:
    """Every sub-env has env 0's spaces, or (after ``close()``) the house SpecError."""
    first = described[0]
    for i, (obs_space, act_space) in enumerate(described):
        if obs_space != first[0] or act_space != first[1]:
            close()
            raise error(SpecError, f"env {i} spaces", "equal env 0's spaces", repr(obs_space), "Build identical envs")


def check_scalar_step(out: Any, name: str) -> Tuple[Any, float, bool, bool, dict]:
    """One sub-env's step output, checked as the single-env guard checks it."""
    if type(out) is not tuple or len(out) != 5:
        got = f"a {len(out)}-tuple" if isinstance(out, tuple) else type(out).__name__
        fix = "Split done into terminated and truncated"
        raise error(
            ContractError, f"{name} step()", "return a 5-tuple (obs, reward, terminated, truncated, info)", got, fix
        )
    obs, reward, terminated, truncated, info = out
    if type(reward) is not float:
        raise error(ContractError, f"{name} step reward", "be a Python float", repr(reward), "Return float(reward)")
    if reward - reward != 0.0:  # NaN or inf: the single-env guard's rule, the same message
        fix = "Guard the reward computation against NaN and inf"
        raise error(ContractError, f"{name} step reward", "be finite", reward, fix)
    if type(info) is not dict:
        got = f"{type(info).__name__} {info!r}"
        raise error(ContractError, f"{name} step info", "be a dict", got, "Return {} when there is nothing to report")
    for label, flag in (("terminated", terminated), ("truncated", truncated)):
        if type(flag) is not bool:
            raise error(ContractError, f"{name} step {label}", "be a Python bool", repr(flag), f"Return bool({label})")
    return out


def merge_env_infos(infos: List[Optional[dict]], n: int) -> Dict[str, Any]:
    """Per-sub-env info dicts (None: nothing from that sub-env) in Gymnasium's vector layout:
    ``info[key]`` an array, ``info["_" + key]`` the mask of the sub-envs that reported it."""
    merged: Dict[str, Any] = {}
    for i, info in enumerate(infos):
        for key, value in (info or {}).items():
            if key not in merged:
                kind = np.asarray(value).dtype if np.isscalar(value) else np.dtype(object)
                merged[key] = np.zeros(n, dtype=kind) if kind.kind != "O" else np.full(n, None, dtype=object)
                merged["_" + key] = np.zeros(n, dtype=bool)
            merged[key][i] = value
            merged["_" + key][i] = True
    return merged


class ScalarBatch(VectorEnv):
    """What a batch of scalar envs shares: each sub-env's latest observation, checked, then stacked."""

    def _keep(self, i: int, obs: Any, where: str, name: str) -> None:
        """Keep sub-env ``i``'s observation, of exactly the space's dtype and shape (a stack would cast)."""
        if getattr(self, "_last", None) is None:
            self._last: List[Any] = [None] * self.num_envs
            self._check_one = checks.value_check(self.single_observation_space, full=False)
        found = self._check_one(obs, f"{name} {where} observation")
        if found is not None:
            raise error(ContractError, *found)
        self._last[i] = obs

    def _stack(self) -> Any:
        """The batch of the sub-envs' latest observations (a sub-env not reset yet repeats another's)."""
        first = next(o for o in self._last if o is not None)
        return spaces.stack(self.single_observation_space, [first if o is None else o for o in self._last])


class SyncVectorEnv(ScalarBatch):
    """Scalar :class:`bridge.Env` instances looped in Python behind the batched interface."""

    def __init__(self, env_fns: Sequence[Callable[[], Env]], autoreset_mode: str = "next-step") -> None:
        if not env_fns:
            raise error(SpecError, "vectorize num_envs", "be >= 1", 0, "Pass at least one env")
        self.envs = [fn() for fn in env_fns]
        same_spaces([(e.observation_space, e.action_space) for e in self.envs], self.close_envs)
        first = self.envs[0]
        self.num_envs = len(self.envs)
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.autoreset_mode = autoreset_mode
        self.metadata = first.metadata
        self.render_mode = first.render_mode

    def reset_envs(self, mask: np.ndarray, seeds: List[Optional[int]], options: Optional[dict]) -> Tuple[Any, dict]:
        infos: List[Optional[dict]] = [None] * self.num_envs
        for i in np.flatnonzero(mask).tolist():
            obs, infos[i] = self._sub(i, "reset", self.envs[i].reset, seed=seeds[i], options=options)
            self._keep(i, obs, "reset", f"env {i}")
        return self._stack(), merge_env_infos(infos, self.num_envs)

    def step_envs(self, actions: Any, active: np.ndarray) -> VectorStepResult:
        n = self.num_envs
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        infos: List[Optional[dict]] = [None] * n
        space = self.single_action_space
        for i in np.flatnonzero(active).tolist():
            out = self._sub(i, "step", self.envs[i].step, spaces.iterate(space, actions, i))
            obs, rewards[i], terminated[i], truncated[i], infos[i] = check_scalar_step(out, f"env {i}")
            self._keep(i, obs, "step", f"env {i}")
        return self._stack(), rewards, terminated, truncated, merge_env_infos(infos, n)

    def close_envs(self) -> None:
        for env in self.envs:
            env.close()

    def _sub(self, i: int, call: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            steps = int(self.episode_steps[i])
            where = f"at step {steps + 1}" if call == "step" else f"at reset (after step {steps})"
            expectation, actual, fix = raised(call, f"{type(e).__name__}: {e}")
            raise error(ContractError, f"env {i} ({self.envs[i]!r}) {where}", expectation, actual, fix) from e

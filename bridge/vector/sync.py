"""Scalar envs behind the VectorEnv base: in this process (:class:`SyncVectorEnv`) or one worker
process each (:class:`~bridge.vector.process.ProcessVectorEnv`), and what both share."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from bridge import checks, spaces
from bridge.env import Env
from bridge.errors import BatchError, ContractError, SpecError, error
from bridge.vector.base import VectorEnv, VectorStepResult
from bridge.vector.infos import merge_env_infos
from bridge.workers import apply, raised

__all__ = ["SyncVectorEnv", "ScalarBatch", "same_spaces", "distinct_envs"]


def same_spaces(described: Sequence[Tuple[spaces.Space, spaces.Space]], close: Callable[[], None]) -> None:
    """Every sub-env has env 0's spaces, or (after ``close()``) the house SpecError."""
    first = described[0]
    for i, (obs_space, act_space) in enumerate(described):
        if obs_space != first[0] or act_space != first[1]:
            close()
            raise error(SpecError, f"env {i} spaces", "equal env 0's spaces", repr(obs_space), "Build identical envs")


def distinct_envs(envs: Sequence[Any], close: Callable[[], None]) -> None:
    """Every slot holds its own env object (one instance in several slots would step it several
    times a batch), or (after ``close()``) the SpecError SB3's DummyVecEnv also raises (a ValueError)."""
    users = [id(getattr(e.unwrapped, "neutral", e.unwrapped).unwrapped) for e in envs]
    if len(set(users)) != len(users):
        close()
        first = next(i for i, u in enumerate(users) if users.index(u) != i)
        raise error(
            SpecError,
            f"env {first}",
            "be its own instance (every slot steps its env once a batch)",
            f"the instance of env {users.index(users[first])} again",
            "Pass a factory that builds a new env on every call, e.g. lambda: MyEnv(), not lambda: env",
        )


class ScalarBatch(VectorEnv):
    """What a batch of scalar envs shares: each sub-env's latest observation, checked, then stacked,
    and Gymnasium's ``call`` / ``get_attr`` / ``set_attr`` reaching each sub-env object."""

    def call(self, name: str, *args: Any, **kwargs: Any) -> Tuple[Any, ...]:
        """Each sub-env's ``name`` called with the arguments (an attribute that is not callable: its value)."""
        return tuple(self.apply_envs("call", name, (args, kwargs)))

    def get_attr(self, name: str) -> Tuple[Any, ...]:
        """Each sub-env's ``name`` (through its wrapper stack); a method is called, as Gymnasium's get_attr."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set ``name`` on each sub-env: ``values`` one per sub-env (a list or tuple), else one for all."""
        self.apply_envs("set", name, values)

    def apply_envs(self, op: str, name: str, payload: Any, indices: Optional[Sequence[int]] = None) -> List[Any]:
        """``bridge.workers.apply(env, op, name, payload)`` on the sub-envs at ``indices`` (all by
        default); for "set", ``payload`` is one value per listed sub-env (a list or tuple) or one for all."""
        chosen = list(range(self.num_envs)) if indices is None else [int(i) for i in indices]
        payloads = [payload] * len(chosen)
        if op == "set" and isinstance(payload, (list, tuple)):
            if len(payload) != len(chosen):
                fix = "Pass one value per env, or a single value (not a list) for all"
                expectation = f"hold one value per env ({len(chosen)})"
                raise error(BatchError, f"set_attr({name!r}) values", expectation, f"{len(payload)} values", fix)
            payloads = list(payload)
        return self._apply(op, name, chosen, payloads)

    def _apply(self, op: str, name: str, chosen: List[int], payloads: List[Any]) -> List[Any]:
        return [apply(self.envs[i], op, name, p) for i, p in zip(chosen, payloads)]  # type: ignore[attr-defined]

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
        distinct_envs(self.envs, self.close_envs)
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
            obs, rewards[i], terminated[i], truncated[i], infos[i] = checks.step_output(out, f"env {i}")
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

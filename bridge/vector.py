"""Batched environments: the :class:`VectorEnv` definition and :func:`vectorize`."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from bridge import spaces
from bridge.env import Env
from bridge.errors import ContractError, SpecError, message

__all__ = ["VectorEnv", "SyncVectorEnv", "vectorize", "AUTORESET_MODES", "VectorStepResult"]

AUTORESET_MODES = ("next-step", "same-step")
VectorStepResult = Tuple[Any, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]
Seeds = Union[None, int, Sequence[Optional[int]]]


class VectorEnv:
    """``num_envs`` environments stepped as one numpy batch.

    Subclasses set ``num_envs``, ``single_observation_space``, ``single_action_space`` and
    ``autoreset_mode``, and implement :meth:`reset` and :meth:`step` over batched arrays
    (rewards float64, flags bool, each of shape ``(num_envs,)``).

    Autoreset modes:
      * ``"next-step"`` (Gymnasium 1.x): the step after an episode ends resets that sub-env and
        ignores its action; the step that ended it returns the final observation.
      * ``"same-step"`` (SB3): the ending step resets at once and returns the first observation of
        the new episode; the final observation is in ``infos["final_obs"]`` where
        ``infos["_final_obs"]`` is True (and the final infos in ``infos["final_info"]``).
    """

    num_envs: int
    single_observation_space: spaces.Space
    single_action_space: spaces.Space
    autoreset_mode: str = "next-step"
    metadata: Dict[str, Any] = {"render_modes": [], "render_fps": None}
    render_mode: Optional[str] = None
    _np_random: Optional[np.random.Generator] = None

    @property
    def observation_space(self) -> spaces.Space:
        return spaces.batch_space(self.single_observation_space, self.num_envs)

    @property
    def action_space(self) -> spaces.Space:
        return spaces.batch_space(self.single_action_space, self.num_envs)

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    def reset(self, *, seed: Seeds = None, options: Optional[dict] = None) -> Tuple[Any, Dict[str, Any]]:
        """Reset every sub-env; subclasses call ``super().reset(seed=seed)`` for the Generator."""
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            self._np_random = np.random.default_rng(int(seed))
        return None  # type: ignore[return-value]

    def step(self, actions: Any) -> VectorStepResult:
        raise NotImplementedError(f"{type(self).__name__}.step is not implemented")

    def close(self) -> None:
        """Release resources; safe to call twice."""

    def __enter__(self) -> VectorEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} num_envs={self.num_envs} autoreset={self.autoreset_mode}>"


def _check_mode(mode: str) -> str:
    if mode not in AUTORESET_MODES:
        raise SpecError(message("autoreset_mode", f"be one of {AUTORESET_MODES}", mode, "Pick one"))
    return mode


def _seed_list(seed: Seeds, n: int) -> List[Optional[int]]:
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return [int(seed) + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise SpecError(message("reset seed list", f"have {n} entries", len(seeds), "Pass one seed per env"))
    return seeds


class SyncVectorEnv(VectorEnv):
    """Scalar :class:`bridge.Env` instances looped in Python behind the batched interface."""

    def __init__(self, env_fns: Sequence[Callable[[], Env]], autoreset_mode: str = "next-step") -> None:
        self.envs = [fn() for fn in env_fns]
        if not self.envs:
            raise SpecError(message("vectorize num_envs", "be >= 1", 0, "Pass at least one env"))
        first = self.envs[0]
        for i, env in enumerate(self.envs):
            if env.observation_space != first.observation_space or env.action_space != first.action_space:
                raise SpecError(
                    message(
                        f"env {i} spaces", "equal env 0's spaces", repr(env.observation_space), "Build identical envs"
                    )
                )
        self.num_envs = len(self.envs)
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.autoreset_mode = _check_mode(autoreset_mode)
        self.metadata = first.metadata
        self.render_mode = first.render_mode
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._steps = np.zeros(self.num_envs, dtype=np.int64)

    def reset(self, *, seed: Seeds = None, options: Optional[dict] = None) -> Tuple[Any, Dict[str, Any]]:
        results = [env.reset(seed=s, options=options) for env, s in zip(self.envs, _seed_list(seed, self.num_envs))]
        self._needs_reset[:] = False
        self._steps[:] = 0
        obs = spaces.stack(self.single_observation_space, [r[0] for r in results])
        return obs, _merge_infos([r[1] for r in results])

    def step(self, actions: Any) -> VectorStepResult:
        space = self.single_action_space
        n = self.num_envs
        obs_list: List[Any] = []
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        infos: List[dict] = []
        final_obs: List[Any] = [None] * n
        final_info: List[Optional[dict]] = [None] * n
        for i, env in enumerate(self.envs):
            if self._needs_reset[i]:  # next-step mode: this step only resets
                obs, info = env.reset()
                self._needs_reset[i] = False
                self._steps[i] = 0
            else:
                action = spaces.iterate(space, actions, i)
                try:
                    obs, reward, term, trunc, info = env.step(action)
                except Exception as e:
                    raise ContractError(
                        message(
                            f"env {i} ({env!r}) at step {int(self._steps[i]) + 1}",
                            "step without raising",
                            f"{type(e).__name__}: {e}",
                            "Fix the error in the env's step()",
                        )
                    ) from e
                self._steps[i] += 1
                rewards[i], terminated[i], truncated[i] = reward, term, trunc
                if term or trunc:
                    if self.autoreset_mode == "same-step":
                        final_obs[i], final_info[i] = obs, info
                        obs, info = env.reset()
                        self._steps[i] = 0
                    else:
                        self._needs_reset[i] = True
            obs_list.append(obs)
            infos.append(info)
        batch_obs = spaces.stack(self.single_observation_space, obs_list)
        merged = _merge_infos(infos)
        if self.autoreset_mode == "same-step":
            mask = terminated | truncated
            merged["_final_obs"] = mask
            # ended slots hold the final observation; the rest repeat the current one
            merged["final_obs"] = spaces.stack(
                self.single_observation_space, [f if m else o for f, o, m in zip(final_obs, obs_list, mask)]
            )
            merged["final_info"] = final_info
        return batch_obs, rewards, terminated, truncated, merged

    def close(self) -> None:
        for env in self.envs:
            env.close()


def _merge_infos(infos: List[dict]) -> Dict[str, Any]:
    """Gymnasium's vector info layout: ``info[key]`` is an array, ``info["_" + key]`` a mask."""
    merged: Dict[str, Any] = {}
    n = len(infos)
    for i, info in enumerate(infos):
        for key, value in info.items():
            if key not in merged:
                kind = np.asarray(value).dtype if np.isscalar(value) else np.dtype(object)
                merged[key] = np.zeros(n, dtype=kind) if kind.kind != "O" else np.full(n, None, dtype=object)
                merged["_" + key] = np.zeros(n, dtype=bool)
            merged[key][i] = value
            merged["_" + key][i] = True
    return merged


def vectorize(
    env_fn: Callable[[], Env],
    num_envs: int,
    *,
    autoreset_mode: str = "next-step",
    workers: str = "sync",
    timeout: Optional[float] = None,
) -> VectorEnv:
    """``num_envs`` copies of ``env_fn()`` behind the :class:`VectorEnv` interface.

    ``workers="sync"`` loops them in this process (:class:`SyncVectorEnv`); ``"process"`` runs
    each in its own worker process (:class:`bridge.vector_process.ProcessVectorEnv`: ``env_fn``
    must pickle; a worker that raises, dies or exceeds ``timeout`` seconds is a ContractError
    naming the env and the step, and all workers are closed).
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise SpecError(message("vectorize num_envs", "be an int >= 1", num_envs, "Pass e.g. num_envs=4"))
    if workers == "process":
        from bridge.vector_process import ProcessVectorEnv

        return ProcessVectorEnv([env_fn] * int(num_envs), autoreset_mode=autoreset_mode, timeout=timeout)
    if workers != "sync":
        fix = "Pass workers='process' for one process per env"
        raise SpecError(message("vectorize workers", "be 'sync' or 'process'", repr(workers), fix))
    if timeout is not None:
        expectation = "be None with workers='sync' (an in-process step cannot be cut short)"
        raise SpecError(
            message("vectorize timeout", expectation, repr(timeout), "Pass workers='process' to use a timeout")
        )
    return SyncVectorEnv([env_fn] * int(num_envs), autoreset_mode=autoreset_mode)

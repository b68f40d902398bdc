"""Batched environments: the one :class:`VectorEnv` base, scalar envs behind it, :func:`vectorize`."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from bridge.env import Env
from bridge.errors import SpecError, error
from bridge.vector.base import AUTORESET_MODES, Seeds, VectorEnv, VectorStepResult
from bridge.vector.sync import SyncVectorEnv
from bridge.workers import DEFAULT_TIMEOUT

__all__ = [
    "VectorEnv",
    "SyncVectorEnv",
    "ProcessVectorEnv",
    "vectorize",
    "AUTORESET_MODES",
    "VectorStepResult",
    "Seeds",
]

_UNSET = object()


def __getattr__(name: str) -> Any:
    if name == "ProcessVectorEnv":  # on first use: it imports multiprocessing, `import bridge` does not
        from bridge.vector.process import ProcessVectorEnv

        return ProcessVectorEnv
    raise AttributeError(f"module 'bridge.vector' has no attribute {name!r}")


def vectorize(
    env_fn: Callable[[], Env],
    num_envs: int,
    *,
    autoreset_mode: str = "next-step",
    workers: str = "sync",
    timeout: object = _UNSET,
) -> VectorEnv:
    """``num_envs`` copies of ``env_fn()`` behind the :class:`VectorEnv` interface.

    ``workers="sync"`` loops them in this process (:class:`SyncVectorEnv`); ``"process"`` runs
    each in its own worker process (:class:`ProcessVectorEnv`: ``env_fn`` must pickle; a worker
    that raises, dies or exceeds ``timeout`` seconds per call, 60 by default, is a ContractError
    naming the env and the step, and the pool's workers are closed).
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise error(SpecError, "vectorize num_envs", "be an int >= 1", num_envs, "Pass e.g. num_envs=4")
    if workers == "process":
        from bridge.vector.process import ProcessVectorEnv

        seconds: Optional[float] = DEFAULT_TIMEOUT if timeout is _UNSET else timeout  # type: ignore[assignment]
        return ProcessVectorEnv([env_fn] * int(num_envs), autoreset_mode=autoreset_mode, timeout=seconds)
    if workers != "sync":
        fix = "Pass workers='process' for one process per env"
        raise error(SpecError, "vectorize workers", "be 'sync' or 'process'", repr(workers), fix)
    if timeout is not _UNSET and timeout is not None:
        expectation = "be None with workers='sync' (an in-process step cannot be cut short)"
        raise error(
            SpecError, "vectorize timeout", expectation, repr(timeout), "Pass workers='process' to use a timeout"
        )
    return SyncVectorEnv([env_fn] * int(num_envs), autoreset_mode=autoreset_mode)

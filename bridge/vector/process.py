"""One worker process per env behind the VectorEnv base (``bridge.vectorize(workers="process")``).

The workers run :func:`bridge.vector.worker.serve`; the parent supervises them with one
:class:`bridge.workers.Pool`: a worker that raises, dies (``os._exit``, a crash in native code, the
OOM killer, killed while idle), sends a reply that cannot be pickled, or stays silent past
``timeout`` is a :class:`~bridge.errors.ContractError` naming the env index and the step, raised at
once; that pool's workers are terminated and joined, so nothing hangs and nothing is left running.
The batch is checked whole by the base before any worker is sent anything. numpy and the standard
library only; ``env_fn`` must pickle (a class, a module-level function or a ``functools.partial``
of one: spawn/forkserver workers import it).

Observations and actions of fixed-shape numeric spaces (every neutral space: Box, Discrete,
MultiDiscrete, MultiBinary, Dicts and Tuples of them) travel through one shared-memory segment
(:mod:`bridge.vector.shared`): a step sends each worker a two-word command, and the observation
batch is copied out of the segment once per call (what a step returns is the caller's to keep).
Any other space, ``shared_memory=False``, or a machine without shared memory keeps the pipes for
everything, with the same results. ``close()`` (and a fault) unlinks the segment.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from bridge import spaces
from bridge.checks import step_output
from bridge.env import Env
from bridge.errors import ContractError, SpecError, error
from bridge.vector.base import VectorStepResult
from bridge.vector.infos import merge_env_infos
from bridge.vector.shared import SharedBatches, attach
from bridge.vector.sync import ScalarBatch, same_spaces
from bridge.vector.worker import serve
from bridge.workers import DEFAULT_TIMEOUT, Pool, check_timeout, raised, stop_processes, unpicklable

__all__ = ["ProcessVectorEnv"]

_STEP_SHARED = ("step-shared", None)  # the whole step command when the actions are in shared memory


def _describe(env: Env) -> Tuple[Any, ...]:
    return (env.observation_space, env.action_space, env.metadata, env.render_mode, repr(env))


class ProcessVectorEnv(ScalarBatch):
    """Scalar envs, each in its own process, stepped in parallel behind the batched interface.

    Same observations, rewards, flags, infos and autoreset semantics as
    :class:`~bridge.vector.sync.SyncVectorEnv`.

    Args:
        env_fns: picklable zero-argument factories, one per env.
        autoreset_mode: "next-step" or "same-step".
        timeout: seconds a worker may take to answer one reset or step call (default 60; None
            waits as long as the worker lives; a dead worker is seen at once either way).
            Building an env has a longer deadline (frameworks may import first).
        start_method: "spawn" or "forkserver" (default: forkserver where available, else spawn).
            "fork" is refused: it is unsafe with threads in the parent (TensorFlow, torch).
        shared_memory: pass observations and actions through shared memory where the spaces
            allow it (default True); False sends everything through the pipes.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], Env]],
        autoreset_mode: str = "next-step",
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        start_method: Optional[str] = None,
        shared_memory: bool = True,
    ) -> None:
        self.autoreset_mode = autoreset_mode
        self._shared: Optional[SharedBatches] = None
        self.timeout = check_timeout(timeout, "vectorize")
        if not env_fns:
            raise error(SpecError, "vectorize num_envs", "be >= 1", 0, "Pass at least one env")
        context = mp.get_context(_start_method(start_method))
        self.num_envs = len(env_fns)
        conns: List[Any] = []
        processes: List[Any] = []
        for env_fn in env_fns:
            parent_end, child_end = context.Pipe()
            process = context.Process(target=serve, args=(child_end, env_fn, _describe, attach), daemon=True)
            try:
                process.start()  # pickles env_fn here, in this process
            except Exception as e:
                parent_end.close()
                stop_processes(processes)  # the ones already started
                for conn in conns:
                    conn.close()
                fix = "Pass a class, a module-level function or a functools.partial of one"
                fix += " (not a lambda or a local function)"
                got = f"{type(e).__name__}: {e}"
                raise error(SpecError, "vectorize env_fn", "pickle for worker processes", got, fix) from e
            finally:
                child_end.close()  # only the worker holds it now: its death reads as EOF here
            conns.append(parent_end)
            processes.append(process)
        names = [f"env {i}" for i in range(self.num_envs)]
        self.pool = Pool(processes, conns, names, self.timeout, self._where, "ProcessVectorEnv", on_stop=self._release)
        replies = self.pool.gather(range(self.num_envs), "build", "at construction")
        self.pool.remember_groups()  # each worker leads its group before it builds its env
        described = [self._reply(i, reply, "build") for i, reply in enumerate(replies)]
        self.pool.names = [f"env {i} ({d[4]})" for i, d in enumerate(described)]
        same_spaces([(d[0], d[1]) for d in described], self.close)
        self.single_observation_space, self.single_action_space, self.metadata, self.render_mode, _ = described[0]
        if shared_memory:
            self._share()

    def _share(self) -> None:
        """Map one segment into every worker (nothing changes when the spaces or the machine cannot)."""
        self._shared = SharedBatches.open(self.single_observation_space, self.single_action_space, self.num_envs)
        if self._shared is None:
            return
        for i in range(self.num_envs):
            self.pool.send(i, ("attach", (self._shared.handle, i)))
        for i, reply in enumerate(self.pool.gather(range(self.num_envs), "attach", "at construction")):
            if reply[0] == "error":
                fix = "Check that /dev/shm is writable and large enough, or pass shared_memory=False"
                self.pool.fault(i, ("map the pool's shared memory", reply[2], fix), "at construction")

    @property
    def shared_memory(self) -> bool:
        """True while observations and actions travel through shared memory (see the module doc)."""
        return self._shared is not None

    def _require_usable(self) -> None:
        self.pool.require_open()

    def reset_envs(self, mask: np.ndarray, seeds: List[Optional[int]], options: Optional[dict]) -> Tuple[Any, dict]:
        self.pool.require_open()
        chosen = np.flatnonzero(mask).tolist()
        for i in chosen:
            self.pool.send(i, ("reset", (seeds[i], options)))
        return self._reset_replies(chosen)

    def step_envs(self, actions: Any, active: np.ndarray) -> VectorStepResult:
        self.pool.require_open()
        n, space = self.num_envs, self.single_action_space
        chosen = np.flatnonzero(active).tolist()
        if self._shared is not None and self._shared.put_actions(actions):
            for i in chosen:
                self.pool.send(i, _STEP_SHARED)
        else:  # no segment, or a batch of other dtypes (check_actions=False): the pipes, as given
            for i in chosen:
                self.pool.send(i, ("step", spaces.iterate(space, actions, i)))
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        infos: List[Optional[dict]] = [None] * n
        for i, reply in zip(chosen, self.pool.gather(chosen, "step")):
            out = step_output(self._reply(i, reply, "step"), self.pool.name(i))
            obs, rewards[i], terminated[i], truncated[i], infos[i] = out
            if reply[0] != "shared":
                self._keep_piped(i, obs, "step")
        return self._batch(), rewards, terminated, truncated, merge_env_infos(infos, n)

    @property
    def processes(self) -> List[Any]:
        """The worker processes (for tests and tools that watch them)."""
        return self.pool.processes

    def close_envs(self) -> None:
        """Ask every worker to close its env, then terminate any that does not exit."""
        if not self.pool.closed:
            for conn in self.pool.conns:
                try:
                    conn.send(("close", None))
                except (OSError, ValueError):
                    pass  # that worker is gone already
        self.pool.stop(grace=1.0)

    # -- replies ---------------------------------------------------------------------------------
    def _reset_replies(self, chosen: List[int]) -> Tuple[Any, dict]:
        infos: List[Optional[dict]] = [None] * self.num_envs
        for i, reply in zip(chosen, self.pool.gather(chosen, "reset", None)):
            obs, infos[i] = self._reply(i, reply, "reset")
            if reply[0] != "shared":
                self._keep_piped(i, obs, "reset")
        return self._batch(), merge_env_infos(infos, self.num_envs)

    def _keep_piped(self, i: int, obs: Any, where: str) -> None:
        """An observation that came through the pipe, checked (with a segment: one its worker's check
        refused, so this raises the error the pipes alone would raise)."""
        self._keep(i, obs, where, self.pool.name(i))
        if self._shared is not None:
            self._shared.put_observation(i, obs)

    def _batch(self) -> Any:
        """The observation batch, a fresh copy (never a view of the segment)."""
        return self._stack() if self._shared is None else self._shared.observation_batch()

    def _release(self) -> None:
        if self._shared is not None:
            self._shared.release()  # workers are stopped: the segment is unlinked, not reused
            self._shared = None

    def _apply(self, op: str, name: str, chosen: List[int], payloads: List[Any]) -> List[Any]:
        self.pool.require_open()
        for i, payload in zip(chosen, payloads):
            self.pool.send(i, ("apply", (op, name, payload)))
        results = []
        for i, reply in zip(chosen, self.pool.gather(chosen, f"{op}_attr({name!r})", "")):
            if reply[0] == "error":  # the env raised (e.g. no such attribute): reported, the worker lives on
                expectation, actual, fix = raised(f"{op} {name!r}", reply[2])
                raise error(ContractError, f"{self.pool.name(i)} {op} {name!r}", expectation, actual, fix)
            results.append(reply[1])
        return results

    def _reply(self, i: int, reply: Any, call: str) -> Any:
        if reply[0] == "error":
            _, kind, text = reply
            complaint = unpicklable(call, text) if kind == "unpicklable" else raised(call, text)
            self.pool.fault(i, complaint, "at construction" if call == "build" else None)
        return reply[1]

    def _where(self, i: int) -> str:
        steps = int(self.episode_steps[i])
        return f"at reset (after step {steps})" if self._needs_reset[i] else f"at step {steps + 1}"


def _start_method(start_method: Optional[str]) -> str:
    methods = mp.get_all_start_methods()
    start_method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
    if start_method not in ("spawn", "forkserver") or start_method not in methods:
        raise error(
            SpecError,
            "vectorize start_method",
            "be 'spawn' or 'forkserver' (available here)",
            repr(start_method),
            "Pass start_method='spawn'",
        )
    return start_method

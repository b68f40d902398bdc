"""One worker process per env behind the :class:`~bridge.vector.VectorEnv` interface.

:func:`bridge.vectorize` with ``workers="process"`` builds a :class:`ProcessVectorEnv`. A worker
that raises, dies (``os._exit``, a crash in native code, the OOM killer) or, with ``timeout``,
stops answering becomes a :class:`~bridge.errors.ContractError` naming the env index and the step,
raised as soon as the parent sees it; every worker is then terminated and joined, so nothing hangs
and nothing is left running. numpy and the standard library only; ``env_fn`` must pickle (a class,
a module-level function or a ``functools.partial`` of one: spawn/forkserver workers import it).
"""

from __future__ import annotations

import multiprocessing as mp
import time
import traceback
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from bridge import spaces
from bridge.env import Env
from bridge.errors import ContractError, SpecError, message
from bridge.vector import Seeds, VectorEnv, VectorStepResult, _check_mode, _merge_infos, _seed_list

__all__ = ["ProcessVectorEnv", "WORKER_MODES", "raised", "died", "timed_out", "stop_processes"]

WORKER_MODES = ("sync", "process")
_CALLS = {"build": "constructor", "start": "constructor", "reset": "reset()", "step": "step()"}
Complaint = Tuple[str, str, str]  # (expectation, actual, fix) for bridge.errors.message


# -- what a failed worker is told; shared by the SB3 and DreamerV2 process workers -----------------
def raised(call: str, error: str) -> Complaint:
    """The env raised ``error`` ("<Type>: <message>") in ``call`` ("step", "reset", "build")."""
    return f"{call} without raising", error, f"Fix the error in the env's {_CALLS.get(call, call)}"


def died(process: Any) -> Complaint:
    """The worker ``process`` is gone (joined briefly for its exit code)."""
    process.join(1.0)
    code = process.exitcode
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    fix = "Find what ends the process in the env (os._exit, a crash in native code, running out of memory)"
    return "keep its worker process alive", f"the worker died ({how})", fix


def timed_out(call: str, timeout: float) -> Complaint:
    """The worker did not answer ``call`` within ``timeout`` seconds."""
    expectation = f"answer a {call} call within {timeout:g} s"
    return expectation, "no answer (the worker is still running)", "Find where the env blocks, or pass a larger timeout"


def stop_processes(processes: Sequence[Any], grace: float = 0.0) -> None:
    """Join each process for up to ``grace`` seconds in all, then terminate (and kill) the rest."""
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(2.0)
        if process.is_alive():  # ignored SIGTERM
            process.kill()
            process.join()


def _root_cause(error: BaseException) -> BaseException:
    """The innermost ``raise ... from`` cause: the user's own exception, not our wrappers of it."""
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def _describe(error: BaseException) -> str:
    root = _root_cause(error)
    return f"{type(root).__name__}: {root}"


def _worker(conn: Connection, env_fn: Callable[[], Env]) -> None:
    """Build one env and serve ("reset" | "step" | "close", payload) until told to close.

    Replies are ("ok", result) or ("error", "<ExceptionType>: <message>"); an exception in the env
    is reported, not raised, so the parent can name the env and the step.
    """
    try:
        env = env_fn()
        conn.send(("ok", (env.observation_space, env.action_space, env.metadata, env.render_mode, repr(env))))
    except Exception as e:
        conn.send(("error", _describe(e)))
        return
    try:
        while True:
            command, payload = conn.recv()
            if command == "close":
                break
            try:
                if command == "step":
                    obs, reward, terminated, truncated, info = env.step(payload)
                    result: Any = (obs, float(reward), bool(terminated), bool(truncated), info)
                else:  # "reset"
                    seed, options = payload
                    result = env.reset(seed=seed, options=options)
            except Exception as e:
                traceback.print_exc()
                conn.send(("error", _describe(e)))
                continue
            conn.send(("ok", result))
    except (EOFError, KeyboardInterrupt):  # the parent went away
        pass
    finally:
        env.close()
        conn.close()


class ProcessVectorEnv(VectorEnv):
    """Scalar envs, each in its own process, stepped in parallel behind the batched interface.

    Same observations, rewards, flags, infos and autoreset semantics as
    :class:`~bridge.vector.SyncVectorEnv`.

    Args:
        env_fns: picklable zero-argument factories, one per env.
        autoreset_mode: "next-step" or "same-step".
        timeout: seconds a worker may take to answer one reset or step call; ``None`` waits as
            long as the worker is alive (a dead worker is detected at once either way). Building
            the envs has no deadline (a worker may import heavy modules first).
        start_method: "spawn" or "forkserver" (default: forkserver where available, else spawn).
            "fork" is refused: it is unsafe with threads in the parent (TensorFlow, torch).
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], Env]],
        autoreset_mode: str = "next-step",
        timeout: Optional[float] = None,
        start_method: Optional[str] = None,
    ) -> None:
        self.closed = True  # until every worker is up
        self.autoreset_mode = _check_mode(autoreset_mode)
        if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
            raise SpecError(
                message("vectorize timeout", "be None or seconds > 0", repr(timeout), "Pass e.g. timeout=30")
            )
        self.timeout = timeout
        if not env_fns:
            raise SpecError(message("vectorize num_envs", "be >= 1", 0, "Pass at least one env"))
        methods = mp.get_all_start_methods()
        start_method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
        if start_method not in ("spawn", "forkserver") or start_method not in methods:
            raise SpecError(
                message(
                    "vectorize start_method",
                    "be 'spawn' or 'forkserver' (available here)",
                    repr(start_method),
                    "Pass start_method='spawn'",
                )
            )
        context = mp.get_context(start_method)
        self.num_envs = len(env_fns)
        self.labels: List[Optional[str]] = [None] * self.num_envs
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self.conns: List[Connection] = []
        self.processes: List[Any] = []
        for env_fn in env_fns:
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_worker, args=(child_end, env_fn), daemon=True)
            try:
                process.start()  # pickles env_fn here, in this process
            except Exception as e:
                parent_end.close()
                self._stop_workers(grace=0.0)  # the ones already started
                fix = "Pass a class, a module-level function or a functools.partial of one"
                fix += " (not a lambda or a local function)"
                got = f"{type(e).__name__}: {e}"
                raise SpecError(message("vectorize env_fn", "pickle for worker processes", got, fix)) from e
            finally:
                child_end.close()  # only the worker holds it now: its death reads as EOF here
            self.conns.append(parent_end)
            self.processes.append(process)
        self.closed = False
        described = self._gather(range(self.num_envs), "at construction", "build")
        first = described[0]
        for i, (obs_space, act_space, _, _, label) in enumerate(described):
            self.labels[i] = label
            if obs_space != first[0] or act_space != first[1]:
                self.close()
                expected = "equal env 0's spaces"
                raise SpecError(message(f"env {i} spaces", expected, repr(obs_space), "Build identical envs"))
        self.single_observation_space, self.single_action_space, self.metadata, self.render_mode, _ = first

    def reset(self, *, seed: Seeds = None, options: Optional[dict] = None) -> Tuple[Any, Dict[str, Any]]:
        super().reset(seed=seed)
        self._require_open()
        for conn, s in zip(self.conns, _seed_list(seed, self.num_envs)):
            conn.send(("reset", (s, options)))
        results = self._gather(range(self.num_envs), "at reset", "reset")
        self._needs_reset[:] = False
        self._steps[:] = 0
        obs = spaces.stack(self.single_observation_space, [r[0] for r in results])
        return obs, _merge_infos([r[1] for r in results])

    def step(self, actions: Any) -> VectorStepResult:
        self._require_open()
        space, n = self.single_action_space, self.num_envs
        resetting = self._needs_reset.copy()  # next-step mode: these envs only reset this step
        for i, conn in enumerate(self.conns):
            conn.send(("reset", (None, None)) if resetting[i] else ("step", spaces.iterate(space, actions, i)))
        stepping = [i for i in range(n) if not resetting[i]]
        results = self._gather(range(n), None, "step")
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        obs_list: List[Any] = []
        infos: List[dict] = []
        for i, result in enumerate(results):
            if resetting[i]:
                obs, info = result
                self._needs_reset[i], self._steps[i] = False, 0
            else:
                obs, rewards[i], terminated[i], truncated[i], info = result
                self._steps[i] += 1
            obs_list.append(obs)
            infos.append(info)
        ended = [i for i in stepping if terminated[i] or truncated[i]]
        final_obs: List[Any] = list(obs_list)
        final_info: List[Optional[dict]] = [None] * n
        if self.autoreset_mode == "same-step" and ended:
            for i in ended:  # reset at once; the final observation goes into the infos
                final_info[i] = infos[i]
                self.conns[i].send(("reset", (None, None)))
            for i, (obs, info) in zip(ended, self._gather(ended, "at reset", "reset")):
                obs_list[i], infos[i], self._steps[i] = obs, info, 0
        elif ended:
            self._needs_reset[ended] = True
        merged = _merge_infos(infos)
        if self.autoreset_mode == "same-step":
            merged["_final_obs"] = terminated | truncated
            merged["final_obs"] = spaces.stack(self.single_observation_space, final_obs)
            merged["final_info"] = final_info
        batch_obs = spaces.stack(self.single_observation_space, obs_list)
        return batch_obs, rewards, terminated, truncated, merged

    def close(self) -> None:
        """Ask every worker to close its env, then terminate any that does not exit; safe twice."""
        if self.closed:
            return
        self.closed = True
        for conn in self.conns:
            try:
                conn.send(("close", None))
            except (OSError, ValueError):
                pass  # that worker is gone already
        self._stop_workers(grace=1.0)

    # -- waiting for workers ---------------------------------------------------------------------
    def _gather(self, indices: Any, when: Optional[str], verb: str) -> List[Any]:
        """Each listed worker's reply, in order; the first fault closes everything and raises.

        Waits on all pipes and process sentinels at once, so a dead worker is seen at once even
        while another is still busy. ``when`` names the moment ("at reset"); None: the step count.
        """
        indices = list(indices)
        replies: Dict[int, Any] = {}
        timed = self.timeout is not None and verb != "build"
        deadline = time.monotonic() + self.timeout if timed else None
        pending = set(indices)
        while pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            handles: List[Any] = [self.conns[i] for i in pending] + [self.processes[i].sentinel for i in pending]
            ready = wait(handles, remaining)
            if not ready:
                i = min(pending)
                self._fault(i, when, *timed_out(verb, self.timeout))
            for i in sorted(pending):
                conn = self.conns[i]
                if conn in ready or (self.processes[i].sentinel in ready and conn.poll(0)):
                    try:
                        status, payload = conn.recv()
                    except (EOFError, OSError):
                        self._fault(i, when, *died(self.processes[i]))
                    if status == "error":
                        self._fault(i, when, *raised(verb, payload))
                    replies[i] = payload
                    pending.discard(i)
                elif self.processes[i].sentinel in ready:
                    self._fault(i, when, *died(self.processes[i]))
        return [replies[i] for i in indices]

    def _fault(self, index: int, when: Optional[str], expectation: str, actual: str, fix: str) -> None:
        if when is None:
            steps = int(self._steps[index])
            when = f"at reset (after step {steps})" if self._needs_reset[index] else f"at step {steps + 1}"
        self.closed = True
        self._stop_workers(grace=0.0)
        label = self.labels[index]
        name = f"env {index}" if label is None else f"env {index} ({label})"
        raise ContractError(message(f"{name} {when}", expectation, actual, f"{fix}; every worker is closed"))

    def _stop_workers(self, grace: float) -> None:
        stop_processes(self.processes, grace)
        for conn in self.conns:
            conn.close()

    def _require_open(self) -> None:
        if self.closed:
            actual = "a closed env (closed, or a worker failed)"
            raise ContractError(
                message("ProcessVectorEnv", "be open to step or reset", actual, "Build a new one with bridge.vectorize")
            )

"""SB3's ``SubprocVecEnv`` with worker faults that name the env and the step, and no hang.

SB3 2.9's worker does not catch exceptions: a raising env kills its worker, and the parent sees a
bare ``EOFError`` (or waits forever on a worker that hangs). Here, still on SB3's own class and
its own ``_worker``:

* :class:`FaultReporter` (worker side, inside SB3's ``Monitor``) turns an exception in ``step`` /
  ``reset`` into a string in the info dict, so the worker stays alive to report it;
* :class:`ReportingSubprocVecEnv` (parent side) reads each pipe with a deadline while watching
  every worker's process sentinel: a reported error, a dead worker (EOF, exit code) or a missed
  deadline becomes a :class:`~bridge.errors.ContractError` naming the env index and the step, and
  every worker is terminated and joined first.

:func:`bridge.adapters.sb3.export.make_vec_env` uses both when ``vec_env_cls=SubprocVecEnv``.
"""

from __future__ import annotations

import time
from multiprocessing.connection import wait
from typing import Any, Callable, List, Optional

import numpy as np
from bridge.compat import optional_import

from bridge.errors import ContractError, message
from bridge.vector_process import _describe, died, raised, stop_processes, timed_out

optional_import("stable_baselines3", "the SB3 export")
import gymnasium  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv  # noqa: E402

__all__ = ["FaultReporter", "ReportingSubprocVecEnv", "FAULT_KEY"]

FAULT_KEY = "envbridge.worker_error"


class FaultReporter(gymnasium.Wrapper):
    """Worker side: an exception in the env becomes ``info[FAULT_KEY] = "<Type>: <message>"``.

    The step that raised returns ``(None, 0.0, False, False, info)``; the parent raises on it
    before anything reads the observation. ``<Type>: <message>`` is the user's own exception (the
    innermost ``raise ... from`` cause), so the parent's message does not depend on our wrappers.
    """

    def step(self, action: Any) -> Any:
        try:
            return self.env.step(action)
        except Exception as e:
            return None, 0.0, False, False, {FAULT_KEY: _describe(e)}

    def reset(self, **kwargs: Any) -> Any:
        try:
            return self.env.reset(**kwargs)
        except Exception as e:
            return None, {FAULT_KEY: _describe(e)}


class _Remote:
    """A parent pipe end that SB3's methods use as before; ``recv`` goes through the guard."""

    def __init__(self, conn: Any, index: int, owner: ReportingSubprocVecEnv) -> None:
        self.conn, self.index, self.owner = conn, index, owner
        self.command: Optional[str] = None

    def send(self, request: Any) -> None:
        self.command = request[0]
        self.conn.send(request)

    def recv(self) -> Any:
        return self.owner._receive(self)

    def close(self) -> None:
        self.conn.close()


class ReportingSubprocVecEnv(SubprocVecEnv):
    """SB3's ``SubprocVecEnv`` whose worker faults raise a ContractError within ``timeout``.

    Args:
        env_fns: SB3's env factories (wrap each env in :class:`FaultReporter` to get the user's
            exception in the message; without it a raising env reads as a dead worker).
        start_method: as for ``SubprocVecEnv``.
        timeout: seconds a worker may take to answer one call; ``None`` waits as long as it is
            alive (a dead worker is seen at once either way).
        label: how messages name the env, e.g. the neutral env's repr.
    """

    def __init__(
        self,
        env_fns: List[Callable[[], Any]],
        start_method: Optional[str] = None,
        *,
        timeout: Optional[float] = None,
        label: str = "env",
    ) -> None:
        self.timeout, self.label = timeout, label
        self._steps = np.zeros(len(env_fns), dtype=np.int64)
        try:
            super().__init__(env_fns, start_method)
        except (EOFError, OSError) as e:  # worker 0 died while SB3 asked it for the spaces
            self._stop_all()
            fix = "Build the env in this process first to see its error"
            raise ContractError(
                message(f"env 0 ({label}) at construction", "keep its worker process alive", "the worker died", fix)
            ) from e
        self.remotes = [_Remote(conn, i, self) for i, conn in enumerate(self.remotes)]

    def _receive(self, remote: _Remote) -> Any:
        """One reply from ``remote``'s worker, or a ContractError once any worker fails."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        sentinels = [p.sentinel for p in self.processes]
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait([remote.conn, *sentinels], remaining)
            if remote.conn in ready:
                try:
                    reply = remote.conn.recv()
                except (EOFError, OSError):
                    self._fail(remote.index, *died(self.processes[remote.index]))
                return self._inspect(remote, reply)
            if not ready:
                self._fail(remote.index, *timed_out(str(remote.command), self.timeout))
            for i, process in enumerate(self.processes):  # another worker died meanwhile
                if process.sentinel in ready:
                    self._fail(i, *died(process))

    def _inspect(self, remote: _Remote, reply: Any) -> Any:
        i, command = remote.index, remote.command
        if command in ("step", "reset"):
            infos = reply[3:5] if command == "step" else reply[1:2]
            errors = [info[FAULT_KEY] for info in infos if isinstance(info, dict) and FAULT_KEY in info]
            if errors:  # in step's reply the second info is the autoreset's
                verb = "reset" if command == "reset" or FAULT_KEY not in reply[3] else "step"
                self._fail(i, *raised(verb, errors[0]))
            self._steps[i] = 0 if command == "reset" or reply[2] else self._steps[i] + 1
        return reply

    def _fail(self, index: int, expectation: str, actual: str, fix: str) -> None:
        subject = f"env {index} ({self.label}) at step {int(self._steps[index]) + 1}"
        self._stop_all()
        raise ContractError(message(subject, expectation, actual, f"{fix}; every worker is closed"))

    def _stop_all(self) -> None:
        """Terminate and join every worker; SB3's ``close`` is then a no-op."""
        self.closed, self.waiting = True, False
        stop_processes(getattr(self, "processes", []))
        for remote in getattr(self, "remotes", ()):
            remote.close()


def reporting_factory(make: Callable[[], Any]) -> Callable[[], Any]:
    """``make`` with its env wrapped in :class:`FaultReporter` (picklable when ``make`` is)."""
    import functools

    return functools.partial(_reporting, make)


def _reporting(make: Callable[[], Any]) -> Any:
    return FaultReporter(make())


def reporting_vec_env_cls(label: str) -> Callable[..., ReportingSubprocVecEnv]:
    """A ``vec_env_cls`` for SB3's ``make_vec_env``; ``vec_env_kwargs`` may still set ``timeout``."""
    import functools

    return functools.partial(ReportingSubprocVecEnv, label=label)

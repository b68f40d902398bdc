"""DreamerV2's ``common.Async`` (process strategy) with a receive deadline and a liveness check.

DreamerV2 2.2.0's parent keeps the worker's pipe end open, so a worker that dies (``os._exit``, a
crash in native code, the OOM killer) never reads as EOF: ``Async._receive`` waits forever. A
worker that raises sends its traceback, which the parent re-raises as a bare ``Exception``.
:class:`WatchedAsync` is DreamerV2's own class (its own worker loop) with ``_receive`` waiting on
the pipe *and* the process sentinel: a dead worker, an exception or a missed deadline becomes a
:class:`~bridge.errors.ContractError` naming the env and the step, raised at once, after this
worker and every other open :class:`WatchedAsync` of this process are terminated (a chain whose
worker failed cannot go on; Dreamer's driver would wait on the others).

``to_dreamerv2(..., parallel="process")`` returns one. Importing this module imports DreamerV2.
"""

from __future__ import annotations

import time
import weakref
from multiprocessing.connection import wait
from typing import Any, Callable, Optional

from bridge.adapters.dreamerv2.loader import load_dreamerv2

from bridge.env import Env
from bridge.errors import ContractError, message
from bridge.vector_process import died, raised, stop_processes, timed_out

__all__ = ["WatchedAsync", "env_label"]

_OPEN: weakref.WeakSet[WatchedAsync] = weakref.WeakSet()
_CAUSE = "The above exception was the direct cause of the following exception:"


def env_label(env: Any) -> str:
    """How messages name the env ``to_dreamerv2`` was given: its repr, its id or its factory's name."""
    if isinstance(env, Env):
        return repr(env)
    if isinstance(env, str):
        return env
    func = getattr(env, "func", env)  # functools.partial
    return getattr(func, "__qualname__", type(func).__name__)


def _user_error(stacktrace: str) -> str:
    """``"<Type>: <message>"`` of the innermost cause in a formatted traceback."""
    first = stacktrace.split(_CAUSE)[0]
    lines = [line for line in first.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "an exception without a traceback"


class WatchedAsync(load_dreamerv2().common.Async):
    """``common.Async(constructor, "process")`` that never waits on a dead worker.

    Args:
        constructor: a picklable zero-argument factory of the env chain (as for ``Async``).
        label: how messages name the env.
        timeout: seconds the worker may take to answer one call after it started; ``None``
            waits as long as it is alive (a dead worker is seen at once either way).
    """

    def __init__(self, constructor: Callable[[], Any], *, label: str = "env", timeout: Optional[float] = None) -> None:
        self._label, self._timeout = label, None
        self._pending, self._steps, self._closed = "start", 0, False
        super().__init__(constructor, "process")  # waits for "ready" without a deadline (TF import)
        self._timeout = timeout
        _OPEN.add(self)

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._pending = name
        return super().call(name, *args, **kwargs)

    def access(self, name: str) -> Any:
        self._pending = f"access {name}"
        return super().access(name)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        if self._process.is_alive():
            super().close()  # DreamerV2's goodbye; joins up to 5 s
        self._stop()

    def _receive(self) -> Any:
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait([self._conn, self._process.sentinel], remaining)
            if self._conn in ready:
                try:
                    kind, payload = self._conn.recv()
                except (OSError, EOFError):
                    self._fail(*died(self._process))
                if kind == self._EXCEPTION:
                    verb = self._pending if self._pending in ("step", "reset") else "start"
                    self._fail(*raised(verb, _user_error(payload)))
                if kind != self._RESULT:
                    raise KeyError(f"Received message of unexpected type {kind}")
                if self._pending == "step":
                    self._steps += 1
                elif self._pending == "reset":
                    self._steps = 0
                return payload
            if ready:
                self._fail(*died(self._process))
            self._fail(*timed_out(self._pending, self._timeout))

    def _fail(self, expectation: str, actual: str, fix: str) -> None:
        others = [a for a in list(_OPEN) if a is not self]
        for watched in [self, *others]:
            watched._closed = True
            _OPEN.discard(watched)
            watched._stop()
        subject = f"DreamerV2 env {self._label} (process worker) at step {self._steps + 1}"
        closed = "this worker and every other open process worker are closed"
        raise ContractError(message(subject, expectation, actual, f"{fix}; {closed}"))

    def _stop(self) -> None:
        stop_processes([self._process])
        self._conn.close()

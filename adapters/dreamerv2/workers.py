"""DreamerV2's ``common.Async`` (process strategy), supervised by :mod:`bridge.workers`.

DreamerV2 2.2.0's parent keeps the worker's pipe end open, so a worker that dies (``os._exit``, a
crash in native code, the OOM killer, a kill while idle) never reads as EOF: ``Async._receive``
waits forever; a worker that raises sends its traceback, which the parent re-raises as a bare
``Exception``; a blocked worker hangs the caller. :class:`WatchedAsync` is DreamerV2's own class
(its own worker loop) whose sends and receives go through a one-worker :class:`bridge.workers.Pool`:
a dead worker, an exception, a reply that cannot be pickled or a missed deadline (60 s by default)
becomes a :class:`~bridge.errors.ContractError` naming the env and the step, raised at once, after
this worker is terminated and joined. Other workers (other envs of the same run) are not touched:
DreamerV2's driver then stops on the error, and closing them stays the caller's.

``to_dreamerv2(..., parallel="process")`` returns one. Importing this module imports DreamerV2.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from bridge.adapters.dreamerv2.loader import load_dreamerv2

from bridge.env import Env
from bridge.workers import DEFAULT_TIMEOUT, Pool, check_timeout, raised, unpicklable

__all__ = ["WatchedAsync", "env_label"]

_CAUSE = "The above exception was the direct cause of the following exception:"
_PICKLING = ("PicklingError", "pickle", "Can't pickle", "cannot pickle")


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
    """``common.Async(constructor, "process")`` whose worker faults raise (see the module doc).

    Args:
        constructor: a picklable zero-argument factory of the env chain (as for ``Async``).
        label: how messages name the env.
        timeout: seconds the worker may take to answer one call after it started (None: as long
            as it is alive; a dead worker is seen at once either way).
    """

    def __init__(
        self, constructor: Callable[[], Any], *, label: str = "env", timeout: Optional[float] = DEFAULT_TIMEOUT
    ) -> None:
        self._pending, self._steps = "start", 0
        self._pool: Optional[Pool] = None
        super().__init__(constructor, "process")  # waits for "ready" without a deadline (TF import)
        self._pool = Pool(
            [self._process],
            [self._conn],
            [f"DreamerV2 env {label} (process worker)"],
            check_timeout(timeout, "to_dreamerv2"),
            lambda _: f"at step {self._steps + 1}",
            "DreamerV2 env",
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._pending = name
        self._require_open()
        payload = name, args, kwargs
        self._pool.send(0, (self._CALL, payload))  # a gone worker is a fault, not a BrokenPipeError
        return self._receive

    def access(self, name: str) -> Any:
        self._pending = f"access {name}"
        self._require_open()
        self._pool.send(0, (self._ACCESS, name))
        return self._receive

    def close(self) -> None:
        if self._pool is None or self._pool.closed:
            return
        if self._process.is_alive():
            super().close()  # DreamerV2's goodbye; joins up to 5 s
        self._pool.stop(grace=0.0)

    def _require_open(self) -> None:
        if self._pool is not None:
            self._pool.require_open()

    def _receive(self) -> Any:
        if self._pool is None:  # DreamerV2's own start-up handshake
            return super()._receive()
        verb = self._pending if self._pending in ("step", "reset") else "start"
        kind, payload = self._pool.receive(0, self._pending)
        if kind == self._EXCEPTION:
            text = _user_error(payload)
            pickling = any(word in text for word in _PICKLING)
            self._pool.fault(0, unpicklable(verb, text) if pickling else raised(verb, text))
        if kind != self._RESULT:
            raise KeyError(f"Received message of unexpected type {kind}")
        if self._pending == "step":
            self._steps += 1
        elif self._pending == "reset":
            self._steps = 0
        return payload

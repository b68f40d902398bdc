"""Worker supervision: the one wait loop and the one set of fault messages for env worker processes.

Used by ``bridge.vectorize(workers="process")``, SB3's ``SubprocVecEnv`` (through the sb3 export) and
DreamerV2's ``common.Async`` (through the dreamerv2 export); each keeps its runtime's own worker
loop where it has one and adds only this. A :class:`Pool` watches its workers' pipes *and* process
sentinels at once, so a worker that raises, exits, crashes, is killed (even while idle), sends a
reply that cannot be pickled, or stays silent past the timeout becomes a
:class:`~bridge.errors.ContractError` naming the env, the moment and the cause, at once. A fault
poisons that pool only: its workers are terminated and joined (nothing is left running, no pipe
holds a stale reply) and every later call says so; other pools in the process go on.
"""

from __future__ import annotations

import math
import os
import select
import signal
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from bridge.errors import ContractError, SpecError, error

__all__ = [
    "Pool",
    "DEFAULT_TIMEOUT",
    "BUILD_TIMEOUT",
    "check_timeout",
    "raised",
    "died",
    "timed_out",
    "stalled",
    "unpicklable",
    "describe",
    "stop_processes",
    "apply",
]

DEFAULT_TIMEOUT = 60.0  # seconds a worker may take to answer one reset/step before it counts as hung
_MAX_WAIT = 86400.0  # seconds of one poll: poll() takes a C int of milliseconds (24.8 days at most)
BUILD_TIMEOUT = 300.0  # building an env may import heavy frameworks first (TensorFlow, torch)
_CALLS = {"build": "constructor", "start": "constructor", "reset": "reset()", "step": "step()"}
Complaint = Tuple[str, str, str]  # (expectation, actual, fix) of the house sentence
_FIX_HUNG = "Find where the env blocks, or pass a larger timeout"


# -- what a failed worker is told --------------------------------------------------------------
def raised(call: str, error_text: str) -> Complaint:
    """The env raised ``error_text`` ("<Type>: <message>") in ``call`` ("step", "reset", "build")."""
    return f"{call} without raising", error_text, f"Fix the error in the env's {_CALLS.get(call, call)}"


def unpicklable(call: str, error_text: str) -> Complaint:
    """The worker's reply to ``call`` (observation, info, ...) cannot be pickled back."""
    expectation = f"send a {call} reply that pickles (observation, reward, flags and info)"
    return expectation, error_text, "Keep info values plain (numbers, strings, arrays, dicts of them)"


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
    fix = _FIX_HUNG
    if call == "build":  # say what governs building: not the per-call timeout alone
        fix = f"Find where the env's constructor blocks; building may take max(timeout, {BUILD_TIMEOUT:g} s)"
    return expectation, "no answer (the worker is still running)", fix


def stalled(call: str, text: str, reading: bool) -> Complaint:
    """A peer that stopped in the middle of a frame of ``call``, its reply (``reading``) or our
    request (``text``: how much moved, e.g. "4 of the 8 bytes of a frame's length, then silence
    until 2 s had passed")."""
    expectation = f"send its {call} reply whole" if reading else f"take the whole {call} request"
    fix = "Find where the worker stops (is it stopped, busy, or not speaking our frames?), or pass a larger timeout"
    return expectation, text + " (the worker is still running)", fix


def build_limit(timeout: Optional[float]) -> float:
    """Seconds a worker may take to build its env: frameworks may import first (TensorFlow takes
    seconds), so at least :data:`BUILD_TIMEOUT`, more when the per-call ``timeout`` is larger."""
    return BUILD_TIMEOUT if timeout is None else max(timeout, BUILD_TIMEOUT)


def describe(exc: BaseException) -> str:
    """``"<Type>: <message>"`` of the innermost ``raise ... from`` cause: the user's own exception."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}"


def seconds_or_none(subject: str, value: Any) -> Optional[float]:
    """The one rule for a timeout: seconds > 0, or None or ``math.inf`` for no limit (as None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        expectation = "be seconds > 0, or None or inf for no limit"
        raise error(SpecError, subject, expectation, repr(value), "Pass e.g. timeout=30")
    return None if math.isinf(value) else float(value)


def check_timeout(timeout: Optional[float], owner: str) -> Optional[float]:
    """``timeout`` of ``owner`` by :func:`seconds_or_none`."""
    return seconds_or_none(f"{owner} timeout", timeout)


def stop_processes(processes: Sequence[Any], grace: float = 0.0, groups: Sequence[int] = ()) -> None:
    """Join each process for up to ``grace`` seconds in all, then terminate (and kill) the rest.

    A worker started by :func:`bridge.vector.worker.serve` leads its own process group, so what the env itself forked
    is killed with it (else it would outlive the pool, reparented to init). A process that knows its
    group from the start (``group``: a host started in a session of its own) is not asked: a host
    that crashed is reaped already, and its children still run in its group."""
    known = [p.group if getattr(p, "group", None) else p.pid for p in processes]
    known = [g for p, g in zip(processes, known) if getattr(p, "group", None) or _leads_group(g)]
    groups = list(
        dict.fromkeys([*groups, *known])
    )  # ``groups``: noted earlier (a worker reaped at once is asked in vain)
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
    for group in groups:  # the env's own children, left in the worker's group
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:  # none left
            pass


def _buffered(conn: Any) -> bool:
    """A connection that reads ahead (a remote host's frames) holds a whole message already."""
    buffered = getattr(conn, "buffered", None)
    return buffered is not None and buffered()


def _leads_group(pid: Optional[int]) -> bool:
    try:
        return pid is not None and os.getpgid(pid) == pid != os.getpgid(0)
    except (OSError, AttributeError):  # gone already, or no process groups (Windows)
        return False


class Pool:
    """The supervision of one pool of worker processes (the parent side).

    Args:
        processes, conns: the workers and the parent's pipe ends, by index.
        names: how messages name each worker's env, by index (e.g. "env 1 (<CartPole>)").
        timeout: seconds one reset/step call may take; None waits as long as the worker lives.
        where: ``where(index) -> str``, the moment a fault happened (e.g. "at step 3").
        owner: how the poisoned-pool message names the pool's owner.
        on_fault: called first when the pool is poisoned (the owner marks itself closed).
        on_stop: called once the workers are stopped (on close and on a fault), e.g. to release
            shared memory only they mapped.
        on_death: the complaint of a worker that is gone (default :func:`died`; a remote host adds
            what it printed to stderr).
        on_garbled: the complaint of a reply that cannot be read here (default :func:`unpicklable`;
            a remote host's frames are not pickles).
    """

    def __init__(
        self,
        processes: Sequence[Any],
        conns: Sequence[Any],
        names: Sequence[str],
        timeout: Optional[float],
        where: Callable[[int], str],
        owner: str,
        on_fault: Optional[Callable[[], None]] = None,
        on_stop: Optional[Callable[[], None]] = None,
        on_death: Callable[[Any], Complaint] = died,
        on_garbled: Callable[[str, str], Complaint] = unpicklable,
    ) -> None:
        from multiprocessing.connection import wait  # here, not at import: `import bridge` stays light

        self.processes, self.conns, self.names = list(processes), list(conns), list(names)
        self.timeout, self.where, self.owner, self.on_fault = timeout, where, owner, on_fault
        self.on_stop, self._wait = on_stop, wait
        self.on_death, self.on_garbled = on_death, on_garbled
        self.closed = False
        self.failure = ""
        self.groups: List[int] = []  # process groups the workers lead (see remember_groups)
        self._poll: Any = None  # one poll object per pool, built at the first wait (see _ready)
        self._by_fd: Dict[int, Any] = {}

    def name(self, index: int) -> str:
        return self.names[index] if index < len(self.names) else f"env {index}"

    def remember_groups(self) -> None:
        """Note the process groups the workers lead now (once built): a worker that exits on
        close may be reaped at once by its parent (the forkserver), and its group is then asked in
        vain while the env's own children still run in it."""
        self.groups = [p.pid for p in self.processes if _leads_group(p.pid)]

    def require_open(self) -> None:
        """The ContractError of a closed or poisoned pool."""
        if self.closed:
            actual = f"a pool poisoned by: {self.failure}" if self.failure else "a closed env"
            raise error(ContractError, self.owner, "be open to step or reset", actual, "Build a new one")

    def send(self, index: int, message: Any, call: str = "") -> None:
        """Send ``message`` to worker ``index``; a worker that is gone is a fault, not a BrokenPipeError,
        and so is one that stops taking the message (a connection that raises ``TimeoutError``)."""
        try:
            self.conns[index].send(message)
        except TimeoutError as e:
            self.fault(index, stalled(call or "next", str(e), reading=False))
        except (OSError, ValueError):
            self.fault(index, self.on_death(self.processes[index]))

    def receive(self, index: int, call: str, when: Optional[str] = None) -> Any:
        """Worker ``index``'s reply to ``call``, watching every worker of the pool while waiting."""
        if _buffered(self.conns[index]):  # read already with an earlier message: its pipe has nothing
            return self._recv(index, call, when)
        return self.gather([index], call, when)[0]

    def gather(self, indices: Sequence[int], call: str, when: Optional[str] = None) -> List[Any]:
        """The replies of the listed workers to ``call``, in order; the first fault raises.

        Replies are the raw objects the workers sent; :meth:`check_reply` is the caller's to apply
        when the worker loop reports errors in band. ``when`` overrides ``where(index)``.
        """
        limit = build_limit(self.timeout) if call == "build" else self.timeout
        deadline = None if limit is None else time.monotonic() + limit
        replies: Dict[int, Any] = {}
        pending = list(dict.fromkeys(indices))
        sentinels = [p.sentinel for p in self.processes]
        while pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = self._ready([self.conns[i] for i in pending] + sentinels, remaining)
            if not ready and deadline is not None and time.monotonic() < deadline:
                continue  # a slice of a long wait ended (see _MAX_WAIT), not the deadline
            if not ready:
                self.fault(pending[0], timed_out(call, limit), when)  # type: ignore[arg-type]
            for i in list(pending):
                conn = self.conns[i]
                if conn in ready or (self.processes[i].sentinel in ready and conn.poll(0)):
                    replies[i] = self._recv(i, call, when)
                    pending.remove(i)
            for i, sentinel in enumerate(sentinels):  # a worker of this pool died meanwhile
                if sentinel in ready and not self.conns[i].poll(0):
                    self.fault(i, self.on_death(self.processes[i]), when)
        return [replies[i] for i in indices]

    def _recv(self, i: int, call: str, when: Optional[str]) -> Any:
        """Worker ``i``'s next message; whatever goes wrong reading it is that worker's fault."""
        try:
            return self.conns[i].recv()
        except TimeoutError as e:  # a frame begun, then silence (a remote host's pipes)
            self.fault(i, stalled(call, str(e), reading=True), when)
        except (EOFError, OSError):
            self.fault(i, self.on_death(self.processes[i]), when)
        except Exception as e:  # noqa: BLE001 - a reply that does not unpickle here
            self.fault(i, self.on_garbled(call, describe(e)), when)

    def wait_one(self, index: int, call: str, seconds: float, deadline: Optional[float]) -> Any:
        """Worker ``index``'s next message if one comes within ``seconds``, else None; its death, or
        ``deadline`` (``time.monotonic()``; None: none) passing, is the fault. For a caller that
        also watches something else between waits (a shared-memory sequence word)."""
        if deadline is not None and time.monotonic() >= deadline:
            self.fault(index, timed_out(call, self.timeout))  # type: ignore[arg-type]
        conn, sentinel = self.conns[index], self.processes[index].sentinel
        if _buffered(conn):
            return self._recv(index, call, None)
        ready = self._ready([conn, sentinel], seconds)
        if conn in ready or (sentinel in ready and conn.poll(0)):
            return self._recv(index, call, None)
        if sentinel in ready:
            self.fault(index, self.on_death(self.processes[index]))
        return None

    def _ready(self, watched: List[Any], timeout: Optional[float]) -> Any:
        """The watched pipe ends and sentinels that are ready, waiting up to ``timeout`` seconds.

        Where ``select.poll`` exists, one poll object registers every pipe end and sentinel once;
        ``multiprocessing.connection.wait`` builds and fills a new selector on every call, which
        was most of the parent's cost of a batch step of a near-zero-cost env (callgrind).
        """
        if not hasattr(select, "poll"):
            return self._wait(watched, None if timeout is None else min(timeout, _MAX_WAIT))
        if self._poll is None:
            self._poll = select.poll()
            for item in [*self.conns, *(p.sentinel for p in self.processes)]:
                fd = item if isinstance(item, int) else item.fileno()
                self._poll.register(fd, select.POLLIN)
                self._by_fd[fd] = item
        events = self._poll.poll(None if timeout is None else min(timeout, _MAX_WAIT) * 1000.0)
        ready = {self._by_fd[fd] for fd, _ in events}
        if events and ready.isdisjoint(watched):  # only an end nobody waits on: no busy loop over it
            return self._wait(watched, timeout)
        return ready

    def fault(self, index: int, complaint: Complaint, when: Optional[str] = None) -> None:
        """Poison this pool (every worker terminated and joined), then raise the ContractError."""
        expectation, actual, fix = complaint
        subject = f"{self.name(index)} {when if when is not None else self.where(index)}"
        self.failure = f"{subject}: {actual}"
        if self.on_fault is not None:
            self.on_fault()
        self.stop(grace=0.0)
        raise error(ContractError, subject, expectation, actual, f"{fix}; every worker of this pool is closed")

    def stop(self, grace: float) -> None:
        """Terminate and join every worker, close every pipe end; safe to call twice."""
        self.closed = True
        stop_processes(self.processes, grace, self.groups)
        for conn in self.conns:
            try:
                conn.close()
            except OSError:
                pass
        if self.on_stop is not None:
            self.on_stop()


def apply(env: Any, op: str, name: str, payload: Any) -> Any:
    """One sub-env's part of ``call`` / ``get_attr`` / ``set_attr`` (a worker serves it as "apply"):
    "get" reads ``name`` through the wrapper stack; "call" calls it with ``payload = (args,
    kwargs)`` if callable (else returns it); "set" sets it on the layer that has it (else the outermost)."""
    if op == "set":
        env.set_wrapper_attr(name, payload)
        return None
    found = env.get_wrapper_attr(name) if hasattr(env, "get_wrapper_attr") else getattr(env, name)
    if op == "call" and callable(found):
        args, kwargs = payload
        return found(*args, **kwargs)
    return found

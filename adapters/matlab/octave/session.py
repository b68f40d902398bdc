"""One persistent GNU Octave process serving one env's ``.m`` step and reset functions.

``octave-cli`` runs ``envbridge_host.m`` (in ``host/`` beside this module), which reads commands
from one pipe and answers on another, both opened as ``/dev/fd/N`` (Octave's own stdout and
stderr go to a file, so a ``disp`` in the user's code cannot corrupt a reply). Every message is
``[double code; double byte count; payload]``; a step sends the action's doubles and receives
``[0; n; observation doubles; Reward; IsDone]``, the fixed layout derived from the specs at bind
time. ``LoggedSignals`` stays in Octave; it crosses only for snapshots (:mod:`values`).

The process is supervised by the one worker supervisor, :class:`bridge.workers.Pool`: a host that
dies, hangs past ``timeout`` or sends what is not ours is a ContractError naming the env and the
moment, and the process is killed (its whole group) and reaped; so on ``close()``, on a fault, and
when the session is garbage-collected or Python exits (a ``weakref.finalize``: its pipes close,
Octave ends by itself on the EOF of its command pipe, and is reaped).
"""

from __future__ import annotations

import os
import select
import shutil
import struct
import subprocess
import tempfile
import weakref
from typing import Any, Optional, Tuple

from bridge.adapters.matlab.octave import values

from bridge.errors import SpecError, error
from bridge.hosted.client import HostProcess
from bridge.workers import DEFAULT_TIMEOUT, Complaint, Pool, stop_processes

__all__ = ["OctaveSession", "OctaveError", "octave_program", "HOST_DIR", "APT", "PROGRAM_VARIABLE"]

HOST_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "host")
APT = "apt-get install -y --no-install-recommends octave"
PROGRAM_VARIABLE = "ENVBRIDGE_OCTAVE"  # a path to octave-cli, when it is not on PATH
PROTOCOL = 1
STEP, RESET, BIND, GET, SET, UNDO, CLOSE, CREATE, BATCH_STEP, BATCH_RESET, OUTPUTS = (float(c) for c in range(1, 12))
OK, RAISED, OFF_LAYOUT, REFUSED = 0, 1, 2, 3
_HEAD = struct.Struct("<2d")
_STEP = struct.pack("<d", STEP)
_MAX_REPLY = 1 << 30  # bytes one reply may declare before it is read


class OctaveError(Exception):
    """An error raised inside the user's ``.m`` code, in MATLAB's words ("Error in f (line 3 of f.m): ...")."""


def octave_program() -> str:
    """The ``octave-cli`` to run: ``$ENVBRIDGE_OCTAVE``, else the one on PATH; missing -> the apt line."""
    given = os.environ.get(PROGRAM_VARIABLE, "")
    found = given if given else shutil.which("octave-cli")
    if not found or not os.access(found, os.X_OK):
        got = f"${PROGRAM_VARIABLE}={given!r}, not an executable" if given else "no octave-cli on PATH"
        fix = f"Install GNU Octave: {APT} (as root), or set ${PROGRAM_VARIABLE}=/path/to/octave-cli"
        raise error(SpecError, "GNU Octave", "be installed to run .m step and reset functions", got, fix)
    return found


class _OctaveProcess(HostProcess):
    """``octave-cli`` as the supervisor sees a worker; commands and replies on two extra pipes."""

    def __init__(self, command: list, keep: Tuple[int, int]) -> None:
        self.stderr = tempfile.TemporaryFile()
        # the sentinel, readable once Octave exits: its pidfd; where there is none (an old kernel,
        # valgrind), the read end of a pipe only Octave holds the write end of (EOF at its exit)
        life_r, life_w = os.pipe()
        try:
            self.popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=self.stderr,  # disp() and printf() of the user's code: kept for the death message
                stderr=self.stderr,
                pass_fds=keep + (life_w,),
                close_fds=True,
                start_new_session=True,  # its own group: stop_processes kills what it forks with it
            )
        except BaseException:
            os.close(life_r)
            raise
        finally:
            os.close(life_w)
        self.pid = self.popen.pid
        try:
            self.sentinel = os.pidfd_open(self.pid)
            os.close(life_r)
        except (AttributeError, OSError):
            self.sentinel = life_r
        self.pidfd = True  # the sentinel is a descriptor of ours to close (HostProcess's meaning)


class _Conn:
    """The two pipes as the supervisor's connection: ``send`` a message, ``recv`` a reply."""

    def __init__(self, out_fd: int, in_fd: int, timeout: Optional[float]) -> None:
        self.out_fd, self.in_fd, self.timeout = out_fd, in_fd, timeout
        self.buffer = bytearray()

    def fileno(self) -> int:
        return self.in_fd

    def send(self, message: bytes) -> None:
        view = memoryview(message)
        while view:
            view = view[os.write(self.out_fd, view) :]

    def poll(self, timeout: float = 0.0) -> bool:
        return bool(self.buffer) or bool(select.select([self.in_fd], [], [], timeout)[0])

    def recv(self) -> Tuple[int, bytes]:
        status, size = _HEAD.unpack(self._exactly(_HEAD.size))
        if status not in (OK, RAISED, OFF_LAYOUT, REFUSED) or not 0 <= size <= _MAX_REPLY or size != int(size):
            raise ValueError(f"a reply header ({status!r}, {size!r}) that is not the host's")
        return int(status), self._exactly(int(size))

    def _exactly(self, count: int) -> bytes:
        buffer = self.buffer
        while len(buffer) < count:
            if buffer and not self.poll(self.timeout if self.timeout is not None else None):  # type: ignore[arg-type]
                raise ValueError(f"{len(buffer)} bytes of a reply, then silence for {self.timeout:g} s")
            chunk = os.read(self.in_fd, max(65536, count - len(buffer)))
            if not chunk:
                raise EOFError("Octave closed its end")
            buffer += chunk
        out = bytes(buffer[:count])
        del buffer[:count]
        return out

    def close(self) -> None:
        for fd in (self.out_fd, self.in_fd):
            try:
                os.close(fd)
            except OSError:
                pass


class OctaveSession:
    """A started ``octave-cli`` running ``envbridge_host``, supervised; see the module docstring.

    Args:
        label: how messages name it, e.g. "rlFunctionEnv myStepFunction".
        timeout: seconds one call may take before Octave counts as hung (None: no limit).
    """

    def __init__(self, label: str, timeout: Optional[float] = DEFAULT_TIMEOUT) -> None:
        program = octave_program()
        self.label, self.timeout, self.last = label, timeout, "start"
        self.padding = b""  # zeros after [code; byte count]: a message's first block is 1 + na doubles
        to_host_r, to_host_w = os.pipe()
        from_host_r, from_host_w = os.pipe()
        host = HOST_DIR.replace("'", "''")  # an Octave string literal
        # no octave-workspace file in the user's folder when Octave is stopped (SIGTERM/SIGHUP) or crashes
        quiet_exit = (
            "sigterm_dumps_octave_core(false); sighup_dumps_octave_core(false); crash_dumps_octave_core(false); "
        )
        start = (
            f"{quiet_exit}addpath('{host}'); envbridge_host('/dev/fd/{to_host_r}', '/dev/fd/{from_host_w}', '{host}')"
        )
        command = [program, "--norc", "--no-history", "--quiet", "--no-window-system", "--eval", start]
        try:
            self.process = _OctaveProcess(command, (to_host_r, from_host_w))
        except BaseException:
            os.close(to_host_w)
            os.close(from_host_r)
            raise
        finally:
            os.close(to_host_r)
            os.close(from_host_w)
        self.conn = _Conn(to_host_w, from_host_r, timeout)
        name = f"the Octave host of {label}"
        # run on close, on a fault (Pool.stop calls it), on garbage collection or at Python's exit;
        # it holds the process and the pipes, not the session
        self.finalizer = weakref.finalize(self, _shutdown, self.process, self.conn)
        self.pool = Pool(
            [self.process], [self.conn], [name], timeout, self._where, name, on_stop=self.finalizer, on_death=self._died
        )
        self._poll = select.poll()  # the step's fast path (see step)
        self._poll.register(self.conn.in_fd, select.POLLIN)
        self._poll.register(self.process.sentinel, select.POLLIN)
        self._ready = [(self.conn.in_fd, select.POLLIN)]
        self._wait_ms = -1 if timeout is None else timeout * 1000.0
        status, payload = self.pool.receive(0, "build", "at start")
        hello = values.unpack(payload, "the Octave host's hello")
        if status != OK or not isinstance(hello, dict) or hello.get("protocol") != PROTOCOL:
            self.pool.fault(0, _garbled("hello", repr(hello)[:80]), "at start")
        self.version = str(hello.get("octave"))

    # -- calls ---------------------------------------------------------------------------------
    def call(self, code: float, payload: bytes, name: str) -> Tuple[int, bytes]:
        """Send one command and return ``(status, payload)`` of its reply (faults raise)."""
        self.pool.require_open()
        self.last = name
        self.pool.send(0, _HEAD.pack(code, len(payload)) + self.padding + payload)
        return self.pool.receive(0, name)

    def step(self, action: bytes) -> Tuple[int, bytes]:
        """A step: the code and the action's doubles in one block (the layout bind fixed).

        The common case takes one poll over Octave's reply pipe and its pidfd: the reply is there
        within the timeout, and whole. Anything else (Octave gone, silent, a reply cut short or not
        ours) goes to the supervisor, which says so (Pool.receive, or Pool.fault here).
        Against Pool.receive for every step: -20 us of Python per step on a loaded machine.
        """
        pool = self.pool
        if pool.closed:
            pool.require_open()
        self.last = "step"
        pool.send(0, _STEP + action)
        if self._poll.poll(self._wait_ms) != self._ready:
            return pool.receive(0, "step")
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            pool.fault(0, self._died(self.process))
        except ValueError as e:  # a header that is not ours, or a reply cut short
            pool.fault(0, _garbled("step", str(e)))
        raise AssertionError("unreachable: Pool.fault raises")

    def block(self, action_count: int) -> None:
        """After a bind: Octave reads 1 + ``action_count`` doubles at the start of every message."""
        self.padding = bytes(8 * (action_count - 1))

    def value(self, code: float, payload: Any, name: str, subject: str) -> Any:
        """A command with a packed value, whose OK reply is a packed value (REFUSED: a SpecError)."""
        status, reply = self.call(code, values.pack(payload, subject), name)
        if status == REFUSED:
            raise error(SpecError, subject, "be accepted by Octave", values.unpack(reply), "Fix what Octave says")
        if status != OK:
            self.pool.fault(0, _garbled(name, f"status {status}"))
        return values.unpack(reply, f"the Octave host's reply to {name}")

    def raised(self, payload: bytes) -> OctaveError:
        """The OctaveError of a RAISED reply, in MATLAB's words."""
        said = values.unpack(payload, "the Octave host's error")
        where = said.get("where", {}) if isinstance(said, dict) else {}
        text = said.get("message", "") if isinstance(said, dict) else str(said)
        name, file, line = where.get("name", ""), where.get("file", ""), where.get("line", -1)
        if not name:
            return OctaveError(f"Error: {text}")
        at = f"line {int(line)} of {file}" if isinstance(line, float) and line > 0 else file or "Octave"
        return OctaveError(f"Error in {name} ({at}): {text}")

    def close(self) -> None:
        """Ask Octave to end, then stop and reap it (its group too); safe to call twice."""
        if not self.pool.closed:
            try:
                self.conn.send(_HEAD.pack(CLOSE, 0) + self.padding)
            except OSError:
                pass
        self.pool.stop(grace=1.0)

    # -- the supervisor's callbacks --------------------------------------------------------------
    def _where(self, index: int) -> str:
        return f"in {self.last}()"

    def _died(self, process: Any) -> Complaint:
        process.join(1.0)
        code = process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        tail = process.stderr_tail()
        got = f"Octave died ({how})" + (f"; its output ends: {tail}" if tail else "")
        return "keep its Octave process alive", got, "Find what ends Octave in the .m code (exit, quit, a crash)"


def _garbled(call: str, text: str) -> Complaint:
    return f"answer {call} as envbridge's Octave host", text, "Check that octave-cli is GNU Octave 7 or later"


def _shutdown(process: _OctaveProcess, conn: _Conn) -> None:
    """Close both pipes (Octave ends on the EOF), stop and reap Octave, close its pidfd and output file."""
    conn.close()
    stop_processes([process], grace=1.0)
    process.stderr.close()
    if process.pidfd and process.sentinel >= 0:
        os.close(process.sentinel)
        process.sentinel = -1

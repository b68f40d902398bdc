"""The host process as the worker supervisor sees it, and its pipes as the supervisor's connection.

:class:`HostProcess` starts ``python -m bridge.hosted.host`` in a session of its own with a lifeline
pipe and a capped stderr file (see :mod:`bridge.hosted.host`); :class:`FrameConn` sends and reads
frames on its non-blocking pipes, every wait within the call's timeout.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
from typing import Any, Optional

from bridge.hosted import protocol
from bridge.workers import stop_processes

__all__ = ["HostProcess", "FrameConn", "HOST_MAIN"]

_STDERR_TAIL = 600  # characters of the host's stderr a death message quotes


# the host's entry: `python -m bridge.hosted.host`, except that the current folder is not put first on
# sys.path before envbridge is imported (a folder named bridge/ there, as in envbridge's own checkout,
# would shadow the installed package and its bridge.adapters); the host makes the current folder
# importable for the user's modules itself, once envbridge is imported (loading.importable_cwd)
HOST_MAIN = (
    "import sys\nif sys.path[:1] == ['']:\n    del sys.path[0]\n"
    "import runpy\nrunpy.run_module('bridge.hosted.host', run_name='__main__', alter_sys=True)"
)


class HostProcess:
    """A ``subprocess.Popen`` host as the supervisor sees a worker (sentinel, join, exitcode, ...).

    It leads a session (so a process group) of its own: what the env forks is stopped with it,
    even after the host itself crashed (``group``). It holds the read end of a lifeline pipe whose
    write end only this side keeps: when this process dies, the host ends itself.
    """

    def __init__(self, command: list, region: Optional[int] = None) -> None:
        self.stderr = tempfile.TemporaryFile()  # a file, not a pipe: a chatty host never blocks on it
        lifeline, self.lifeline = os.pipe()
        shared = [] if region is None else ["--region", str(region)]  # the step wire's region (a memfd)
        try:
            self.popen = subprocess.Popen(
                command + ["--lifeline", str(lifeline)] + shared,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                close_fds=True,
                pass_fds=(lifeline,) if region is None else (lifeline, region),
                start_new_session=True,
            )
        except BaseException:
            os.close(self.lifeline)
            self.stderr.close()
            raise
        finally:
            os.close(lifeline)  # the host's end: only the host holds it now
        self.pid = self.group = self.popen.pid
        for stream in (self.popen.stdin, self.popen.stdout):  # every wait here has a deadline (see FrameConn)
            os.set_blocking(stream.fileno(), False)
        self.pidfd = hasattr(os, "pidfd_open")  # readable once the host exits; else its stdout's EOF
        self.sentinel = os.pidfd_open(self.popen.pid) if self.pidfd else self.popen.stdout.fileno()

    @property
    def exitcode(self) -> Optional[int]:
        return self.popen.poll()

    def join(self, timeout: Optional[float] = None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def terminate(self) -> None:
        if self.is_alive():
            self.popen.terminate()

    def kill(self) -> None:
        if self.is_alive():
            self.popen.kill()

    def stderr_tail(self) -> str:
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - _STDERR_TAIL))
        return self.stderr.read().decode("utf-8", "replace").strip()

    def release(self) -> None:
        """Close what this side holds of the stopped host (pipes, lifeline, sentinel, stderr file); twice is fine."""
        for stream in (self.popen.stdin, self.popen.stdout, self.stderr):
            try:
                stream.close()
            except OSError:
                pass
        if self.lifeline >= 0:
            os.close(self.lifeline)
            self.lifeline = -1
        if self.pidfd and self.sentinel >= 0:
            os.close(self.sentinel)
            self.sentinel = -1

    def shutdown(self, grace: float) -> None:
        """Stop the host of an env dropped without ``close()``: end of input (its env closes), then
        terminate what is left after ``grace`` seconds, and release (a finalizer calls this)."""
        try:
            self.popen.stdin.close()
        except OSError:
            pass
        stop_processes([self], grace)
        self.release()


class FrameConn:
    """The host's pipes as the supervisor's connection: ``send`` / ``recv`` / ``poll`` of frames.

    ``send`` takes an encoded frame (see :meth:`RemoteEnv._frame`). Both ends are non-blocking: a
    frame the host begins must arrive whole, and a frame sent must be taken, within ``timeout``
    seconds, else :class:`protocol.Stalled` (which the pool reports as a stalled host).
    """

    def __init__(self, process: HostProcess, timeout: Optional[float]) -> None:
        self.out_fd = process.popen.stdin.fileno()
        self.in_fd = process.popen.stdout.fileno()
        self.reader = protocol.FrameReader(self.in_fd)
        self.timeout = timeout

    def fileno(self) -> int:
        return self.in_fd

    def send(self, frame: bytes) -> None:
        protocol.write_frame(self.out_fd, frame, self.timeout)

    def recv(self) -> Any:
        """The next message; None for an empty frame (a doorbell of the step wire: no message)."""
        body = self.reader.read(self.timeout)
        return protocol.decode(body) if body else None

    def buffered(self) -> bool:
        """A whole frame was read ahead with an earlier one (the pipe may have nothing more)."""
        return self.reader.ready()

    def poll(self, timeout: float = 0.0) -> bool:
        """A whole frame is buffered, or the pipe has bytes (or its end) to read."""
        if self.reader.ready():
            return True
        return bool(select.select([self.in_fd], [], [], timeout)[0])

    def close(self) -> None:
        pass  # HostProcess.release closes the pipes once the host is stopped

"""This side of a remote env: :func:`remote` starts ``python -m bridge.hosted.host`` in another
interpreter and returns a :class:`RemoteEnv`, a :class:`bridge.Env` that forwards every call.

The host is supervised by the one worker supervisor, :class:`bridge.workers.Pool` (its process
adapter and frame connection below give it a sentinel and a pipe end to watch): a host that dies,
hangs past ``timeout``, raises in the env, cannot build the env, or sends a frame that is not ours
becomes a ContractError here at once; the host is then terminated and joined and the env is closed
(build a new one), as a local process worker's pool is.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
from typing import Any, Dict, Iterable, Optional, Tuple

from bridge import spaces
from bridge.env import Env
from bridge.errors import ContractError, SpecError, error, message
from bridge.hosted import protocol, pythons
from bridge.hosted.pythons import PYTHON_VARIABLE
from bridge.workers import DEFAULT_TIMEOUT, Complaint, Pool, check_timeout, raised

__all__ = ["remote", "RemoteEnv", "host_python", "PYTHON_VARIABLE"]

_STDERR_TAIL = 600  # characters of the host's stderr a death message quotes


def host_python(python: Optional[str]) -> str:
    """The interpreter path ``python`` names: a path, or an era name (:mod:`bridge.hosted.pythons`)."""
    if python is None:
        return sys.executable
    if not isinstance(python, str) or not python:
        raise error(SpecError, "remote python", "be an interpreter path or an era name", repr(python), _PY_FIX)
    path = python
    if os.sep not in python and not os.path.exists(python):
        path = pythons.era_python(python)
        if not path:
            raise pythons.not_found(python)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise error(SpecError, "remote python", "be an executable interpreter", repr(path), _PY_FIX)
    return path


_PY_FIX = "Pass e.g. python='/path/to/venv/bin/python' or python='legacy' with $ENVBRIDGE_PYTHON_LEGACY set"


class HostProcess:
    """A ``subprocess.Popen`` host as the supervisor sees a worker (sentinel, join, exitcode, ...)."""

    def __init__(self, command: list) -> None:
        self.stderr = tempfile.TemporaryFile()  # a file, not a pipe: a chatty host never blocks on it
        # its own process group, as the pool's workers: what the env forks is stopped with the host
        self.popen = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            close_fds=True,
            start_new_session=True,
        )
        self.pid = self.popen.pid
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
        """Close what this side holds of the stopped host (pipes, sentinel, the stderr file)."""
        for stream in (self.popen.stdin, self.popen.stdout, self.stderr):
            try:
                stream.close()
            except OSError:
                pass
        if self.pidfd and self.sentinel >= 0:
            os.close(self.sentinel)
            self.sentinel = -1


class FrameConn:
    """The host's pipes as the supervisor's connection: ``send`` / ``recv`` / ``poll`` of frames."""

    def __init__(self, process: HostProcess, timeout: Optional[float]) -> None:
        self.out_fd = process.popen.stdin.fileno()
        self.in_fd = process.popen.stdout.fileno()
        self.reader = protocol.FrameReader(self.in_fd)
        self.timeout = timeout

    def fileno(self) -> int:
        return self.in_fd

    def send(self, tree: Any) -> None:
        protocol.write_frame(self.out_fd, protocol.encode(tree))

    def recv(self) -> Any:
        return protocol.decode(self.reader.read(self._wait))

    def poll(self, timeout: float = 0.0) -> bool:
        return bool(self.reader.buffer) or bool(select.select([self.in_fd], [], [], timeout)[0])

    def _wait(self) -> None:
        """Between the parts of one frame: the rest must come within the timeout."""
        if not self.poll(self.timeout if self.timeout is not None else None):  # type: ignore[arg-type]
            got = f"{len(self.reader.buffer)} bytes of a frame, then silence for {self.timeout:g} s"
            raise protocol.ProtocolError(message("remote frame", "arrive whole", got, "Check the host"))

    def close(self) -> None:
        pass  # HostProcess.release closes the pipes once the host is stopped


class RemoteEnv(Env):
    """A :class:`bridge.Env` whose env runs in another interpreter (see :func:`remote`)."""

    def __init__(
        self,
        source: str,
        *,
        python: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        kwargs: Optional[Dict[str, Any]] = None,
        imports: Iterable[str] = (),
        wrappers: Iterable[str] = (),
        import_options: Optional[Dict[str, Any]] = None,
    ) -> None:
        wrappers = list(wrappers)
        if not all(isinstance(w, str) for w in wrappers):
            fix = "Name each wrapper as module:Class (the host imports it)"
            raise error(SpecError, "remote wrappers", "be module:Class strings", repr(wrappers), fix)
        if not isinstance(source, str) or not source:
            fix = "Pass a registered id, module:attr or path/to/file.py:attr (the host imports it)"
            raise error(SpecError, "remote source", "be a non-empty str", repr(source), fix)
        self.source, self.timeout = source, check_timeout(timeout, "remote")
        self.python = host_python(python)
        self.steps, self.needs_reset, self.host_traceback = 0, True, ""
        self.process = HostProcess([self.python, "-m", "bridge.hosted.host"])
        conn = FrameConn(self.process, self.timeout)
        self.pool = Pool(
            [self.process],
            [conn],
            [f"remote env {source!r}"],
            self.timeout,
            self._where,
            f"remote env {source!r}",
            on_stop=self.process.release,
            on_death=self._died,
            on_garbled=_garbled,
        )
        self.peer = self._handshake()
        build = {"source": source, "kwargs": dict(kwargs or {}), "imports": list(imports)}
        build.update(wrappers=wrappers, import_options=dict(import_options or {}))
        self.pool.send(0, ("build", build))
        built = self._result("build", "in the host")
        self.observation_space = spaces.from_dict(built["observation_space"])
        self.action_space = spaces.from_dict(built["action_space"])
        self.metadata, self.render_mode = built["metadata"], built["render_mode"]
        self.determinism, self.name = built["determinism"], built["name"]
        bound = built.get("max_episode_steps")  # the host's episode_bound: an int >= 1 or None, else ignored
        self.max_episode_steps = bound if type(bound) is int and bound >= 1 else None
        self.pool.names = [f"remote env {source!r} ({self.name} in {self.peer['python_label']})"]

    # -- the handshake -----------------------------------------------------------------------
    def _handshake(self) -> dict:
        reply = self.pool.receive(0, "build", "at start")  # starting may import heavy modules: the build deadline
        ok = isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "hello" and isinstance(reply[1], dict)
        if not ok:
            self.pool.fault(0, _garbled("hello", f"{protocol.shown(reply)}"), "at start")
        peer, here = reply[1], protocol.hello()
        theirs = f"envbridge {peer.get('envbridge')} (protocol {peer.get('protocol')})"
        if (peer.get("envbridge"), peer.get("protocol")) != (here["envbridge"], here["protocol"]):
            expectation = f"run envbridge {here['envbridge']} (protocol {here['protocol']}) as this side does"
            got = f"{theirs} on Python {peer.get('python')}, numpy {peer.get('numpy')}"
            fix = f"Install this envbridge into {self.python} (pip install -e /path/to/envbridge)"
            self.pool.fault(0, (expectation, got, fix), "at start")
        peer["python_label"] = f"Python {peer.get('python')}, numpy {peer.get('numpy')}"
        return peer

    # -- the Env API -------------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        self.pool.require_open()
        super().reset(seed=seed)  # the seed is checked here, before the host is asked
        self.pool.send(0, ("reset", {"seed": None if seed is None else int(seed), "options": options}))
        obs, info = self._result("reset")
        self.steps, self.needs_reset = 0, False
        return obs, info

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        self.pool.require_open()
        self.pool.send(0, ("step", action))
        obs, reward, terminated, truncated, info = self._result("step")
        self.steps += 1
        self.needs_reset = terminated or truncated
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        self.pool.require_open()
        self.pool.send(0, ("render", None))
        return self._result("render")

    def clone_state(self, *, include_rng: bool = True) -> dict:
        self.pool.require_open()
        self.pool.send(0, ("clone_state", bool(include_rng)))
        return self._result("clone_state")

    def restore_state(self, snapshot: dict) -> None:
        self.pool.require_open()
        self.pool.send(0, ("restore_state", snapshot))
        self._result("restore_state")

    def close(self) -> None:
        if not self.pool.closed:
            try:
                self.pool.conns[0].send(("close", None))
            except (OSError, ValueError):
                pass  # the host is gone already
        self.pool.stop(grace=1.0)

    def __repr__(self) -> str:
        return f"<RemoteEnv {getattr(self, 'name', self.source)} in {self.python}>"

    # -- replies -----------------------------------------------------------------------------
    def _result(self, call: str, when: Optional[str] = None) -> Any:
        reply = self.pool.receive(0, call, when)
        kind = reply[0] if isinstance(reply, tuple) and reply else None
        if kind == "ok" and len(reply) == 2:
            return reply[1]
        if kind == "refused" and len(reply) == 4 and isinstance(reply[2], str):
            raise ContractError(reply[2])  # the host env's own refusal; it is unchanged and usable
        if kind == "error" and len(reply) == 4 and isinstance(reply[2], str) and isinstance(reply[3], str):
            self.host_traceback = reply[3]
            self.pool.fault(0, self._raised(reply[1], reply[2], reply[3]), when)
        self.pool.fault(0, _garbled(call, protocol.shown(reply)), when)

    def _raised(self, call: Any, text: str, trace: str) -> Complaint:
        if call == "send":
            fix = "Keep info and observations plain data (numbers, strings, arrays, dicts, lists, tuples)"
            return "send plain data back", text, fix
        if call == "build":  # the resolver's own sentence (or the factory's error), as the host said it
            return (
                "build the env without raising",
                text,
                "Fix what it says (the host's traceback is on RemoteEnv.host_traceback)",
            )
        expectation, actual, fix = raised(str(call), text)
        frame = _last_frame(trace)
        if frame:
            actual += f" ({frame})"
        return expectation, actual, fix + " (the host's traceback is on RemoteEnv.host_traceback)"

    def _died(self, process: HostProcess) -> Complaint:
        process.join(1.0)
        code = process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        tail = process.stderr_tail()
        got = f"the host died ({how})" + (f"; its stderr ends: {tail}" if tail else "")
        fix = f"Run {self.python} -m bridge.hosted.host to see it start, or find what ends it in the env"
        return "keep its host process alive", got, fix

    def _where(self, index: int) -> str:
        return f"at reset (after step {self.steps})" if self.needs_reset else f"at step {self.steps + 1}"


def _garbled(call: str, text: str) -> Complaint:
    fix = "Point python= at an interpreter with this envbridge installed (its host speaks the frames)"
    return f"answer {call} with an envbridge host frame", text, fix


def _last_frame(trace: str) -> str:
    """``File "...", line N, in f`` of the innermost frame of a formatted traceback."""
    lines = [line.strip() for line in trace.splitlines() if line.strip().startswith("File ")]
    return lines[-1] if lines else ""


def remote(
    source: str,
    *,
    python: Optional[str] = None,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    kwargs: Optional[Dict[str, Any]] = None,
    imports: Iterable[str] = (),
    wrappers: Iterable[str] = (),
    import_options: Optional[Dict[str, Any]] = None,
) -> RemoteEnv:
    """The env ``source`` names, built and run in the interpreter ``python``, driven from here.

    Args:
        source: what the host's resolver takes: a registered id, ``module:attr``, ``file.py:attr`` or
            ``scheme:id``; a gym, Gymnasium or dm_env env there is imported in the host.
        python: an interpreter path, or an era name NAME read from ``$ENVBRIDGE_PYTHON_<NAME>``
            (e.g. ``"legacy"``); default this interpreter.
        timeout: seconds one call may take before the host counts as hung (None: no limit).
        kwargs: given to the id's entry point or the factory, in the host (plain data).
        imports: modules the host imports first (ids they register), as ``--import``.
        wrappers: ``module:Class`` names the host wraps the env in, innermost first, as ``--wrapper``.
        import_options: the importer's options in the host (plain data), e.g. ``{"drop_keys": ["mission"]}``
            as ``--drop-key mission``.
    """
    return RemoteEnv(
        source,
        python=python,
        timeout=timeout,
        kwargs=kwargs,
        imports=imports,
        wrappers=wrappers,
        import_options=import_options,
    )

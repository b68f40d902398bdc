"""This side of a remote env: :func:`remote` starts ``python -m bridge.hosted.host`` in another
interpreter and returns a :class:`RemoteEnv`, a :class:`bridge.Env` that forwards every call.

The host is supervised by the one worker supervisor, :class:`bridge.workers.Pool` (the process
adapter and frame connection of :mod:`bridge.hosted.pipes` give it a sentinel and a pipe end to
watch): a host that dies, hangs past ``timeout``, raises in the env, cannot build the env, or sends
a frame that is not ours becomes a ContractError here at once; the host is then terminated and
joined and the env is closed
(build a new one), as a local process worker's pool is.

Every wait has a deadline: the host's pipes are non-blocking on this side, so a frame begun and
not finished, and a request the host stops taking, fail within ``timeout`` as a hang does. A
caller's value that cannot cross (not plain data) is refused before anything is sent, the env
still usable. Nothing leaks: a host dropped without ``close()`` is stopped by a finalizer, the
host ends itself (and what it forked) when this process dies (its lifeline pipe closes), what it
forked is stopped with it after a crash (its process group), and its stderr file stays capped.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import weakref
from typing import Any, Dict, Iterable, Optional, Tuple

from bridge import spaces
from bridge.env import Env
from bridge.errors import ContractError, SpecError, error
from bridge.hosted import protocol, pythons, wire
from bridge.hosted.pipes import HOST_MAIN, FrameConn, HostProcess
from bridge.hosted.pythons import PYTHON_VARIABLE
from bridge.hosted.stepping import SharedSteps
from bridge.workers import DEFAULT_TIMEOUT, Complaint, Pool, check_timeout, raised

__all__ = ["remote", "RemoteEnv", "host_python", "hosted_factory", "PYTHON_VARIABLE"]


def host_python(python: Optional[str]) -> str:
    """The interpreter path ``python`` names: a path, an era name (:mod:`bridge.hosted.pythons`), or a
    command on ``PATH`` (``"python3.9"``)."""
    if python is None:
        return sys.executable
    if not isinstance(python, str) or not python:
        raise error(SpecError, "remote python", "be an interpreter path or an era name", repr(python), _PY_FIX)
    path = python
    if os.sep not in python and not os.path.exists(python):
        era = re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", python) is not None
        path = (pythons.era_python(python) if era else "") or shutil.which(python) or ""
        if not path and era:
            raise pythons.not_found(python)
        if not path:
            expectation = "be an interpreter path, a command on PATH or an era name"
            raise error(SpecError, "remote python", expectation, f"{python!r} (no such command)", _PY_FIX)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise error(SpecError, "remote python", "be an executable interpreter", repr(path), _PY_FIX)
    return path


_PY_FIX = "Pass e.g. python='/path/to/venv/bin/python' or python='legacy' with $ENVBRIDGE_PYTHON_LEGACY set"


class RemoteEnv(Env):
    """A :class:`bridge.Env` whose env runs in another interpreter (see :func:`remote`).

    ``count`` > 1 builds that many envs in the host, for :class:`bridge.hosted.vector.RemoteVectorEnv`
    (which steps them as one batch); the single-env methods then act on the first.
    """

    def __init__(
        self,
        source: str,
        *,
        python: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        kwargs: Optional[Dict[str, Any]] = None,
        imports: Iterable[str] = (),
        shared_memory: bool = True,
        count: int = 1,
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
        for name, given in (("kwargs", kwargs), ("import_options", import_options)):
            if given is not None and not isinstance(given, dict):
                fix = f"Pass {name} as a dict of keyword names to plain values, e.g. {name}={{}}"
                raise error(SpecError, f"remote {name}", "be a dict", f"{type(given).__name__} {given!r}"[:80], fix)
        if not isinstance(shared_memory, bool):
            fix = "Pass shared_memory=True (steps through a shared region) or False (frames only)"
            raise error(SpecError, "remote shared_memory", "be True or False", repr(shared_memory)[:60], fix)
        self.source, self.timeout = source, check_timeout(timeout, "remote")
        self.python = host_python(python)
        self.steps, self.needs_reset, self.host_traceback = 0, True, ""
        payload = {"source": source, "kwargs": dict(kwargs or {}), "imports": list(imports), "count": count}
        payload.update(wrappers=wrappers, import_options=dict(import_options or {}))
        build = self._frame(("build", payload), "kwargs")  # refused here, before a host starts
        self.shared: Optional[SharedSteps] = None
        self.wire = {"step": "frames"}  # how steps travel (see attach)
        region = wire.make_region() if shared_memory else None
        try:
            self.process = HostProcess([self.python, "-c", HOST_MAIN], region)
        except BaseException:
            if region is not None:
                os.close(region)
            raise
        self._finalizer = weakref.finalize(self, self.process.shutdown, 1.0)
        conn = FrameConn(self.process, self.timeout)
        self.pool = Pool(
            [self.process],
            [conn],
            [f"remote env {source!r}"],
            self.timeout,
            self._where,
            f"remote env {source!r}",
            on_stop=self._release,
            on_death=self._died,
            on_garbled=_garbled,
        )
        try:
            self.peer = self._handshake()
            self.pool.send(0, build, "build")
            self._describe(self._result("build", "in the host"))
            if region is not None:
                self._attach(region, count)
        except BaseException:
            self.pool.stop(grace=0.0)  # whatever went wrong, no host is left running
            self._finalizer.detach()
            raise
        finally:
            if region is not None:
                os.close(region)  # mapped (or not used): the mappings hold the memory
        self.pool.names = [f"remote env {source!r} ({self.name} in {self.peer['python_label']})"]

    # -- the handshake -----------------------------------------------------------------------
    def _handshake(self) -> dict:
        reply = self.pool.receive(0, "build", "at start")  # starting may import heavy modules: the build deadline
        ok = isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "hello" and isinstance(reply[1], dict)
        if not ok:
            self.pool.fault(0, _garbled("hello", f"{protocol.shown(reply)}"), "at start")
        peer, here = reply[1], protocol.hello()
        versions = (peer.get("envbridge"), peer.get("protocol"))
        if versions != (here["envbridge"], here["protocol"]):
            show: Any = str if tuple(map(str, versions)) != (here["envbridge"], str(here["protocol"])) else repr
            theirs = f"envbridge {show(versions[0])} (protocol {show(versions[1])})"
            expectation = f"run envbridge {here['envbridge']} (protocol {here['protocol']}) as this side does"
            got = f"{theirs} on Python {peer.get('python')}, numpy {peer.get('numpy')}"
            fix = f"Install this envbridge into {self.python} (pip install -e /path/to/envbridge)"
            self.pool.fault(0, (expectation, got, fix), "at start")
        peer["python_label"] = f"Python {peer.get('python')}, numpy {peer.get('numpy')}"
        return peer

    def _describe(self, built: Any) -> None:
        """Take the host's description of the env it built; anything else is a garbled reply."""
        keys = {
            "observation_space",
            "action_space",
            "metadata",
            "render_mode",
            "determinism",
            "name",
            "max_episode_steps",
        }
        try:
            if not isinstance(built, dict) or set(built) != keys:
                raise ValueError(f"a build reply without exactly {sorted(keys)}: {protocol.shown(built)}")
            ok = isinstance(built["metadata"], dict) and isinstance(built["name"], str)
            ok = ok and isinstance(built["render_mode"], (str, type(None))) and isinstance(built["determinism"], str)
            if not ok:
                raise ValueError(f"a build reply of other types: {protocol.shown(built)}")
            self.observation_space = spaces.from_dict(built["observation_space"])
            self.action_space = spaces.from_dict(built["action_space"])
        except Exception as e:  # noqa: BLE001 - a peer's reply: whatever it holds is named, never raw
            self.pool.fault(0, _garbled("build", f"{type(e).__name__}: {e}"), "in the host")
        self.metadata, self.render_mode = built["metadata"], built["render_mode"]
        self.determinism, self.name = built["determinism"], built["name"]
        bound = built["max_episode_steps"]  # the host's episode_bound: an int >= 1 or None, else ignored
        self.max_episode_steps = bound if type(bound) is int and bound >= 1 else None

    def _attach(self, region: int, n: int) -> None:
        """Steps through the shared-memory region from now on, if the spaces allow it; the host
        must lay it out exactly as this side does."""
        layout = wire.Layout(self.observation_space, self.action_space, n)
        if not (wire.supported(self.observation_space) and wire.supported(self.action_space)):
            return
        wire.size_and_seal(region, layout.size)
        self.pool.send(0, self._frame(("attach", None), "attach"), "attach")
        said = self._result("attach", "at attach")
        if not isinstance(said, dict) or said.get("layout") != layout.describe():
            got = protocol.shown(said.get("layout") if isinstance(said, dict) else said)
            expectation = f"lay out the shared region as its spaces do ({protocol.shown(layout.describe())})"
            self.pool.fault(0, (expectation, got, "Run the same envbridge version in both interpreters"), "at attach")
        self.shared = SharedSteps(self.pool, region, layout, self._answer_step)
        self.wire = {"step": "shared memory", "doorbell": str(said.get("doorbell")), "spin": str(said.get("spin"))}

    def _release(self) -> None:
        self.process.release()
        if self.shared is not None:
            self.shared.close()
            self.shared = None

    # -- the Env API -------------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        self.pool.require_open()
        if options is not None and not isinstance(options, dict):
            fix = "Pass options as a dict (or None), as Gymnasium's reset takes them"
            raise error(SpecError, "remote reset options", "be a dict or None", repr(options)[:60], fix)
        super().reset(seed=seed)  # the seed is checked here, before the host is asked
        request = ("reset", {"seed": None if seed is None else int(seed), "options": options})
        self.pool.send(0, self._frame(request, "reset options"), "reset")
        obs, info = self._result("reset")
        self.steps, self.needs_reset = 0, False
        return obs, info

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        self.pool.require_open()
        if self.shared is not None and self.shared.put_action(action):
            obs, reward, terminated, truncated, info = self.shared.step_one("step")
        else:  # no region, or an action not exactly of its space: sent as given
            self.pool.send(0, self._frame(("step", action), "step action"), "step")
            obs, reward, terminated, truncated, info = self._result("step")
        self.steps += 1
        self.needs_reset = terminated or truncated
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        self.pool.require_open()
        self.pool.send(0, self._frame(("render", None), "render"), "render")
        return self._result("render")

    def clone_state(self, *, include_rng: bool = True) -> dict:
        self.pool.require_open()
        self.pool.send(0, self._frame(("clone_state", bool(include_rng)), "clone_state"), "clone_state")
        return self._result("clone_state")

    def restore_state(self, snapshot: dict) -> None:
        self.pool.require_open()
        self.pool.send(0, self._frame(("restore_state", snapshot), "restore_state snapshot"), "restore_state")
        self._result("restore_state")

    def close(self) -> None:
        if not self.pool.closed:
            try:
                self.pool.conns[0].send(protocol.encode(("close", None)))
            except (OSError, ValueError):
                pass  # the host is gone already, or stopped reading: stopped below
        self.pool.stop(grace=1.0)
        self._finalizer.detach()

    def __repr__(self) -> str:
        return f"<RemoteEnv {getattr(self, 'name', self.source)} in {self.python}>"

    # -- requests and replies ------------------------------------------------------------------
    def _frame(self, request: Tuple[str, Any], what: str) -> bytes:
        """The frame of ``request``; a value that cannot cross is the caller's mistake, refused
        here before anything is sent (the env is untouched and still usable)."""
        try:
            return protocol.encode(request)
        except SpecError as e:
            got = e.parts[2] if getattr(e, "parts", None) else str(e)
            expectation = "be plain data (dict, list, tuple, ndarray, numpy scalar, str, int, float, bool or None)"
            fix = "Pass plain data: only that crosses to the host (the env is unchanged and still usable)"
            raise error(SpecError, f"remote env {self.source!r} {what}", expectation, got, fix) from None

    def _result(self, call: str, when: Optional[str] = None) -> Any:
        reply = None
        for _ in range(3):  # a stale ring of the step wire (an empty frame) or two may come first
            reply = self.pool.receive(0, call, when)
            if reply is not None:
                break
        return self._answer(reply, call, when)

    def _answer_step(self, reply: Any) -> None:
        self._answer(reply, "step", None)
        self.pool.fault(0, _garbled("step", protocol.shown(reply)))  # an "ok" frame in place of the region's reply

    def _answer(self, reply: Any, call: str, when: Optional[str]) -> Any:
        kind = reply[0] if isinstance(reply, tuple) and reply else None
        if kind == "ok" and len(reply) == 2:
            return reply[1]
        if kind == "refused" and len(reply) in (4, 5) and isinstance(reply[2], str):
            raise ContractError(reply[2])  # the host env's own refusal; it is unchanged and usable
        if kind == "error" and len(reply) in (4, 5) and isinstance(reply[2], str) and isinstance(reply[3], str):
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
    shared_memory: bool = True,
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
        shared_memory: step through a shared-memory region where the spaces allow it (see
            :mod:`bridge.hosted.wire`; ``RemoteEnv.wire`` says what is used); False: frames only.
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
        shared_memory=shared_memory,
        wrappers=wrappers,
        import_options=import_options,
    )


def hosted_factory(
    source: str,
    python: Optional[str],
    imports: Iterable[str] = (),
    wrappers: Iterable[str] = (),
    import_options: Optional[Dict[str, Any]] = None,
) -> Any:
    """An entry point that hosts ``source``: keyword arguments a registry passes (``render_mode``,
    ...) go to the env's own entry point in the host, as ``kwargs`` of :func:`remote`."""
    return functools.partial(_hosted, source, python, tuple(imports), tuple(wrappers), import_options)


def _hosted(
    source: str,
    python: Optional[str],
    imports: Tuple[str, ...],
    wrappers: Tuple[str, ...],
    import_options: Optional[Dict[str, Any]],
    **kwargs: Any,
) -> RemoteEnv:
    return RemoteEnv(
        source, python=python, kwargs=kwargs, imports=imports, wrappers=wrappers, import_options=import_options
    )

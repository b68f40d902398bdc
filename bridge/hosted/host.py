"""The host side of a remote env: ``python -m bridge.hosted.host``, run by :func:`bridge.remote`.

It speaks the frames of :mod:`bridge.hosted.protocol` on its stdin and a private copy of its stdout;
file descriptor 1 is pointed at stderr first, so whatever the env prints cannot corrupt a frame.
It sends a hello naming its versions, then builds the env with the one resolver
(:func:`bridge.loading.resolve`) and answers ``(command, payload)`` requests until "close" or EOF.
Replies are ``("ok", result)``, ``("refused", call, message, kind)`` (a refusal that leaves the env
usable, as it would locally) or ``("error", call, "<Type>: <message>", traceback text)``.

The env's outputs pass the same checks as a local export's (:class:`bridge.guard.Guarded` and
:func:`bridge.checks.step_output`: a
Python-float finite reward, Python-bool flags, a dict info, an observation of exactly its space, a
``reset(seed=...)`` that seeds the env); nothing is coerced with ``float()`` / ``bool()``.

Two duties run beside the requests (``--lifeline FD``, given by the client): the host ends itself,
with everything the env forked into its process group, once its client is gone (the lifeline
pipe's write end closes with the client, even while the env spins in ``step()``), and it keeps
its stderr file at most :data:`STDERR_CAP` bytes (the tail survives).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
import traceback
from typing import Any, List, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.checks import copy_observation, step_output, value_check
from bridge.errors import BridgeError
from bridge.guard import RUNNING, Guarded, env_id
from bridge.hosted import protocol, wire
from bridge.vector.shared import put_row  # one writer of a value's rows into its views
from bridge.workers import describe

REFUSABLE = ("clone_state", "restore_state")  # calls whose BridgeError leaves the env unchanged
STDERR_CAP = 1 << 20  # bytes of stderr on disk at most; past it, the file is cut to its tail
STDERR_KEEP = 64 << 10  # bytes of the tail kept when it is cut
_WATCH_EVERY = 0.25  # seconds between two looks at the stderr file's size


def build(payload: Any) -> Tuple[List[Any], dict]:
    """The ``count`` envs the payload names (one by default), all of the first one's spaces."""
    from bridge.episodes import episode_bound
    from bridge.loading import import_modules, importable_cwd, resolve  # the host's own imports

    importable_cwd()
    import_modules(payload.get("imports") or [])
    envs: List[Any] = []
    try:
        for _ in range(int(payload.get("count") or 1)):
            env, _ = resolve(
                payload["source"],
                payload.get("kwargs") or None,
                subject="remote env",
                wrappers=payload.get("wrappers") or (),
                import_options=payload.get("import_options") or None,
            )
            envs.append(env)
            if (envs[-1].observation_space, envs[-1].action_space) != (envs[0].observation_space, envs[0].action_space):
                raise ValueError(f"env {len(envs) - 1} has other spaces than env 0 ({envs[-1]!r}, {envs[0]!r})")
    except BaseException:
        for env in envs:
            env.close()
        raise
    env = envs[0]
    description = {
        "observation_space": env.observation_space.to_dict(),
        "action_space": env.action_space.to_dict(),
        "metadata": dict(env.metadata),
        "render_mode": env.render_mode,
        "determinism": env.determinism,
        "name": repr(env),
        "max_episode_steps": episode_bound(env),
    }
    return envs, description


class HostGuard(Guarded):
    """One hosted env behind the exports' lifecycle and output checks (the same messages)."""

    label = "remote env"

    def __init__(self, env: Any) -> None:
        self.env = env
        self.check = value_check(env.observation_space, False)
        self._start_lifecycle()

    def _guarded(self) -> Any:
        return self.env

    def reset(self, seed: Optional[int], options: Optional[dict]) -> Tuple[Any, Any]:
        return self._guarded_reset(self.env.reset, seed, options, self.check)

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        if self._lifecycle is not RUNNING:
            self._misuse()
        try:
            out = self.env.step(action)
        except BridgeError:
            self._end(f"an exception at step {self._steps + 1}")
            raise
        except Exception as e:
            raise self._user_exception(e) from e
        try:
            step_output(out, env_id(self.env))
        except BridgeError:
            self._end(f"a refused step() output at step {self._steps + 1}")
            raise
        if self.check(out[0], "") is not None:
            self._refuse_observation(self.check, out[0], "step observation")
        self._steps += 1
        if out[2] or out[3]:
            self._end_step(out[2])
            out = (copy_observation(out[0]),) + out[1:]  # it outlives the reset that follows
        return out


class Hosted:
    """The built envs, each behind the guard that checks its outputs as a local export does, and
    (once attached) the shared-memory region their steps go through."""

    def __init__(self, envs: List[Any], region_fd: Optional[int]) -> None:
        self.envs, self.region_fd = envs, region_fd
        self.guards = [HostGuard(env) for env in envs]
        self.region: Optional[wire.Region] = None
        self.spinner = wire.Spinner()
        space = envs[0].action_space
        self.discrete = isinstance(space, spaces.Discrete)  # its action is handed over as a Python int

    def answer(self, command: str, payload: Any) -> Any:
        env, guard = self.envs[0], self.guards[0]
        if command == "step":
            return guard.step(payload)
        if command == "reset":
            return guard.reset(payload["seed"], payload["options"])
        if command == "reset_rows":  # a batch: [[row, seed], ...] and options, for a hosted vector
            return [self.guards[i].reset(seed, payload["options"]) for i, seed in payload["rows"]]
        if command == "clone_state":
            return env.clone_state(include_rng=payload)
        if command == "restore_state":
            env.restore_state(payload)
            guard._restart()  # a restored snapshot is a running episode, as in an export
            return None
        if command == "render":
            return env.render()
        if command == "attach":
            return self.attach()
        raise ValueError(f"unknown command {command!r}")

    def attach(self) -> dict:
        """Map the client's region with the layout derived here; say the layout and the doorbell."""
        env = self.envs[0]
        layout = wire.Layout(env.observation_space, env.action_space, len(self.envs))
        if self.region_fd is None or not wire.supported(env.observation_space) or not wire.supported(env.action_space):
            raise ValueError("no shared-memory region here for these spaces")
        size = os.fstat(self.region_fd).st_size
        if size != layout.size:
            raise ValueError(f"the region holds {size:,} bytes, the spaces lay out {layout.size:,}")
        self.region = wire.Region(self.region_fd, layout)
        return {"layout": layout.describe(), "doorbell": wire.DOORBELL, "spin": wire.SPIN}

    def step_rows(self) -> Tuple[Optional[tuple], list]:
        """Step the active rows from the region: ``(None, [[row, info], ...])`` for the infos that
        are not empty, or the reply frame of a refusal or an exception (the reply word unchanged)."""
        region = self.region
        assert region is not None
        infos = []
        region.has_info[:] = 0  # rows that do not step say so too
        for i in np.flatnonzero(region.active).tolist():
            action = _row(region.actions, i)
            try:
                obs, reward, terminated, truncated, info = self.guards[i].step(int(action) if self.discrete else action)
            except Exception as e:  # noqa: BLE001 - reported to the driver, named there
                return _reply("step", e, i), []
            put_row(region.observations, i, obs)
            region.rewards[i], region.terminated[i], region.truncated[i] = reward, terminated, truncated
            region.has_info[i] = 1 if info else 0
            if info:
                infos.append([i, info])
        return None, infos


def _row(tree: Any, i: int) -> Any:
    if isinstance(tree, dict):
        return {key: _row(view, i) for key, view in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_row(view, i) for view in tree)
    return tree[i].copy()


def _reply(command: str, e: Exception, row: Optional[int] = None) -> tuple:
    """The reply to a call that raised: a refusal (a BridgeError: the env unchanged, or its episode
    ended, as locally) or an error (the env raised; a step/reset's exception comes wrapped by the
    guard, and is reported as the env's own, with its traceback). ``row``: the env of a batch."""
    wrapped = command in ("step", "reset") and isinstance(e, BridgeError) and e.__cause__ is not None
    if isinstance(e, BridgeError) and command != "build" and (command in REFUSABLE or not wrapped):
        return ("refused", command, str(e), type(e).__name__) + (() if row is None else (row,))
    shown: BaseException = e.__cause__ if wrapped else e  # type: ignore[assignment]
    text = "".join(traceback.format_exception(type(shown), shown, shown.__traceback__))
    sys.stderr.write(text)
    said = f"{type(e).__name__}: {e}" if isinstance(e, BridgeError) and not wrapped else describe(e)
    return ("error", command, said, text) + (() if row is None else (row,))


_STEP = ("step-shared", None)  # what next_request returns for a step through the region


def next_request(reader: protocol.FrameReader, hosted: Optional[Hosted], last: int) -> Any:
    """The next request: a frame, or a step the client announced in the region (spin on its word
    for :data:`wire.SPIN`, then sleep on the input pipe, where the client rings an empty frame)."""
    region = hosted.region if hosted is not None else None
    if region is None:
        return protocol.decode(reader.read())
    control = region.control
    end = time.perf_counter() + hosted.spinner.budget()  # type: ignore[union-attr]
    while time.perf_counter() < end:
        if control[wire.REQUEST] != last:
            return _STEP
        wire.pause()
    hosted.spinner.failed()  # type: ignore[union-attr]
    control[wire.HOST_ASLEEP] = 1
    try:
        while control[wire.REQUEST] == last:
            if reader.ready() or select.select([reader.fd], [], [], wire.RECHECK)[0]:
                body = reader.read()
                if body:
                    return protocol.decode(body)
    finally:
        control[wire.HOST_ASLEEP] = 0
    return _STEP


def serve(in_fd: int, out_fd: int, region_fd: Optional[int] = None) -> None:
    reader = protocol.FrameReader(in_fd)
    protocol.write_frame(out_fd, protocol.encode(("hello", protocol.hello())))
    hosted: Optional[Hosted] = None
    last = 0  # the client's last request word this host answered
    try:
        while True:
            try:
                command, payload = next_request(reader, hosted, last)
            except EOFError:
                return  # the driver went away
            if command == "close":
                return
            if command == "step-shared":
                last = hosted.region.control[wire.REQUEST]  # type: ignore[union-attr]
                failed, infos = hosted.step_rows()  # type: ignore[union-attr]
                if failed is not None:
                    protocol.write_frame(out_fd, protocol.encode(failed))
                    continue
                cap_stderr(2)  # one fstat: what the step printed is capped before the client reads on
                control = hosted.region.control  # type: ignore[union-attr]
                control[wire.REPLY] = last
                if infos:  # after the reply word: it also wakes a client asleep on the pipe
                    protocol.write_frame(out_fd, protocol.encode(("info", infos)))
                elif control[wire.CLIENT_ASLEEP]:
                    protocol.write_frame(out_fd, DOORBELL)
                continue
            try:
                if command == "build":
                    envs, result = build(payload)
                    hosted = Hosted(envs, region_fd)
                else:
                    result = hosted.answer(command, payload)  # type: ignore[union-attr]
                reply: Any = ("ok", result)
            except Exception as e:  # noqa: BLE001 - reported to the driver, named there
                reply = _reply(command, e)
            try:
                frame = protocol.encode(reply)
            except Exception as e:  # noqa: BLE001 - a result the wire cannot carry (not plain data)
                frame = protocol.encode(("error", "send", describe(e), traceback.format_exc()))
            cap_stderr(2)  # what the call printed is capped before the client reads on (the watchdog caps meanwhile)
            protocol.write_frame(out_fd, frame)
    finally:
        if hosted is not None:
            for env in hosted.envs:
                env.close()


DOORBELL = protocol.doorbell()


def watch(lifeline: Optional[int]) -> None:
    """The watchdog thread: end the host's group when the lifeline closes; cap the stderr file."""
    while True:
        ready = select.select([lifeline], [], [], _WATCH_EVERY)[0] if lifeline is not None else []
        if ready and not os.read(lifeline, 1):  # type: ignore[arg-type]
            _end_group()
        cap_stderr(2)
        if lifeline is None:
            threading.Event().wait(_WATCH_EVERY)


def cap_stderr(fd: int, cap: int = STDERR_CAP, keep: int = STDERR_KEEP) -> None:
    """Cut the (append-only) file at ``fd`` to its last ``keep`` bytes once it is past ``cap``."""
    try:
        size = os.fstat(fd).st_size
        if size <= cap:
            return
        tail = os.pread(fd, keep, size - keep)
        os.ftruncate(fd, 0)
        os.write(fd, f"[envbridge host: {size - keep:,} earlier bytes of stderr dropped]\n".encode() + tail)
    except OSError:  # not a regular file (a terminal, a pipe): nothing grows on disk
        pass


def _end_group() -> None:
    """The client is gone: stop this host and what the env forked (its process group, if it leads one)."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def _fd_option(argv: List[str], name: str) -> Optional[int]:
    return int(argv[argv.index(name) + 1]) if name in argv[:-1] else None


def main(argv: Optional[list] = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    lifeline = _fd_option(argv, "--lifeline")
    region_fd = _fd_option(argv, "--region")
    out_fd = os.dup(1)
    os.dup2(2, 1)  # print() in the env lands on stderr, never between frames
    try:
        import fcntl

        fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_APPEND)  # cut safely by cap_stderr
    except (ImportError, OSError):
        pass
    threading.Thread(target=watch, args=(lifeline,), name="envbridge-host-watch", daemon=True).start()
    try:
        serve(0, out_fd, region_fd)
    except KeyboardInterrupt:  # said on stderr and by the exit status (the client names the signal)
        sys.stderr.write("envbridge host: interrupted (KeyboardInterrupt)\n")
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)


if __name__ == "__main__":
    main()

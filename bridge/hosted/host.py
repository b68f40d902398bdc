"""The host side of a remote env: ``python -m bridge.hosted.host``, run by :func:`bridge.remote`.

It speaks the frames of :mod:`bridge.hosted.protocol` on its stdin and a private copy of its stdout;
file descriptor 1 is pointed at stderr first, so whatever the env prints cannot corrupt a frame.
It sends a hello naming its versions, then builds the env with the one resolver
(:func:`bridge.loading.resolve`) and answers ``(command, payload)`` requests until "close" or EOF.
Replies are ``("ok", result)``, ``("refused", call, message, kind)`` (a refusal that leaves the env
usable, as it would locally) or ``("error", call, "<Type>: <message>", traceback text)``.

The env's outputs pass the same checks as a local export's (:class:`bridge.guard.Guard`: a
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
import traceback
from typing import Any, Optional, Tuple

from bridge.errors import BridgeError
from bridge.guard import Guard
from bridge.hosted import protocol
from bridge.workers import describe

REFUSABLE = ("clone_state", "restore_state")  # calls whose BridgeError leaves the env unchanged
STDERR_CAP = 1 << 20  # bytes of stderr on disk at most; past it, the file is cut to its tail
STDERR_KEEP = 64 << 10  # bytes of the tail kept when it is cut
_WATCH_EVERY = 0.25  # seconds between two looks at the stderr file's size


def build(payload: Any) -> Tuple[Any, dict]:
    from bridge.loading import import_modules, importable_cwd, resolve  # the host's own imports

    importable_cwd()
    import_modules(payload.get("imports") or [])
    env, _ = resolve(payload["source"], payload.get("kwargs") or None, subject="remote env")
    description = {
        "observation_space": env.observation_space.to_dict(),
        "action_space": env.action_space.to_dict(),
        "metadata": dict(env.metadata),
        "render_mode": env.render_mode,
        "determinism": env.determinism,
        "name": repr(env),
    }
    return env, description


class Hosted:
    """The built env and the guard that checks its outputs as a local export does."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.guard = Guard(env, "remote env")
        self.guard.bind(env.step)

    def answer(self, command: str, payload: Any) -> Any:
        env, guard = self.env, self.guard
        if command == "step":
            return guard.checked_step(payload)
        if command == "reset":
            return guard.reset(env.reset, payload["seed"], payload["options"])
        if command == "clone_state":
            return env.clone_state(include_rng=payload)
        if command == "restore_state":
            env.restore_state(payload)
            guard.restart()  # a restored snapshot is a running episode, as in an export
            return None
        if command == "render":
            return env.render()
        raise ValueError(f"unknown command {command!r}")


def _reply(command: str, e: Exception) -> tuple:
    """The reply to a call that raised: a refusal (a BridgeError: the env unchanged, or its episode
    ended, as locally) or an error (the env raised; a step/reset's exception comes wrapped by the
    guard, and is reported as the env's own, with its traceback)."""
    wrapped = command in ("step", "reset") and isinstance(e, BridgeError) and e.__cause__ is not None
    if isinstance(e, BridgeError) and command != "build" and (command in REFUSABLE or not wrapped):
        return ("refused", command, str(e), type(e).__name__)
    shown: BaseException = e.__cause__ if wrapped else e  # type: ignore[assignment]
    text = "".join(traceback.format_exception(type(shown), shown, shown.__traceback__))
    sys.stderr.write(text)
    said = f"{type(e).__name__}: {e}" if isinstance(e, BridgeError) and not wrapped else describe(e)
    return ("error", command, said, text)


def serve(in_fd: int, out_fd: int) -> None:
    reader = protocol.FrameReader(in_fd)
    protocol.write_frame(out_fd, protocol.encode(("hello", protocol.hello())))
    hosted: Optional[Hosted] = None
    try:
        while True:
            try:
                command, payload = protocol.decode(reader.read())
            except EOFError:
                return  # the driver went away
            if command == "close":
                return
            try:
                if command == "build":
                    env, result = build(payload)
                    hosted = Hosted(env)
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
            hosted.env.close()


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


def main(argv: Optional[list] = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    lifeline = int(argv[1]) if argv[:1] == ["--lifeline"] and len(argv) > 1 else None
    out_fd = os.dup(1)
    os.dup2(2, 1)  # print() in the env lands on stderr, never between frames
    try:
        import fcntl

        fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_APPEND)  # cut safely by cap_stderr
    except (ImportError, OSError):
        pass
    threading.Thread(target=watch, args=(lifeline,), name="envbridge-host-watch", daemon=True).start()
    try:
        serve(0, out_fd)
    except KeyboardInterrupt:  # said on stderr and by the exit status (the client names the signal)
        sys.stderr.write("envbridge host: interrupted (KeyboardInterrupt)\n")
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)


if __name__ == "__main__":
    main()

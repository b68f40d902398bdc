"""The host side of a remote env: ``python -m bridge.hosted.host``, run by :func:`bridge.remote`.

It speaks the frames of :mod:`bridge.hosted.protocol` on its stdin and a private copy of its stdout;
file descriptor 1 is pointed at stderr first, so whatever the env prints cannot corrupt a frame.
It sends a hello naming its versions, then builds the env with the one resolver
(:func:`bridge.loading.resolve`) and answers ``(command, payload)`` requests until "close" or EOF.
Replies are ``("ok", result)`` or ``("error", call, "<Type>: <message>", traceback text)``.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Tuple

from bridge.errors import BridgeError
from bridge.hosted import protocol
from bridge.workers import describe

REFUSABLE = ("clone_state", "restore_state")  # calls whose BridgeError leaves the env unchanged


def build(payload: Any) -> Tuple[Any, dict]:
    from bridge.episodes import episode_bound
    from bridge.loading import import_modules, importable_cwd, resolve  # the host's own imports

    importable_cwd()
    import_modules(payload.get("imports") or [])
    env, _ = resolve(
        payload["source"],
        payload.get("kwargs") or None,
        subject="remote env",
        wrappers=payload.get("wrappers") or (),
        import_options=payload.get("import_options") or None,
    )
    description = {
        "observation_space": env.observation_space.to_dict(),
        "action_space": env.action_space.to_dict(),
        "metadata": dict(env.metadata),
        "render_mode": env.render_mode,
        "determinism": env.determinism,
        "name": repr(env),
        "max_episode_steps": episode_bound(env),
    }
    return env, description


def answer(env: Any, command: str, payload: Any) -> Any:
    if command == "step":
        obs, reward, terminated, truncated, info = env.step(payload)
        return (obs, float(reward), bool(terminated), bool(truncated), info)
    if command == "reset":
        return env.reset(seed=payload["seed"], options=payload["options"])
    if command == "clone_state":
        return env.clone_state(include_rng=payload)
    if command == "restore_state":
        return env.restore_state(payload)
    if command == "render":
        return env.render()
    raise ValueError(f"unknown command {command!r}")


def serve(in_fd: int, out_fd: int) -> None:
    reader = protocol.FrameReader(in_fd)
    protocol.write_frame(out_fd, protocol.encode(("hello", protocol.hello())))
    env = None
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
                else:
                    result = answer(env, command, payload)
            except Exception as e:  # noqa: BLE001 - reported to the driver, named there
                if isinstance(e, BridgeError) and command in REFUSABLE:  # the env is as it was: still usable
                    reply: Any = ("refused", command, str(e), type(e).__name__)
                else:
                    text = traceback.format_exc()
                    sys.stderr.write(text)
                    said = f"{type(e).__name__}: {e}" if isinstance(e, BridgeError) else describe(e)
                    reply = ("error", command, said, text)
            else:
                reply = ("ok", result)
            try:
                frame = protocol.encode(reply)
            except Exception as e:  # noqa: BLE001 - a result the wire cannot carry (not plain data)
                frame = protocol.encode(("error", "send", describe(e), traceback.format_exc()))
            protocol.write_frame(out_fd, frame)
    finally:
        if env is not None:
            env.close()


def main() -> None:
    out_fd = os.dup(1)
    os.dup2(2, 1)  # print() in the env lands on stderr, never between frames
    try:
        serve(0, out_fd)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

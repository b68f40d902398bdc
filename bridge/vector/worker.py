"""The worker loop of ``bridge.vectorize(workers="process")``: one env per process, served until close.

The parent side is :class:`bridge.workers.Pool` (the one supervisor); :func:`serve` is the child's.
"""

from __future__ import annotations

import os
import pickle
import traceback
from typing import Any, Callable, Optional

from bridge.workers import apply, describe

__all__ = ["serve"]


def serve(
    conn: Any,
    env_fn: Callable[[], Any],
    describe_env: Callable[[Any], Any],
    attach: Optional[Callable[[Any], Any]] = None,
) -> None:
    """Build one env and serve ``(command, payload)`` requests until told to close.

    Replies are ``("ok", result)`` or ``("error", kind, "<Type>: <message>")`` with kind "raised"
    (the env raised: reported, not raised, so the parent can name the env and the step) or
    "unpicklable" (the result could not be pickled). ``command`` is "reset" ``(seed, options)``,
    "step" ``action``, "apply" ``(op, name, payload)`` (:func:`bridge.workers.apply`) or "close"; with ``attach``,
    also "attach" ``payload`` (``attach(payload)`` maps shared memory: an object with ``action()``,
    this worker's action, and ``put(obs) -> bool``) and "step-shared" (the action is ``action()``).
    Once attached, an observation that ``put`` accepts is written there and the reply is
    ``("shared", result)`` with None in its place.
    """
    try:  # a group of its own: the pool's stop kills what the env forks too (see stop_processes)
        os.setpgid(0, 0)
    except (OSError, AttributeError):
        pass
    try:
        env = env_fn()
        conn.send(("ok", describe_env(env)))
    except Exception as e:  # noqa: BLE001 - reported to the parent
        _send_error(conn, "raised", describe(e))
        return
    shared: Any = None
    try:
        while True:
            command, payload = conn.recv()
            if command == "close":
                break
            if command == "attach":
                shared = _attach(conn, attach, payload)
                continue
            try:
                if command == "step" or command == "step-shared":
                    action = payload if command == "step" else shared.action()
                    result: Any = env.step(action)
                elif command == "apply":
                    result = apply(env, *payload)
                else:  # "reset"
                    seed, options = payload
                    result = env.reset(seed=seed, options=options)
            except Exception as e:  # noqa: BLE001 - reported to the parent
                traceback.print_exc()
                _send_error(conn, "raised", describe(e))
                continue
            tag = "ok"
            if shared is not None and type(result) is tuple and result and shared.put(result[0]):
                tag, result = "shared", (None,) + result[1:]
            try:
                reply = pickle.dumps((tag, result), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as e:  # noqa: BLE001 - an info the parent could never read
                _send_error(conn, "unpicklable", describe(e))
                continue
            conn.send_bytes(reply)
    except (EOFError, KeyboardInterrupt):  # the parent went away
        pass
    finally:
        env.close()
        conn.close()


def _attach(conn: Any, attach: Optional[Callable[[Any], Any]], payload: Any) -> Any:
    try:
        shared = attach(payload)  # type: ignore[misc]
    except Exception as e:  # noqa: BLE001 - reported to the parent
        _send_error(conn, "raised", describe(e))
        return None
    conn.send(("ok", None))
    return shared


def _send_error(conn: Any, kind: str, text: str) -> None:
    conn.send(("error", kind, text))

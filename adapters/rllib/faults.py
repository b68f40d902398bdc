"""Env faults inside RLlib's env runners, readable on the driver through Ray's wrapping.

When an env step raises inside a remote env runner, RLlib 2.60 logs the error and ends the actor
(``sys.exit(1)``): the driver sees a ``ray.exceptions.ActorDiedError`` without the cause. So the
export records envbridge's message (env id, step, cause) in Ray's cluster key-value store before
it re-raises; :func:`train_iteration` on the driver raises it (``from`` Ray's error), or, when RLlib's fault
tolerance keeps training (``restart_failed_env_runners=True``), reports each recorded fault once.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any, Dict, List

from bridge.errors import ContractError

__all__ = ["record", "collect", "train_iteration", "EnvRunnerFault", "NAMESPACE"]

NAMESPACE = "envbridge"
_PREFIX = "fault:"


class EnvRunnerFault(RuntimeWarning):
    """An env runner's env failed and RLlib restarted the runner (reported once per fault)."""


def _kv() -> Any:
    import ray
    from ray.experimental import internal_kv

    return internal_kv if ray.is_initialized() and internal_kv._internal_kv_initialized() else None


def record(e: BaseException) -> None:
    """Keep ``e``'s message for the driver (nothing happens outside a Ray cluster)."""
    kv = _kv()
    if kv is None:
        return
    key = f"{_PREFIX}{time.time_ns():020d}:{os.getpid()}"
    kv._internal_kv_put(key, f"{type(e).__name__}: {e}", namespace=NAMESPACE)


def collect() -> List[str]:
    """The faults recorded since the last call, oldest first ("Kind: message"), then forgotten."""
    kv = _kv()
    if kv is None:
        return []
    keys = sorted(kv._internal_kv_list(_PREFIX, namespace=NAMESPACE))
    found = []
    for key in keys:
        value = kv._internal_kv_get(key, namespace=NAMESPACE)
        kv._internal_kv_del(key, namespace=NAMESPACE)
        if value is not None:
            found.append(value.decode() if isinstance(value, bytes) else str(value))
    return found


def train_iteration(algo: Any) -> Dict[str, Any]:
    """``algo.train()``, with env faults inside env runners made readable.

    Returns RLlib's result, plus ``result["envbridge_faults"]``: the faults of this iteration
    (each also warned once as :class:`EnvRunnerFault`) when RLlib's fault tolerance went on.

    Raises:
        ContractError: an env raised and RLlib stopped; the message is the env's envbridge message
            (env id, step, cause), ``from`` Ray's error.
    """
    from ray.exceptions import RayError

    try:
        result = algo.train()
    except RayError as e:
        found = collect()
        if not found:
            raise
        kind, _, text = found[0].partition(": ")
        raise ContractError(text) from e
    found = collect()
    for fault in found:
        warnings.warn(EnvRunnerFault(f"an env runner restarted after: {fault}"), stacklevel=2)
    result["envbridge_faults"] = found
    return result

"""The Ray session the rllib view, profile and trainer use: the caller's, or a local one started here.

A local instance started here gets the driver's import path as its workers' ``PYTHONPATH``, so an
env class the driver can import can be built by every env runner. Quiet unless ``verbose``: no
usage-stats notice, Ray's Python loggers at ERROR, its C++ backend at FATAL, and an auth token held
in this process's environment (Ray then writes no ``~/.ray/auth_token``).
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
from typing import Any, Optional

__all__ = ["ensure_ray"]


def ensure_ray(num_cpus: Optional[int] = None, address: Optional[str] = None, verbose: bool = False) -> Any:
    """The ``ray`` module, initialized: an existing session is kept; else ``ray.init(address)``
    (None: a new local instance, never a cluster ``ray start`` left running on this machine)."""
    if not verbose:  # read by Ray when it starts: set before the import
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    import ray

    if ray.is_initialized():
        return ray
    path = os.pathsep.join(p for p in sys.path if p)
    kwargs: dict = {"include_dashboard": False, "log_to_driver": verbose}
    if not verbose:
        kwargs["logging_level"] = logging.ERROR
    if address is None:
        if "RAY_AUTH_TOKEN" not in os.environ:  # our own local instance: its token lives in memory only
            os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
        kwargs.update(address="local", num_cpus=num_cpus)
    else:
        kwargs.update(address=address)
    ray.init(runtime_env={"env_vars": {"PYTHONPATH": path}}, **kwargs)
    return ray

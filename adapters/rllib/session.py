"""The Ray session the rllib view, profile and trainer use: the caller's, or a local one started here.

A local instance started here gets the driver's import path as its workers' ``PYTHONPATH``, so an
env class the driver can import can be built by every env runner.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

__all__ = ["ensure_ray"]


def ensure_ray(num_cpus: Optional[int] = None, address: Optional[str] = None) -> Any:
    """The ``ray`` module, initialized: an existing session is kept; else ``ray.init(address)``
    (None: a new local instance, never a cluster ``ray start`` left running on this machine)."""
    import ray

    if ray.is_initialized():
        return ray
    path = os.pathsep.join(p for p in sys.path if p)
    kwargs: dict = {"include_dashboard": False, "log_to_driver": False}
    if address is None:
        kwargs.update(address="local", num_cpus=num_cpus)
    else:
        kwargs.update(address=address)
    ray.init(runtime_env={"env_vars": {"PYTHONPATH": path}}, **kwargs)
    return ray

"""How long an episode can run, where the env says so: :func:`episode_bound`."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from bridge.env import Env, Wrapper

__all__ = ["episode_bound"]


def episode_bound(env: Env) -> Optional[int]:
    """The most steps an episode of ``env`` can run, where a layer says so, else None: the smallest
    ``max_episode_steps`` of its wrapper stack (a :class:`TimeLimit`'s; an imported env's own time
    limit, which ``from_gymnasium``/``from_gym``/``from_dm_env`` and ``bridge.remote`` set)."""
    bounds = []
    layer: Any = env
    while layer is not None:
        bound = layer.__dict__.get("max_episode_steps") if hasattr(layer, "__dict__") else None
        if isinstance(bound, (int, np.integer)) and not isinstance(bound, bool) and bound >= 1:
            bounds.append(int(bound))
        layer = layer.env if isinstance(layer, Wrapper) else None
    return min(bounds) if bounds else None

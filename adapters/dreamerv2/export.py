"""The Dreamer-ready legacy gym env and the ``to_dreamerv2`` chain of DreamerV2's own wrappers."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, List, Sequence

from bridge.adapters.dreamerv2.actions import ChainActions
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.lowering import lower
from bridge.adapters.dreamerv2.quiet import built_quietly
from bridge.adapters.gym.export import GymEnv

from bridge.env import Env
from bridge.errors import SpecError, error
from bridge.options import OPTIONS, declared

__all__ = [
    "DreamerReadyEnv",
    "to_dreamer_ready",
    "to_dreamerv2",
    "build_chain",
    "wrap_chain",
    "PARALLEL",
]

PARALLEL = (None, "thread", "process")


class DreamerReadyEnv(GymEnv):
    """A neutral env lowered for DreamerV2, behind the gym 0.23 API that ``common.GymWrapper`` wraps.

    It is the gym 0.23 export (:class:`~bridge.adapters.gym.export.GymEnv`, on the Export base)
    with DreamerV2's lowerings: observations are a dict (:mod:`.lowering`), actions an index or a
    float array (:mod:`.actions`). ``step`` returns ``(obs, reward, done, info)`` with ``done =
    terminated or truncated`` and, on every step, ``info["is_terminal"] = terminated`` (GymWrapper
    otherwise treats every time-out as terminal). ``seed(s)`` applies at the next ``reset()``
    (GymWrapper resets without arguments). A copy or a pickle (``common.Async`` pickles act_space,
    which holds a bound method of the whole chain) rebuilds the lowerings, as every export does.
    """

    runtime = "dreamerv2"
    export_name = "to_dreamerv2"
    label = "DreamerV2 env"
    warn_after_end = False
    lower = staticmethod(lower)

    def present(self) -> None:
        super().present()
        modes = self.metadata["render_modes"]
        self.metadata = {
            "render_modes": modes,
            "render.modes": modes,
            "render_fps": self.neutral.metadata.get("render_fps"),
        }
        if self.options.get("seed") is not None:
            self.seed(self.options["seed"])

    @property
    def image_keys(self) -> List[str]:
        return list(self.observation_lowering.image_keys)

    @property
    def vector_keys(self) -> List[str]:
        return list(self.observation_lowering.vector_keys)

    def encode_action(self, action: Any) -> Any:
        """A neutral action -> this env's action (index or array): what the agent's one-hot / [-1, 1] maps to."""
        return self.action_lowering.encode(action)

    def render(self, mode: str = "rgb_array") -> Any:
        return self.neutral.render()


def to_dreamer_ready(env: Any, **options: Any) -> DreamerReadyEnv:
    """Lower ``env`` (anything the env resolver takes) to the legacy gym env DreamerV2 wraps.

    Options are the dreamerv2 row's (docs/options.md); ``strict=True`` also checks every
    observation against its space (not free); ``float64_as_float32=False`` refuses float64
    observations instead of presenting them as float32. Wrap the result with :func:`wrap_chain`.
    """
    return DreamerReadyEnv.build(env, options)


def build_chain(env: Any, **options: Any) -> Any:
    """DreamerV2's own wrapper chain, in ``api.train``'s order, over the Dreamer-ready env.

    A module-level function, so that ``functools.partial(build_chain, ...)`` pickles by reference
    for ``common.Async`` workers.
    """
    ready = to_dreamer_ready(env, **options)
    return wrap_chain(ready, ready.options["size"], ready.options["time_limit"])


def wrap_chain(ready: DreamerReadyEnv, size: Sequence[int] = (64, 64), time_limit: int = 0) -> Any:
    """Wrap a :class:`DreamerReadyEnv` in DreamerV2's chain (``api.train``'s order), with
    :class:`~bridge.adapters.dreamerv2.actions.ChainActions` outside: the action checked first."""
    common = load_dreamerv2().common
    chain = common.GymWrapper(ready)
    chain = built_quietly(common.ResizeImage, chain, tuple(size))  # it prints its keys, even none
    chain = common.OneHotAction(chain) if ready.action_lowering.discrete else common.NormalizeAction(chain)
    return ChainActions(common.TimeLimit(chain, time_limit), ready.action_lowering)


def to_dreamerv2(env: Any, **options: Any) -> Any:
    """Export ``env`` as the chain ``dreamerv2.api.train`` builds, from DreamerV2's own classes.

    ``GymWrapper -> ResizeImage -> OneHotAction | NormalizeAction -> TimeLimit -> ChainActions`` over a
    :class:`DreamerReadyEnv`. With ``parallel="thread"`` or ``"process"`` the whole chain is built
    inside a worker and ``common.Async`` wraps it (for "process", ``env`` must pickle with
    cloudpickle: pass an id or a factory to build it in the worker; the wrapper is
    :class:`~bridge.adapters.dreamerv2.workers.WatchedAsync`, whose worker faults raise at once).

    Args:
        env: a bridge.Env, or anything the env resolver takes (an id, a factory, ``module:attr``).
        options: the dreamerv2 row's options (docs/options.md): ``size`` (64, 64): the image size
            DreamerV2's ResizeImage produces; ``time_limit`` (0: none): DreamerV2's TimeLimit
            duration; ``max_episode_steps`` (None): the neutral TimeLimit; ``parallel`` (None,
            "thread" or "process"); ``action_bounds``: finite ``(low, high)`` for a Box action with
            infinite bounds; ``check_actions`` (True); ``strict`` (False); ``seed``: the seed of the
            first reset; ``float64_as_float32`` (True: DreamerV2 computes in float32; announced by
            the "dreamerv2" check; False refuses float64 observations); ``timeout`` (60 s: how long
            a "process" worker may take to answer one call; None: no limit).

    Raises:
        ConversionError: the env cannot be lowered losslessly; nothing is wrapped.
        SpecError: an option the export does not honour, or a value out of its range.
    """
    checked = declared("dreamerv2", "to_dreamerv2", options)[0]
    if checked["parallel"] != "process" and checked["timeout"] not in (None, OPTIONS["timeout"].default):
        # only a process worker is watched: a bound elsewhere would be accepted and ignored (the
        # default and None, no limit, say what happens there anyway)
        fix = "Pass parallel='process' to bound each call, or drop timeout"
        got = f"timeout={options['timeout']!r} with parallel={checked['parallel']!r}"
        raise error(SpecError, "to_dreamerv2 timeout", "go with parallel='process' (the only watched worker)", got, fix)
    if checked["parallel"] is None:
        return build_chain(env, **options)
    common = load_dreamerv2().common
    if isinstance(env, Env):  # lower once here: a ConversionError surfaces in the caller, not in the worker
        lower(env.observation_space, path="observation", options=checked)
        lower(env.action_space, path="action", options=checked)
    ctor = functools.partial(build_chain, env, **options)
    if checked["parallel"] == "thread":
        return common.Async(ctor, "thread")
    # a spawned worker unpickles DreamerV2's classes by their top-level names ("common.envs"):
    # it needs DreamerV2's folders on the sys.path it inherits at start, not ours afterwards
    saved, here = list(sys.path), os.path.dirname(load_dreamerv2().__file__)
    sys.path.extend([here, os.path.dirname(here)])
    from bridge.adapters.dreamerv2.workers import WatchedAsync, env_label

    try:  # DreamerV2's Async, but a dead or raising worker is an error naming the env and step
        return WatchedAsync(ctor, label=env_label(env), timeout=checked["timeout"])
    finally:
        sys.path[:] = saved

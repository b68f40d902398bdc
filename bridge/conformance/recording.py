"""Recording a tape: run an env from a seed with sampled (or given) actions and keep its stream,
its snapshots where asked, and where it ran (:mod:`bridge.conformance.machine`)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from bridge import arguments
from bridge.conformance import machine
from bridge.conformance.tape import Entry, Tape
from bridge.env import Env

__all__ = ["record", "CHECKPOINT"]


def record(
    env: Union[str, Env, Callable[[], Env]],
    *,
    seed: int = 0,
    steps: int = 200,
    action_seed: Optional[int] = None,
    env_id: Optional[str] = None,
    states: bool = False,
    actions: Optional[List[Any]] = None,
) -> Tape:
    """Run ``steps`` actions sampled with ``action_seed`` (default: ``seed``) and keep the stream;
    or, with ``actions``, run exactly those (another tape's, to re-record it on this platform).

    ``env`` is a registered id, an Env, or a factory; episode ends are followed by ``reset()``.
    With ``states`` the tape also keeps the env's snapshots (``clone_state()``), so another era can
    replay it from the recorded state: after every entry for determinism "strong", after each reset
    and every :data:`CHECKPOINT` steps for "weak", none for "none" (it has no snapshots), nor for an
    env whose snapshots restore only in the process that took them (``portable_snapshots`` False:
    an imported env without snapshot hooks); another process then compares a free run.
    """
    seed = arguments.seed(seed, "conformance.record seed", optional=False)
    if actions is None:
        steps = arguments.count(steps, "conformance.record steps", low=1, example="steps=200")
        action_seed = arguments.seed(action_seed, "conformance.record action_seed", name="action_seed")
    if isinstance(env, str):
        from bridge.registry import make

        env_id, env = env_id or env, make(env)
    elif not isinstance(env, Env):
        env = env()
    name = env_id or getattr(getattr(env.unwrapped, "spec", None), "id", None) or type(env.unwrapped).__name__
    if actions is None:
        rng = np.random.default_rng(seed if action_seed is None else action_seed)
        actions = [env.action_space.sample(rng) for _ in range(steps)]
    portable = getattr(env.unwrapped, "portable_snapshots", True)
    every = {"strong": 1, "weak": CHECKPOINT}.get(env.determinism, 0) if states and portable else 0
    kept: Dict[int, Any] = {}
    obs, _ = env.reset(seed=seed)
    entries = [Entry("reset", _copy(obs))]
    for i, action in enumerate(actions):
        if every and (i % every == 0 or entries[-1].kind == "reset"):
            kept[len(entries) - 1] = _copy(env.clone_state())  # get_state() may hand out live arrays
        obs, reward, terminated, truncated, _ = env.step(action)
        entries.append(Entry("step", _copy(obs), float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            if every:
                kept[len(entries) - 1] = _copy(env.clone_state())  # get_state() may hand out live arrays
            entries.append(Entry("reset", _copy(env.reset()[0])))
    platform = machine.describe(env)
    env.close()
    return Tape(
        name, env.observation_space, env.action_space, seed, list(actions), entries, states=kept, platform=platform
    )


CHECKPOINT = 25  # steps between the snapshots of a tape of a "weak" env


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        copied = [_copy(v) for v in value]
        return copied if isinstance(value, list) else tuple(copied)
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value

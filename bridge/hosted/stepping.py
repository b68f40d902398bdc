"""The client's end of the fixed-layout step wire (:mod:`bridge.hosted.wire`) for ``n`` hosted envs.

:class:`SharedSteps` writes actions into the region, bumps the request word, rings the host only
while it says it is asleep, spins briefly on the reply word and then waits on the host's pipe (its
death, a hang past the timeout and a reply frame are the pool's, as on the frame path), and reads
the outputs back, checking every byte the host wrote: flags 0 or 1, rewards finite, discrete
observations in range, an info frame exactly where the host flagged one. What it returns never
aliases the region.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from bridge import checks, spaces
from bridge.hosted import protocol, wire
from bridge.workers import Complaint, Pool

__all__ = ["SharedSteps"]

_FIX = "Point python= at an interpreter with this envbridge installed (its host lays out the region as this side)"
DOORBELL = protocol.doorbell()


def _copy(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {key: _copy(view) for key, view in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_copy(view) for view in tree)
    return tree.copy()


def _fits(tree: Any, value: Any, batch: bool) -> bool:
    """True when ``value`` has exactly the tree's structure, dtypes and shapes (a row, or the batch)."""
    if isinstance(tree, dict):
        return (
            type(value) is dict
            and value.keys() == tree.keys()
            and all(_fits(v, value[k], batch) for k, v in tree.items())
        )
    if isinstance(tree, tuple):
        return type(value) is tuple and len(value) == len(tree) and all(_fits(t, v, batch) for t, v in zip(tree, value))
    shape = tree.shape if batch else tree.shape[1:]
    return type(value) is np.ndarray and value.dtype == tree.dtype and value.shape == shape


def _put(tree: Any, value: Any, row: Optional[int]) -> None:
    if isinstance(tree, dict):
        for key, view in tree.items():
            _put(view, value[key], row)
    elif isinstance(tree, tuple):
        for view, item in zip(tree, value):
            _put(view, item, row)
    elif row is None:
        np.copyto(tree, value)
    else:
        tree[row] = value


class SharedSteps:
    """Steps of ``layout.n`` envs through the region mapped from ``fd``.

    Args:
        pool: the host's supervisor (index 0 is the host).
        fd: the region (sized and sealed by the caller).
        layout: the layout both ends agreed on.
        answer: ``answer(reply)`` for a frame that is neither a doorbell nor infos: an error or a
            refusal of the step (it raises).
    """

    def __init__(self, pool: Pool, fd: int, layout: wire.Layout, answer: Callable[[Any], None]) -> None:
        self.pool, self.layout, self.answer = pool, layout, answer
        self.region = wire.Region(fd, layout)
        self.seq = 0
        self.spinner = wire.Spinner()
        obs_space, action_space = layout.observation_space, layout.action_space
        self.discrete_action = isinstance(action_space, spaces.Discrete)
        self.int_observation = isinstance(obs_space, spaces.Discrete)
        # Box leaves have their dtype and shape by construction; discrete kinds need their range
        self.check = None if isinstance(obs_space, spaces.Box) else checks.batch_check(obs_space, layout.n, False)

    # -- one env (RemoteEnv) --------------------------------------------------------------------
    def put_action(self, action: Any) -> bool:
        """Write env 0's action; False (nothing written) when it is not exactly of the space's
        kind, so the caller sends it in a frame as given."""
        region = self.region
        if self.discrete_action:
            if type(action) is not int and not isinstance(action, np.integer):
                return False
            if not -(2**63) <= action < 2**63:
                return False
            region.actions[0] = action
        elif _fits(region.actions, action, batch=False):
            _put(region.actions, action, 0)
        else:
            return False
        region.active[0] = 1
        return True

    def step_one(self, call: str) -> Tuple[Any, float, bool, bool, dict]:
        infos = self.exchange(call)
        region = self.region
        obs = _copy(region.observations)
        rewards, terminated, truncated = self.outputs(np.ones(1, dtype=bool), obs, infos)
        value = obs[0] if not isinstance(obs, (dict, tuple)) else _row(obs, 0)
        if self.int_observation:
            value = int(value)
        return value, float(rewards[0]), bool(terminated[0]), bool(truncated[0]), infos.get(0, {})

    # -- a batch (RemoteVectorEnv) --------------------------------------------------------------
    def put_actions(self, actions: Any, active: np.ndarray) -> bool:
        if not _fits(self.region.actions, actions, batch=True):
            return False
        _put(self.region.actions, actions, None)
        self.region.active[:] = active
        return True

    def read_batch(self, active: np.ndarray, infos: Dict[int, dict]) -> Tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """The outputs of the last batch (after :meth:`collect`), checked, copied out of the region."""
        obs = _copy(self.region.observations)
        rewards, terminated, truncated = self.outputs(active, obs, infos)
        return obs, rewards, terminated, truncated

    # -- the exchange ---------------------------------------------------------------------------
    def exchange(self, call: str) -> Dict[int, dict]:
        """Announce the written request and wait for the host's reply word; the infos it sent."""
        self.announce(call)
        return self.collect(call)

    def announce(self, call: str) -> None:
        """Bump the request word (the actions and active flags are written); ring a sleeping host."""
        control = self.region.control
        self.seq += 1
        control[wire.REQUEST] = self.seq
        if control[wire.HOST_ASLEEP]:
            self.pool.send(0, DOORBELL, call)

    def collect(self, call: str) -> Dict[int, dict]:
        """Wait for the reply word of the last request (spin, then sleep on the pipe); its infos."""
        control, seq = self.region.control, self.seq
        infos: Dict[int, dict] = {}
        end = time.perf_counter() + self.spinner.budget()
        while control[wire.REPLY] != seq:
            if time.perf_counter() > end:
                self.spinner.failed()
                self._sleep(seq, call, infos)
                break
            wire.pause()
        if self.region.has_info.any() and not infos:  # the host sends the info frame right after the word
            self._infos(call, infos)
        return infos

    def _infos(self, call: str, infos: Dict[int, dict]) -> None:
        """Wait for the info frame of flagged rows (stale rings skipped), at most the call's timeout."""
        limit = self.pool.timeout
        deadline = None if limit is None else time.monotonic() + limit
        while not infos:
            if deadline is not None and time.monotonic() > deadline:
                flagged = np.flatnonzero(self.region.has_info).tolist()
                got = f"flags of envs {flagged}, and no info frame within {limit:g} s"
                self.fault(("send an info frame for exactly the envs it flags", got, _FIX))
            reply = self.pool.wait_one(0, call, wire.RECHECK, None)
            if reply is not None:
                self._take(reply, infos)

    def _sleep(self, seq: int, call: str, infos: Dict[int, dict]) -> None:
        control = self.region.control
        control[wire.CLIENT_ASLEEP] = 1
        limit = self.pool.timeout
        deadline = None if limit is None else time.monotonic() + limit
        try:
            while control[wire.REPLY] != seq:
                reply = self.pool.wait_one(0, call, wire.RECHECK, deadline)
                if reply is not None:
                    self._take(reply, infos)
        finally:
            if not self.region.closed:  # a fault released it on the way out
                control[wire.CLIENT_ASLEEP] = 0

    def _take(self, reply: Any, infos: Dict[int, dict]) -> None:
        """A frame that came while waiting: a ring (None), the step's infos, or its error."""
        if reply is None:
            return
        if isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "info" and isinstance(reply[1], list):
            for item in reply[1]:
                ok = isinstance(item, list) and len(item) == 2 and type(item[0]) is int and isinstance(item[1], dict)
                if not ok or not 0 <= item[0] < self.layout.n:
                    self.fault(("send infos as [[env, dict], ...]", protocol.shown(reply), _FIX))
                infos[item[0]] = item[1]
            return
        self.answer(reply)

    def outputs(self, active: np.ndarray, obs: Any, infos: Dict[int, dict]) -> Tuple[np.ndarray, ...]:
        """Rewards and flags of the active rows, every byte checked (the host is a stranger)."""
        region = self.region
        rewards = region.rewards.copy()
        flags = [region.terminated.copy(), region.truncated.copy(), region.has_info.copy()]
        for name, flag in zip(("terminated", "truncated", "has-info"), flags):
            if (flag > 1).any():
                i = int(np.argmax(flag > 1))
                self.fault((f"write {name} flags of 0 or 1 in the region", f"{int(flag[i])} for env {i}", _FIX))
        if not np.isfinite(rewards[active]).all():
            i = int(np.argmax(~np.isfinite(rewards) & active))
            self.fault(("write finite rewards in the region", f"{float(rewards[i])!r} for env {i}", _FIX))
        flagged = set(np.flatnonzero(flags[2] & active).tolist())
        if flagged != set(infos):
            got = f"infos of envs {sorted(infos)}, flags of envs {sorted(flagged)}"
            self.fault(("send an info frame for exactly the envs it flags", got, _FIX))
        if self.check is not None:
            found = self.check(obs, "observation")
            if found is not None:
                self.fault(("write observations of its space in the region", f"{found[2]} at {found[0]}", _FIX))
        return rewards, flags[0].astype(bool), flags[1].astype(bool)

    def fault(self, complaint: Complaint) -> None:
        self.pool.fault(0, complaint)

    def close(self) -> None:
        self.region.close()


def _row(tree: Any, i: int) -> Any:
    if isinstance(tree, dict):
        return {key: _row(view, i) for key, view in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_row(view, i) for view in tree)
    return tree[i]

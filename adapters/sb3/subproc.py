"""SB3's own DummyVecEnv and SubprocVecEnv, with what they lack: a whole-batch action check before
any env moves, and (SubprocVecEnv) worker supervision by :mod:`bridge.workers`.

SB3 2.9 sends each action as it goes (``step_async`` of a short batch has already stepped the
first envs) and its worker does not catch exceptions (a raising env kills its worker, and the
parent sees a bare ``EOFError``, or waits forever on one that hangs). Here, still on SB3's classes
and its own ``_worker``:

* :class:`CheckedDummyVecEnv` / :class:`ReportingSubprocVecEnv` check the whole batch (length and
  every slot, in the export's own terms) in ``step_async``, before anything is stepped or sent;
* :class:`FaultReporter` (worker side, inside SB3's ``Monitor``) turns an exception in ``step`` /
  ``reset``, or an info that cannot be pickled, into a string in the info dict, so the worker
  stays alive to report it;
* :class:`ReportingSubprocVecEnv` (parent side) reads its pipes through one
  :class:`bridge.workers.Pool`: a reported error, a dead worker (even one killed while idle), a
  failed send or a missed deadline (60 s by default, ``vec_env_kwargs={"timeout": ...}``) is a
  ContractError naming the env index and the step, and that pool's workers are terminated and joined.
"""

from __future__ import annotations

import functools
import pickle
from typing import Any, Callable, List, Optional

import numpy as np
from bridge.compat import optional_import

from bridge.errors import ContractError, error
from bridge.vector.batches import as_batch, refuse_batch
from bridge.vector.sync import distinct_envs
from bridge.workers import DEFAULT_TIMEOUT, Pool, check_timeout, describe, raised, stop_processes, unpicklable

optional_import("stable_baselines3", "the SB3 export")
import gymnasium  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv  # noqa: E402

__all__ = ["FaultReporter", "CheckedDummyVecEnv", "ReportingSubprocVecEnv", "FAULT_KEY"]

FAULT_KEY = "envbridge.worker_error"
Check = Callable[[Any, str], Any]


class FaultReporter(gymnasium.Wrapper):
    """Worker side: an exception in the env becomes ``info[FAULT_KEY] = ("raised", "<Type>: <msg>")``.

    The step that raised returns ``(None, 0.0, False, False, info)``; the parent raises on it
    before anything reads the observation. ``<Type>: <message>`` is the user's own exception (the
    innermost ``raise ... from`` cause). An info that would not pickle back is reported the same
    way, as ``("unpicklable", ...)``, instead of killing SB3's worker on its send.
    """

    def step(self, action: Any) -> Any:
        try:
            out = self.env.step(action)
        except Exception as e:  # noqa: BLE001 - reported to the parent
            return None, 0.0, False, False, {FAULT_KEY: ("raised", describe(e))}
        return out if not out[4] or _pickles(out[4]) is None else (None, 0.0, False, False, _pickles(out[4]))

    def reset(self, **kwargs: Any) -> Any:
        try:
            out = self.env.reset(**kwargs)
        except Exception as e:  # noqa: BLE001 - reported to the parent
            return None, {FAULT_KEY: ("raised", describe(e))}
        return out if not out[1] or _pickles(out[1]) is None else (None, _pickles(out[1]))


def _pickles(info: dict) -> Optional[dict]:
    """None when ``info`` pickles, else the fault info that says why."""
    try:
        pickle.dumps(info)
    except Exception as e:  # noqa: BLE001 - the reason goes to the parent
        return {FAULT_KEY: ("unpicklable", describe(e))}
    return None


def _checked(vec: Any, actions: Any) -> None:
    """The whole batch, checked in the export's terms before any env steps (SB3 steps as it goes)."""
    refuse_batch(vec._invalid_batch, actions, vec.num_envs)


class CheckedDummyVecEnv(DummyVecEnv):
    """SB3's DummyVecEnv whose ``step_async`` checks the whole batch before any env steps."""

    def __init__(self, env_fns: List[Callable[[], Any]], *, invalid_batch: Optional[Check] = None) -> None:
        self._invalid_batch = invalid_batch
        super().__init__(env_fns)
        distinct_envs(self.envs, lambda: None)  # SB3 compares the exports; one user env in two exports too

    def step_async(self, actions: np.ndarray) -> None:
        actions = as_batch(actions)
        _checked(self, actions)
        super().step_async(actions)


class _Remote:
    """A parent pipe end that SB3's methods use as before; sends and receives go through the pool."""

    def __init__(self, index: int, owner: ReportingSubprocVecEnv) -> None:
        self.index, self.owner = index, owner
        self.command: Optional[str] = None

    def send(self, request: Any) -> None:
        self.command = request[0]
        self.owner.pool.send(self.index, request)

    def recv(self) -> Any:
        pool, i = self.owner.pool, self.index
        return self.owner._inspect(self, pool.receive(i, str(self.command)))

    def close(self) -> None:
        self.owner.pool.conns[self.index].close()


class ReportingSubprocVecEnv(SubprocVecEnv):
    """SB3's ``SubprocVecEnv`` whose worker faults raise a ContractError (see the module doc).

    Args:
        env_fns: SB3's env factories (wrap each env in :class:`FaultReporter` to get the user's
            exception in the message; without it a raising env reads as a dead worker).
        start_method: as for ``SubprocVecEnv``.
        timeout: seconds a worker may take to answer one call (None: as long as it is alive).
        label: how messages name the env, e.g. the neutral env's repr.
        invalid_batch: the export's batch action check (None: no check).
    """

    def __init__(
        self,
        env_fns: List[Callable[[], Any]],
        start_method: Optional[str] = None,
        *,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        label: str = "env",
        invalid_batch: Optional[Check] = None,
    ) -> None:
        self.timeout, self.label = check_timeout(timeout, "SubprocVecEnv"), label
        self._invalid_batch = invalid_batch
        self._steps = np.zeros(len(env_fns), dtype=np.int64)
        try:
            super().__init__(env_fns, start_method)
        except (EOFError, OSError) as e:  # worker 0 died while SB3 asked it for the spaces
            stop_processes(getattr(self, "processes", []))
            fix = "Build the env in this process first to see its error"
            subject = f"env 0 ({label}) at construction"
            raise error(ContractError, subject, "keep its worker process alive", "the worker died", fix) from e
        names = [f"env {i} ({label})" for i in range(len(env_fns))]
        self.pool = Pool(
            self.processes, self.remotes, names, self.timeout, self._where, "SubprocVecEnv", on_fault=self._poisoned
        )
        self.remotes = [_Remote(i, self) for i in range(len(env_fns))]

    def step_async(self, actions: np.ndarray) -> None:
        self.pool.require_open()
        actions = as_batch(actions)
        _checked(self, actions)
        super().step_async(actions)

    def _inspect(self, remote: _Remote, reply: Any) -> Any:
        i, command = remote.index, remote.command
        if command in ("step", "reset"):
            infos = reply[3:5] if command == "step" else reply[1:2]
            faults = [info[FAULT_KEY] for info in infos if isinstance(info, dict) and FAULT_KEY in info]
            if faults:  # in step's reply the second info is the autoreset's
                verb = "reset" if command == "reset" or FAULT_KEY not in reply[3] else "step"
                kind, text = faults[0]
                self.pool.fault(i, unpicklable(verb, text) if kind == "unpicklable" else raised(verb, text))
            self._steps[i] = 0 if command == "reset" or reply[2] else self._steps[i] + 1
        return reply

    def _where(self, index: int) -> str:
        return f"at step {int(self._steps[index]) + 1}"

    def _poisoned(self) -> None:
        self.closed, self.waiting = True, False  # SB3's close() is then a no-op


def reporting_factory(make: Callable[[], Any]) -> Callable[[], Any]:
    """``make`` with its env wrapped in :class:`FaultReporter` (picklable when ``make`` is)."""
    return functools.partial(_reporting, make)


def _reporting(make: Callable[[], Any]) -> Any:
    return FaultReporter(make())


def vec_env_cls(kind: Any, label: str, invalid_batch: Check) -> Callable[..., Any]:
    """The ``vec_env_cls`` for SB3's ``make_vec_env``: ours for SB3's two; any other as given."""
    if kind is None or kind is DummyVecEnv:
        return functools.partial(_dummy, invalid_batch=invalid_batch)
    if kind is SubprocVecEnv:
        return functools.partial(ReportingSubprocVecEnv, label=label, invalid_batch=invalid_batch)
    return kind


def _dummy(env_fns: List[Callable[[], Any]], **kwargs: Any) -> CheckedDummyVecEnv:
    return CheckedDummyVecEnv(env_fns, **kwargs)

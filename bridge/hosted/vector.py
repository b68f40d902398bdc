"""Hosted vectors: ``num_envs`` envs in ``workers`` hosts of another interpreter, each host's envs
stepped as one batch per round trip, behind the one :class:`bridge.VectorEnv` base.

Each host holds a contiguous block of rows (the first hosts one more when ``num_envs`` does not
divide evenly) and one shared-memory region laid out for its rows (:mod:`bridge.hosted.wire`); a
step writes every host's actions and announces them to all before it waits for any, so the hosts
step in parallel. Resets travel as frames. The base owns everything else (lifecycle, the action
check of the whole batch, autoreset, output checks); each host checks its envs' outputs with the
local exports' guard, and this side checks every byte it reads back. A host that dies, hangs or
garbles is a ContractError naming it, and every host of the vector is stopped.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from bridge import checks
from bridge.errors import BatchError, ContractError, SpecError, error
from bridge.hosted import wire
from bridge.hosted.client import RemoteEnv
from bridge.vector.base import VectorEnv, VectorStepResult
from bridge.vector.infos import merge_env_infos
from bridge.vector.shared import put_row  # one writer of a value's rows into its views
from bridge.workers import DEFAULT_TIMEOUT

__all__ = ["RemoteVectorEnv", "remote_vector"]


class RemoteVectorEnv(VectorEnv):
    """``num_envs`` copies of ``source`` in ``workers`` hosts (see :func:`remote_vector`)."""

    def __init__(
        self,
        source: str,
        num_envs: int,
        *,
        python: Optional[str] = None,
        workers: int = 1,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        kwargs: Optional[Dict[str, Any]] = None,
        imports: Iterable[str] = (),
        autoreset_mode: str = "next-step",
    ) -> None:
        for name, value, most in (("num_envs", num_envs, None), ("workers", workers, num_envs)):
            if type(value) is not int or value < 1 or (most is not None and value > most):
                bound = "an int >= 1" if most is None else f"an int in [1, num_envs={num_envs}]"
                raise error(SpecError, f"remote_vector {name}", f"be {bound}", repr(value), f"Pass e.g. {name}=1")
        self.autoreset_mode = autoreset_mode
        self.num_envs, self.hosts, self.rows = num_envs, [], []  # type: ignore[var-annotated]
        sizes = [num_envs // workers + (1 if w < num_envs % workers else 0) for w in range(workers)]
        start = 0
        try:
            for size in sizes:
                host = RemoteEnv(source, python=python, timeout=timeout, kwargs=kwargs, imports=imports, count=size)
                self.hosts.append(host)
                self.rows.append(slice(start, start + size))
                start += size
                if host.shared is None:
                    got = f"{host.observation_space!r} and {host.action_space!r}"
                    fix = "Use spaces of Box, Discrete, MultiDiscrete, MultiBinary (Dicts and Tuples of them)"
                    fix += ", or bridge.vectorize(lambda: bridge.remote(...), n)"
                    raise error(SpecError, "remote_vector spaces", "fit the shared-memory step wire", got, fix)
        except BaseException:
            self.close_envs()
            raise
        for host in self.hosts:  # a fault of one host stops them all (the vector is broken as a whole)
            host.pool.on_fault = self._stop_hosts
        first = self.hosts[0]
        self.single_observation_space, self.single_action_space = first.observation_space, first.action_space
        self.metadata, self.render_mode = first.metadata, first.render_mode
        space = self.single_observation_space
        self._obs = wire.views(space, num_envs, bytearray(wire.views(space, num_envs, None, 0)[1]), 0)[0]
        self._check = checks.value_check(self.single_observation_space, full=False)

    def reset_envs(self, mask: np.ndarray, seeds: List[Optional[int]], options: Optional[dict]) -> Tuple[Any, dict]:
        asked: List[Tuple[RemoteEnv, slice, List[int]]] = []
        for host, rows in zip(self.hosts, self.rows):
            chosen = [i for i in range(rows.start, rows.stop) if mask[i]]
            if chosen:
                request = ("reset_rows", {"rows": [[i - rows.start, seeds[i]] for i in chosen], "options": options})
                host.pool.require_open()
                host.pool.send(0, host._frame(request, "reset options"), "reset")
                asked.append((host, rows, chosen))
        infos: List[Optional[dict]] = [None] * self.num_envs
        for host, _, chosen in asked:
            results = host._result("reset")
            if not isinstance(results, list) or len(results) != len(chosen):
                host.pool.fault(
                    0, ("answer a reset of its rows with one result each", repr(results)[:80], "Check the host")
                )
            for i, result in zip(chosen, results):
                obs, infos[i] = result
                found = self._check(obs, f"env {i} reset observation")
                if found is not None:
                    raise error(ContractError, *found)
                put_row(self._obs, i, obs)
        return _copy(self._obs), merge_env_infos(infos, self.num_envs)

    def step_envs(self, actions: Any, active: np.ndarray) -> VectorStepResult:
        for host, rows in zip(self.hosts, self.rows):
            host.pool.require_open()
            if not host.shared.put_actions(_rows(actions, rows), active[rows]):  # type: ignore[union-attr]
                got = f"a batch of {_kinds(actions)}"
                fix = "Pass actions of exactly the action space's dtypes (the vector's check does, by default)"
                raise error(BatchError, "remote_vector actions", "be of the action space's dtypes", got, fix)
        for host in self.hosts:
            host.shared.announce("step")  # type: ignore[union-attr]
        parts = []
        infos: List[Optional[dict]] = [None] * self.num_envs
        for host, rows in zip(self.hosts, self.rows):
            shared = host.shared
            got = shared.collect("step")  # type: ignore[union-attr]
            parts.append(shared.read_batch(active[rows], got))  # type: ignore[union-attr]
            for i, info in got.items():
                infos[rows.start + i] = info
        obs = _concatenate([p[0] for p in parts])
        rewards, terminated, truncated = (np.concatenate([p[k] for p in parts]) for k in (1, 2, 3))
        for i in np.flatnonzero(active).tolist():
            infos[i] = {} if infos[i] is None else infos[i]
        return obs, rewards, terminated, truncated, merge_env_infos(infos, self.num_envs)

    def close_envs(self) -> None:
        for host in self.hosts:
            host.close()

    def _stop_hosts(self) -> None:
        for host in self.hosts:
            if not host.pool.closed:
                host.pool.stop(grace=0.0)

    @property
    def wire(self) -> dict:
        """How steps travel (the first host's :attr:`RemoteEnv.wire`)."""
        return self.hosts[0].wire


def _rows(tree: Any, rows: slice) -> Any:
    if isinstance(tree, dict):
        return {key: _rows(value, rows) for key, value in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_rows(value, rows) for value in tree)
    return tree[rows]


def _kinds(tree: Any) -> str:
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_kinds(v)}" for k, v in tree.items()) + "}"
    if isinstance(tree, tuple):
        return "(" + ", ".join(_kinds(v) for v in tree) + ")"
    return f"{getattr(tree, 'dtype', type(tree).__name__)}"


def _concatenate(parts: List[Any]) -> Any:
    first = parts[0]
    if isinstance(first, dict):
        return {key: _concatenate([p[key] for p in parts]) for key in first}
    if isinstance(first, tuple):
        return tuple(_concatenate([p[i] for p in parts]) for i in range(len(first)))
    return first if len(parts) == 1 else np.concatenate(parts)


def _copy(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {key: _copy(value) for key, value in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_copy(value) for value in tree)
    return tree.copy()


def remote_vector(
    source: str,
    num_envs: int,
    *,
    python: Optional[str] = None,
    workers: int = 1,
    timeout: Optional[float] = DEFAULT_TIMEOUT,
    kwargs: Optional[Dict[str, Any]] = None,
    imports: Iterable[str] = (),
    autoreset_mode: str = "next-step",
) -> RemoteVectorEnv:
    """``num_envs`` copies of the env ``source`` names, built and stepped as batches in ``workers``
    host processes of the interpreter ``python`` (see :func:`bridge.remote` for ``source``,
    ``python``, ``timeout``, ``kwargs`` and ``imports``), as one :class:`bridge.VectorEnv`."""
    return RemoteVectorEnv(
        source,
        num_envs,
        python=python,
        workers=workers,
        timeout=timeout,
        kwargs=kwargs,
        imports=imports,
        autoreset_mode=autoreset_mode,
    )

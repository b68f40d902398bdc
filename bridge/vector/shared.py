"""Shared memory for :class:`~bridge.vector.process.ProcessVectorEnv`: batches that cross no pipe.

When every leaf of both spaces is fixed-shape numeric (Box, Discrete, MultiDiscrete, MultiBinary,
and Dicts and Tuples of them), the parent makes one ``multiprocessing.shared_memory`` segment
holding a batch of observations and a batch of actions (a numpy view per leaf, sub-envs on the
leading axis). A step then writes the checked action batch into the segment and sends each worker
a two-word command; the worker reads its row (a copy), steps, checks its observation with the same
check the parent would apply and writes it into its row; only reward, flags and info are pickled
back. An observation the check refuses goes back through the pipe as before, so the parent raises
the same error it raises without shared memory. The parent copies the observation batch out once
per call, so nothing it returns aliases the segment (a kept observation is never overwritten).

The parent owns the segment: :meth:`SharedBatches.release` closes and unlinks it (the pool calls it
once its workers are stopped: on ``close()`` and on a fault), and a ``weakref.finalize`` does the
same for an env that is never closed. Workers only map it. ``multiprocessing`` is imported here
only when a segment is made or mapped, never at ``import bridge``.
"""

from __future__ import annotations

import os
import secrets
import weakref
from typing import Any, Optional, Tuple

import numpy as np

from bridge import checks, spaces

SEGMENT_PREFIX = "envbridge_"  # + the creating process's pid + a random part

__all__ = ["SharedBatches", "attach", "supported", "put_row"]

_LEAVES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
_ALIGN = 64  # every leaf starts on a cache line


def supported(space: spaces.Space) -> bool:
    """True when every leaf of ``space`` is a fixed-shape numeric space (so it fits a buffer)."""
    if isinstance(space, spaces.Dict):
        return all(supported(sub) for _, sub in space.items())
    if isinstance(space, spaces.Tuple):
        return all(supported(sub) for sub in space)
    return isinstance(space, _LEAVES) and np.dtype(space.dtype).kind in "biuf"


def _views(space: spaces.Space, n: int, buffer: Any, offset: int) -> Tuple[Any, int]:
    """The tree (dict / tuple / ndarray) of ``(n, *shape)`` views of ``space`` from ``offset``;
    with ``buffer=None`` only the end offset (the size) is computed."""
    if isinstance(space, spaces.Dict):
        tree = {}
        for key, sub in space.items():
            tree[key], offset = _views(sub, n, buffer, offset)
        return tree, offset
    if isinstance(space, spaces.Tuple):
        items = []
        for sub in space:
            view, offset = _views(sub, n, buffer, offset)
            items.append(view)
        return tuple(items), offset
    offset = -(-offset // _ALIGN) * _ALIGN
    dtype, shape = np.dtype(space.dtype), (n,) + tuple(space.shape)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    view = None if buffer is None else np.ndarray(shape, dtype, buffer=buffer, offset=offset)
    return view, offset + size


def _copy(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {key: _copy(view) for key, view in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_copy(view) for view in tree)
    return tree.copy()


def _row(tree: Any, index: int) -> Any:
    """Row ``index``, copied (a 0-d leaf is a numpy scalar, as ``spaces.iterate`` gives it)."""
    if isinstance(tree, dict):
        return {key: _row(view, index) for key, view in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_row(view, index) for view in tree)
    return tree[index].copy()


def put_row(tree: Any, index: int, value: Any) -> None:
    """Write one checked value of the space into row ``index`` (a Tuple value may be a list)."""
    if isinstance(tree, dict):
        for key, view in tree.items():
            put_row(view, index, value[key])
    elif isinstance(tree, tuple):
        for view, item in zip(tree, value):
            put_row(view, index, item)
    else:
        tree[index] = value


def _fits(tree: Any, batch: Any) -> bool:
    """True when ``batch`` has exactly the tree's structure, dtypes and shapes (nothing would cast)."""
    if isinstance(tree, dict):
        return type(batch) is dict and batch.keys() == tree.keys() and all(_fits(v, batch[k]) for k, v in tree.items())
    if isinstance(tree, tuple):
        return type(batch) is tuple and len(batch) == len(tree) and all(map(_fits, tree, batch))
    return type(batch) is np.ndarray and batch.dtype == tree.dtype and batch.shape == tree.shape


def _put_batch(tree: Any, batch: Any) -> None:
    if isinstance(tree, dict):
        for key, view in tree.items():
            _put_batch(view, batch[key])
    elif isinstance(tree, tuple):
        for view, item in zip(tree, batch):
            _put_batch(view, item)
    else:
        np.copyto(tree, batch)


def _release(segment: Any) -> None:
    try:
        segment.close()
    except BufferError:  # a view still lives (e.g. in a traceback): the mapping goes with it
        pass
    try:
        segment.unlink()
    except FileNotFoundError:
        pass


class SharedBatches:
    """The parent's segment: ``observations`` and ``actions`` trees of ``(n, ...)`` views."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, n: int) -> None:
        from multiprocessing import shared_memory

        _, split = _views(observation_space, n, None, 0)
        _, size = _views(action_space, n, None, split)
        # named after the creating process, so a leftover segment says whose it is
        name = f"{SEGMENT_PREFIX}{os.getpid()}_{secrets.token_hex(6)}"
        self.segment = shared_memory.SharedMemory(name=name, create=True, size=max(size, 1))
        self._finalizer = weakref.finalize(self, _release, self.segment)
        self.handle = (self.segment.name, observation_space, action_space, n)
        self.observations, _ = _views(observation_space, n, self.segment.buf, 0)
        self.actions, _ = _views(action_space, n, self.segment.buf, split)

    @classmethod
    def open(cls, observation_space: spaces.Space, action_space: spaces.Space, n: int) -> Optional[SharedBatches]:
        """A segment for these spaces, or None (an unsupported space, or no shared memory here)."""
        if not (supported(observation_space) and supported(action_space)):
            return None
        try:
            return cls(observation_space, action_space, n)
        except OSError:  # no /dev/shm, or too small: the pipes carry everything
            return None

    def put_actions(self, actions: Any) -> bool:
        """Write the action batch; False (nothing written) when it is not exactly of the space's
        dtypes and shapes, so the caller sends it through the pipes unchanged."""
        if not _fits(self.actions, actions):
            return False
        _put_batch(self.actions, actions)
        return True

    def put_observation(self, index: int, observation: Any) -> None:
        put_row(self.observations, index, observation)

    def observation_batch(self) -> Any:
        """A copy of the observation batch (the caller may keep it: the next step does not touch it)."""
        return _copy(self.observations)

    def release(self) -> None:
        """Close and unlink the segment; safe to call twice."""
        self.observations = self.actions = None
        self._finalizer()


class WorkerBatches:
    """A worker's mapping of the parent's segment: its own action row in, its observation row out."""

    def __init__(self, handle: Tuple[str, spaces.Space, spaces.Space, int], index: int) -> None:
        from multiprocessing import shared_memory

        name, observation_space, action_space, n = handle
        self.segment = shared_memory.SharedMemory(name=name)
        self.index = index
        observations, split = _views(observation_space, n, self.segment.buf, 0)
        self.observations, self.actions = observations, _views(action_space, n, self.segment.buf, split)[0]
        self._check = checks.value_check(observation_space, full=False)

    def action(self) -> Any:
        return _row(self.actions, self.index)

    def put(self, observation: Any) -> bool:
        """Write ``observation`` into this worker's row if the parent's own check accepts it."""
        if self._check(observation, "observation") is not None:
            return False
        put_row(self.observations, self.index, observation)
        return True


def attach(payload: Tuple[Any, int]) -> WorkerBatches:
    """The worker side of ``("attach", (handle, index))`` (see :func:`bridge.vector.worker.serve`)."""
    handle, index = payload
    return WorkerBatches(handle, index)

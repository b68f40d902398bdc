"""The fixed-layout step wire: one shared-memory region both ends derive from the spaces.

After the JSON handshake and build, a client whose spaces are fixed-shape numeric (Box, Discrete,
MultiDiscrete, MultiBinary, and Dicts and Tuples of them: :func:`supported`) steps through a region
it created (an anonymous ``memfd``: it has no name, so nothing is ever left in ``/dev/shm``, and no
resource tracker of Python 3.9 can unlink it or warn) and handed to the host at start. Both ends
compute the same :class:`Layout` for ``n`` envs from the spaces; the host sends its own in the
attach reply and the client refuses any other (a host cannot declare a larger region).

Layout, every block on its own 64-byte line: four control words (uint64: the client's request
sequence, the host's reply sequence, "host asleep", "client asleep"), then per env row: the
active flag (uint8, client to host), the action leaves, the observation leaves, the reward
(float64), terminated, truncated and "has info" (uint8). A step: the client writes the actions and
active flags, then the request word; the host, spinning briefly on that word and then blocking on
its doorbell (an empty frame on its input pipe, sent only while it says it is asleep), steps the
active envs, writes their outputs, then the reply word, then the infos that are not empty as one
JSON frame (which also wakes a client asleep on the pipe); without infos it rings the client's
doorbell (an empty frame) only if the client says it is asleep. Both ends yield the core on each
turn of a spin. A missed ring costs at most :data:`RECHECK` seconds: both ends re-read the word between
waits. Errors and refusals travel as frames, never through the region.

The client reads nothing of the region it did not lay out itself: fixed offsets, fixed dtypes and
shapes, flags checked to be 0 or 1, rewards checked to be finite, observations of discrete spaces
checked for range; garbage is a ContractError, never an out-of-bounds read or an allocation.
"""

from __future__ import annotations

import mmap
import os
from typing import Any, List, Optional, Tuple

import numpy as np

from bridge import spaces

__all__ = [
    "Layout",
    "Region",
    "Spinner",
    "supported",
    "views",
    "RECHECK",
    "SPIN",
    "DOORBELL",
    "make_region",
    "size_and_seal",
]

_ALIGN = 64
_LEAVES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
REQUEST, REPLY, HOST_ASLEEP, CLIENT_ASLEEP = 0, 8, 16, 24  # indices of the control words (uint64)
_CONTROL = 4 * _ALIGN
SPIN = 50e-6  # seconds either end spins on the other's sequence word before it blocks on its doorbell
BACKOFF = 64  # waits without spinning after a spin that did not see the word (a busy machine: block at once)
RECHECK = 0.005  # seconds a blocked end waits before it reads the word again (a ring both ends missed)
DOORBELL = "pipe (an empty frame)"  # what wakes a blocked end; the attach reply says which the host used


def pause() -> None:
    """One turn of a spin: give the core to a runnable peer (on a machine with more busy processes
    than cores, spinning without yielding keeps the peer from ever answering)."""
    _yield()


_yield = getattr(os, "sched_yield", lambda: None)


class Spinner:
    """How long one end spins before it blocks: :data:`SPIN`, or nothing for the next
    :data:`BACKOFF` waits after a spin that failed (where the cores are oversubscribed, a spin only
    takes the CPU from the peer it waits for; 2.3 us vs 457 us per round trip in DESIGN.md)."""

    def __init__(self) -> None:
        self.skip, self.spun = 0, False

    def budget(self) -> float:
        """Seconds to spin before this wait blocks."""
        self.spun = not self.skip
        if self.skip:
            self.skip -= 1
            return 0.0
        return SPIN

    def failed(self) -> None:
        """The wait had to block: after a spin, block at once for the next :data:`BACKOFF` waits."""
        if self.spun:
            self.skip = BACKOFF


def supported(space: spaces.Space) -> bool:
    """True when every leaf of ``space`` is a fixed-shape numeric space (so it fits the region)."""
    if isinstance(space, spaces.Dict):
        return all(supported(sub) for _, sub in space.items())
    if isinstance(space, spaces.Tuple):
        return all(supported(sub) for sub in space)
    return isinstance(space, _LEAVES) and np.dtype(space.dtype).kind in "biuf"


def views(space: spaces.Space, n: int, buffer: Any, offset: int) -> Tuple[Any, int]:
    """The tree (dict / tuple / ndarray) of ``(n, *shape)`` views of ``space`` from ``offset``;
    with ``buffer=None`` only the end offset (the size) is computed."""
    if isinstance(space, spaces.Dict):
        tree = {}
        for key, sub in space.items():
            tree[key], offset = views(sub, n, buffer, offset)
        return tree, offset
    if isinstance(space, spaces.Tuple):
        items = []
        for sub in space:
            view, offset = views(sub, n, buffer, offset)
            items.append(view)
        return tuple(items), offset
    offset = _aligned(offset)
    dtype, shape = np.dtype(space.dtype), (n,) + tuple(space.shape)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    view = None if buffer is None else np.ndarray(shape, dtype, buffer=buffer, offset=offset)
    return view, offset + size


def leaves(tree: Any) -> List[np.ndarray]:
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in leaves(value)]
    if isinstance(tree, tuple):
        return [leaf for value in tree for leaf in leaves(value)]
    return [tree]


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


class Layout:
    """Offsets of every block for ``n`` envs of these spaces (the same on both ends)."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, n: int) -> None:
        self.observation_space, self.action_space, self.n = observation_space, action_space, n
        self.active = _CONTROL
        self.actions = _aligned(self.active + n)
        self.observations = views(action_space, n, None, self.actions)[1]
        end = views(observation_space, n, None, self.observations)[1]
        self.rewards = _aligned(end)
        self.terminated = _aligned(self.rewards + 8 * n)
        self.truncated = _aligned(self.terminated + n)
        self.has_info = _aligned(self.truncated + n)
        self.size = _aligned(self.has_info + n)

    def describe(self) -> dict:
        """Plain data both ends compare in the attach handshake."""
        return {
            "n": self.n,
            "size": self.size,
            "blocks": [self.active, self.actions, self.observations, self.rewards, self.terminated, self.truncated],
        }


class Region:
    """One end's mapping of the region: control words and the per-row views of :class:`Layout`."""

    def __init__(self, fd: int, layout: Layout) -> None:
        self.layout, self.closed = layout, False
        self.map = mmap.mmap(fd, layout.size)
        buffer = self.map
        self.control = memoryview(buffer)[:_CONTROL].cast("Q")
        n = layout.n
        self.active = np.ndarray((n,), np.uint8, buffer, layout.active)
        self.actions = views(layout.action_space, n, buffer, layout.actions)[0]
        self.observations = views(layout.observation_space, n, buffer, layout.observations)[0]
        self.rewards = np.ndarray((n,), np.float64, buffer, layout.rewards)
        self.terminated = np.ndarray((n,), np.uint8, buffer, layout.terminated)
        self.truncated = np.ndarray((n,), np.uint8, buffer, layout.truncated)
        self.has_info = np.ndarray((n,), np.uint8, buffer, layout.has_info)
        self.action_leaves = leaves(self.actions)
        self.observation_leaves = leaves(self.observations)

    def close(self) -> None:
        """Drop every view, then the mapping (a view still held elsewhere keeps it until it goes)."""
        self.closed = True
        self.control.release()
        self.active = self.actions = self.observations = self.rewards = None  # type: ignore[assignment]
        self.terminated = self.truncated = self.has_info = None  # type: ignore[assignment]
        self.action_leaves = self.observation_leaves = []
        try:
            self.map.close()
        except BufferError:
            pass


def make_region() -> Optional[int]:
    """An anonymous shared-memory file (memfd) for a host to inherit, or None where there is none."""
    if not hasattr(os, "memfd_create"):
        return None
    try:  # not inheritable by default; passed to the host explicitly
        return os.memfd_create("envbridge-wire", getattr(os, "MFD_ALLOW_SEALING", 0))
    except OSError:
        return None


def size_and_seal(fd: int, size: int) -> None:
    """Give the region its size, then seal it: the host can neither shrink it (a read past its end
    here would be SIGBUS) nor grow it."""
    os.ftruncate(fd, size)
    try:
        import fcntl

        seals = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL  # type: ignore[attr-defined]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)  # type: ignore[attr-defined]
    except (ImportError, AttributeError, OSError):
        pass  # no sealing here (the region still has exactly the size this side maps)

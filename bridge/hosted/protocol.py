"""The remote env wire format: length-prefixed frames of plain data, pickle-free both ways.

A frame is ``!Q`` (8 bytes, the body's length), then the body: ``!I`` (4 bytes, the JSON header's
length), the header as UTF-8 JSON, then the raw bytes of every array in order. The header is
``{"tree": ..., "arrays": [[dtype, shape], ...]}``: the message tree in the snapshot files' own
encoding (:mod:`bridge._plaindata`: tuples, escaped marker keys, numpy scalars) with each array a
``{"__ndarray__": i}`` / ``{"__scalar__": i}`` leaf. Nothing else is ever sent: no pickle, no code.

The reader is written for a peer as untrusted as a file from a stranger: the frame length is
checked against :class:`~bridge.safe_files.Limits` before its body is allocated, the header within
the JSON limits (bytes, depth, and the containers and values it expands to) before it is parsed,
every declared array (plain dtype, shape, byte count) before it is read out of the body, and the
declared sizes must add up to exactly the body.

Every wait has a deadline. On a non-blocking file descriptor (the client's ends of the host's
pipes) :class:`FrameReader` waits for the rest of a begun frame at most ``timeout`` seconds and
:func:`write_frame` waits at most that long for a peer that stopped reading; either raises
:class:`Stalled` (a ``TimeoutError``) saying how much moved. A blocking descriptor (the host's
ends) simply blocks: the host has nothing else to do, and it exits when its client dies.
"""

from __future__ import annotations

import json
import math
import os
import select
import struct
import sys
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from bridge import _plaindata, safe_json
from bridge._version import __version__
from bridge.errors import ContractError, message
from bridge.safe_files import LIMITS, Limits

__all__ = [
    "PROTOCOL",
    "hello",
    "shown",
    "encode",
    "decode",
    "write_frame",
    "FrameReader",
    "ProtocolError",
    "Stalled",
]

PROTOCOL = 1  # bumped on any change of the frame layout or the message set
_FRAME, _HEADER = struct.Struct("!Q"), struct.Struct("!I")
_FIX = "Run the same envbridge version in both interpreters (pip install -e . in each venv)"


def hello() -> dict:
    """What both ends compare in the handshake (envbridge and protocol must match; Python and numpy may differ)."""
    python = ".".join(str(v) for v in sys.version_info[:3])
    return {"envbridge": __version__, "protocol": PROTOCOL, "python": python, "numpy": np.__version__}


def shown(tree: Any) -> str:
    """The start of a received tree, for messages."""
    return _plaindata.shown(tree)


class ProtocolError(ContractError):
    """A frame that does not follow the wire format (the peer is not a envbridge host, or broken)."""


class Stalled(TimeoutError):
    """A peer that stopped in the middle of a frame (reading or writing) past the deadline; the
    message says how much of the frame moved."""


def _refuse(expectation: str, got: str) -> ProtocolError:
    return ProtocolError(message("remote frame", expectation, got, _FIX))


def encode(tree: Any, limits: Limits = LIMITS) -> bytes:
    """One frame of ``tree`` (plain data; anything else is the snapshot encoder's SpecError)."""
    arrays: List[np.ndarray] = []

    def leaf(array: np.ndarray, scalar: bool) -> Tuple[Any, int]:
        arrays.append(np.require(_plaindata.plain(array), requirements="C"))  # keeps 0-d arrays 0-d
        return {_plaindata.SCALAR if scalar else _plaindata.ARRAY: len(arrays) - 1}, 1

    body, depth = _plaindata.encode(tree, leaf, limits.max_json_depth)
    header = {"tree": body, "arrays": [[a.dtype.str, list(a.shape)] for a in arrays]}
    text = safe_json.dumps(header, depth + 3).encode("utf-8")
    parts = [_HEADER.pack(len(text)), text] + [a.tobytes() for a in arrays]
    size = sum(len(p) for p in parts)
    return _FRAME.pack(size) + b"".join(parts)


def doorbell() -> bytes:
    """The empty frame: no message, it only wakes a peer that sleeps on the pipe (see :mod:`bridge.hosted.wire`)."""
    return _FRAME.pack(0)


def decode(body: bytes, limits: Limits = LIMITS) -> Any:
    """The tree of one frame's body, every size checked before anything is allocated."""
    if len(body) < _HEADER.size:
        raise _refuse("hold a header length", f"{len(body)} bytes")
    (length,) = _HEADER.unpack_from(body)
    if length > len(body) - _HEADER.size or length > limits.max_json_bytes:
        raise _refuse(f"declare a header within its {len(body) - _HEADER.size:,} bytes", f"{length:,} bytes")
    try:
        text = body[_HEADER.size : _HEADER.size + length].decode("utf-8")
    except UnicodeDecodeError as e:
        raise _refuse("hold a UTF-8 JSON header", f"bytes that are not UTF-8 ({e.reason})") from e
    header = safe_json.parse_json(text, subject="remote frame header", fix=_FIX, limits=limits)
    if not isinstance(header, dict) or set(header) != {"tree", "arrays"} or not isinstance(header["arrays"], list):
        raise _refuse("hold a header with 'tree' and 'arrays'", _plaindata.shown(header))
    arrays = _arrays(header["arrays"], memoryview(body)[_HEADER.size + length :], limits)

    def leaf(item: dict) -> Any:
        key = _plaindata.SCALAR if _plaindata.SCALAR in item else _plaindata.ARRAY
        index = item[key]
        if set(item) != {key} or type(index) is not int or not 0 <= index < len(arrays):
            raise _refuse(f"reference only its {len(arrays)} arrays", json.dumps(item))
        if key == _plaindata.SCALAR:
            if arrays[index].shape != ():
                raise _refuse("mark only 0-d arrays as scalars", json.dumps(item))
            return arrays[index][()]
        return arrays[index]

    return _plaindata.decode(header["tree"], leaf, "remote frame header", _FIX)


def _arrays(declared: List[Any], data: memoryview, limits: Limits) -> List[np.ndarray]:
    arrays: List[np.ndarray] = []
    offset = 0
    for entry in declared:
        ok = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], list)
        ok = ok and len(entry[1]) <= 32 and all(type(d) is int and d >= 0 for d in entry[1])
        try:
            dtype = np.dtype(entry[0]) if ok else None
        except (TypeError, ValueError, SyntaxError):
            dtype = None
        if dtype is None or dtype.kind not in _plaindata.PLAIN_KINDS or dtype.fields is not None:
            raise _refuse("declare arrays as [plain dtype, shape]", _plaindata.shown(entry))
        if dtype.subdtype is not None or not dtype.itemsize:
            raise _refuse("declare arrays as [plain dtype, shape]", _plaindata.shown(entry))
        nbytes = math.prod(entry[1]) * dtype.itemsize
        if nbytes > limits.max_member_bytes:
            expectation = f"declare arrays of at most {limits.max_member_bytes:,} bytes (Limits.max_member_bytes)"
            raise _refuse(expectation, f"{nbytes:,} bytes for array {len(arrays)}")
        if nbytes > len(data) - offset:
            expectation = f"hold the {nbytes:,} bytes it declares for array {len(arrays)}"
            raise _refuse(expectation, f"only {len(data) - offset:,} bytes after the arrays before it")
        array = np.frombuffer(data[offset : offset + nbytes], dtype=dtype).reshape(entry[1]).copy()
        arrays.append(array)
        offset += nbytes
    if offset != len(data):
        raise _refuse(f"end after its arrays ({offset:,} bytes)", f"{len(data) - offset:,} bytes more")
    return arrays


def write_frame(fd: int, frame: bytes, timeout: Optional[float] = None) -> None:
    """Write all of ``frame`` to the file descriptor (a pipe may take it in parts).

    On a non-blocking descriptor the peer must take the whole frame within ``timeout`` seconds
    (None: as long as it takes), else :class:`Stalled`."""
    view = memoryview(frame)
    deadline = None if timeout is None else time.monotonic() + timeout
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            if not _wait(fd, deadline, write=True):
                got = f"{len(frame) - len(view):,} of the {len(frame):,} bytes of a frame taken"
                raise Stalled(f"{got}, then nothing more until {timeout:g} s had passed") from None


def _wait(fd: int, deadline: Optional[float], write: bool = False) -> bool:
    """Wait until ``fd`` is ready or ``deadline`` passes (None: no deadline); False on the deadline."""
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return False
        ready = select.select([], [fd], [], remaining) if write else select.select([fd], [], [], remaining)
        if ready[1 if write else 0]:
            return True


class FrameReader:
    """Reads whole frames from a file descriptor; the length is checked before the body is read."""

    def __init__(self, fd: int, limits: Limits = LIMITS) -> None:
        self.fd, self.limits = fd, limits
        self.buffer = bytearray()
        self.max_body = limits.max_total_bytes + limits.max_json_bytes

    def ready(self) -> bool:
        """True when the buffer already holds a whole frame (the descriptor may have nothing more)."""
        if len(self.buffer) < _FRAME.size:
            return False
        return len(self.buffer) - _FRAME.size >= _FRAME.unpack_from(self.buffer)[0]

    def read(self, timeout: Optional[float] = None) -> bytes:
        """The next frame's body; EOFError when the peer closed before a whole frame.

        On a non-blocking descriptor, the frame must arrive whole within ``timeout`` seconds of
        this call (None: as long as the peer keeps its end open), else :class:`Stalled`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        head = self._exactly(_FRAME.size, deadline, timeout, "of the 8 bytes of a frame's length")
        (size,) = _FRAME.unpack(head)
        if size > self.max_body:
            got = f"a frame of {size:,} bytes (first bytes {bytes(head)!r})"
            raise _refuse(f"be at most {self.max_body:,} bytes (Limits.max_total_bytes + .max_json_bytes)", got)
        return self._exactly(size, deadline, timeout, f"of the {size:,} bytes of a frame")

    def _exactly(self, count: int, deadline: Optional[float], timeout: Optional[float], what: str) -> bytes:
        while len(self.buffer) < count:
            try:
                chunk = os.read(self.fd, max(65536, count - len(self.buffer)))
            except BlockingIOError:
                if not _wait(self.fd, deadline):
                    raise Stalled(f"{len(self.buffer):,} {what}, then silence until {timeout:g} s had passed") from None
                continue
            if not chunk:
                raise EOFError("the peer closed its end")
            self.buffer += chunk
        out = bytes(self.buffer[:count])
        del self.buffer[:count]
        return out

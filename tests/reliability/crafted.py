"""Crafted files, generated at run time (never checked in): zip archives written byte by byte, so a
test can make each lie a loader must catch (sizes, flags, headers, truncation), and zip bombs.

``zip_bytes`` writes local headers, data, the central directory and the end record exactly as
given; ``npy`` writes a .npy member with any header; ``zeros_deflated`` makes a deflate stream of
any number of zero bytes in about 1 KB per MiB without compressing them (full-flush blocks repeat
byte for byte), so a 2 GiB bomb costs a fraction of a second to build.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

import numpy as np

MIB = 1 << 20


class Entry(NamedTuple):
    """One zip member as it is stored: ``data`` already compressed when ``method`` is 8."""

    name: str
    data: bytes
    size: int  # the uncompressed size the archive declares
    crc: int
    method: int = 0
    flags: int = 0


def stored(name: str, payload: bytes, **lies: int) -> Entry:
    """An honest stored member, unless ``lies`` overrides ``size`` / ``crc`` / ``flags``."""
    return Entry(
        name, payload, lies.get("size", len(payload)), lies.get("crc", zlib.crc32(payload)), 0, lies.get("flags", 0)
    )


def deflated(name: str, payload: bytes, **lies: int) -> Entry:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = c.compress(payload) + c.flush()
    return Entry(
        name, data, lies.get("size", len(payload)), lies.get("crc", zlib.crc32(payload)), 8, lies.get("flags", 0)
    )


def zip_bytes(
    entries: List[Entry],
    directory: Optional[List[Tuple[Entry, int]]] = None,
    count: Optional[int] = None,
    directory_size: Optional[int] = None,
) -> bytes:
    """The archive; ``directory`` (entry, index of the local header it points at) may differ from
    the local entries (lying sizes, overlapping members); ``count`` / ``directory_size`` may lie in
    the end record."""
    out, offsets = bytearray(), []
    for e in entries:
        name = e.name.encode()
        offsets.append(len(out))
        out += struct.pack(
            "<4s5H3L2H", b"PK\x03\x04", 20, e.flags, e.method, 0, 0x21, e.crc, len(e.data), e.size, len(name), 0
        )
        out += name + e.data
    listed = directory if directory is not None else [(e, i) for i, e in enumerate(entries)]
    central = bytearray()
    for e, index in listed:
        name = e.name.encode()
        central += struct.pack(
            "<4s6H3L5H2L",
            b"PK\x01\x02",
            20,
            20,
            e.flags,
            e.method,
            0,
            0x21,
            e.crc,
            len(e.data),
            e.size,
            len(name),
            0,
            0,
            0,
            0,
            0o644 << 16,
            offsets[index],
        )
        central += name
    n = len(listed) if count is None else count
    size = len(central) if directory_size is None else directory_size
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n & 0xFFFF, n & 0xFFFF, size, len(out), 0)
    return bytes(out + central + end)


def npy(array: np.ndarray) -> bytes:
    """A .npy file as numpy writes it."""
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_header(header: str, version: Tuple[int, int] = (1, 0)) -> bytes:
    """A .npy prefix (magic, version, length, padded header dict) with any header text."""
    text = header.encode("latin-1")
    width = 2 if version == (1, 0) else 4
    text += b" " * ((-(len(text) + 9 + width)) % 64) + b"\n"  # 64-aligned, as numpy writes it
    return b"\x93NUMPY" + bytes(version) + struct.pack("<H" if width == 2 else "<I", len(text)) + text


def header_for(descr: str, shape: tuple, fortran: bool = False) -> bytes:
    return npy_header(f"{{'descr': {descr!r}, 'fortran_order': {fortran}, 'shape': {shape!r}, }}")


def zeros_deflated(prefix: bytes, zeros: int) -> Tuple[bytes, int]:
    """A raw deflate stream of ``prefix`` then ``zeros`` zero bytes, and its CRC-32."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    parts = [c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)]
    whole, rest = divmod(zeros, MIB)
    if whole:  # after a full flush the compressor starts afresh: every MiB gives the same bytes
        parts.append((c.compress(bytes(MIB)) + c.flush(zlib.Z_FULL_FLUSH)) * whole)
    if rest:
        parts.append(c.compress(bytes(rest)) + c.flush(zlib.Z_FULL_FLUSH))
    parts.append(c.flush())
    crc, chunk = zlib.crc32(prefix), bytes(MIB)
    for _ in range(whole):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(bytes(rest), crc)
    return b"".join(parts), crc


def bomb_entry(
    name: str, total: int, declared: Optional[int] = None, header: Optional[bytes] = None, careful: bool = True
) -> Entry:
    """A deflated member that expands to ``total`` bytes: a uint8 .npy of the right length (or
    ``header``) then zeros. The archive declares ``declared`` bytes (default: the truth); a
    ``careful`` liar also gives the CRC-32 of just those bytes, so zipfile's own check passes."""
    if header is None:
        header = header_for("|u1", (total - len(header_for("|u1", (total,))),))
    data, crc = zeros_deflated(header, total - len(header))
    if declared is not None and careful:
        crc = zlib.crc32(header[:declared] + bytes(max(declared - len(header), 0)))
    return Entry(name, data, total if declared is None else declared, crc, 8)


def write(path: str, data: bytes) -> str:
    with open(path, "wb") as f:
        f.write(data)
    return path


def member(name: str, array: np.ndarray) -> Entry:
    """An honest stored .npy member with a header from :func:`header_for` (the same in every era)."""
    return stored(name, header_for(array.dtype.str, array.shape) + np.ascontiguousarray(array).tobytes())


class Row(NamedTuple):
    id: str
    target: str  # "snapshot" (snapshot.load), "json" (snapshot.from_json) or "tape" (Tape.load)
    input: str  # what the file is, for the docs table
    check: str  # the limit or check that refuses it, for the docs table
    build: Callable[[str], Any]  # tmp dir -> path (snapshot, tape) or text (json)
    message: str
    limits: Any = None  # Limits(**limits) for this row; None: the defaults

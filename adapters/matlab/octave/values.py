"""MATLAB values <-> plain Python data, in the byte layout the Octave host reads and writes.

The layout (``envbridge_pack.m`` / ``envbridge_unpack.m`` on the Octave side): a uint8 class code,
a uint32 count of dimensions and the dimensions (at least two, MATLAB's), then the data in MATLAB's
column-major order: numeric elements raw; logical and char one byte each; a struct its uint32 field
count, each field name (uint32 length + bytes), then every element's fields in order; a cell every
element. All little-endian (the host runs on this machine).

What Python sees (the snapshot's plain data, and what ``workspace=`` values may be):

* a 1x1 double -> ``float``, a 1x1 logical -> ``bool``, a char row -> ``str``; other 1x1 classes
  -> the numpy scalar of that class (``np.int32(5)``, ``np.float32(0.5)``);
* any other numeric or logical array -> an ``ndarray`` of MATLAB's shape (at least 2-D);
* a 1x1 struct -> ``dict``; a 1xN cell -> ``list``; a 1xN struct array -> a list of dicts;
* anything of another shape (a char matrix, an MxN cell or struct array) -> ``{"@size": [M, N],
  "@char" | "@cell" | "@struct": ...}`` (field names cannot hold "@", so no struct reads so).

Back to MATLAB: ``float``/``int`` -> double, ``bool`` -> logical, ``str`` -> char row, ``None`` ->
``[]``, a 1-D array -> a column, a list or tuple -> a 1xN cell (a 1xN struct array when every item is
a dict with the same keys). Decoding checks every size against the bytes left before allocating.
"""

from __future__ import annotations

import struct
from typing import Any, List, Tuple

import numpy as np

from bridge.errors import ContractError, SpecError, error

__all__ = ["pack", "unpack", "CLASSES"]

CLASSES = (
    "double",
    "single",
    "logical",
    "char",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "struct",
    "cell",
)
_DTYPES = {
    0: np.dtype("<f8"),
    1: np.dtype("<f4"),
    4: np.dtype("i1"),
    5: np.dtype("u1"),
    6: np.dtype("<i2"),
    7: np.dtype("<u2"),
    8: np.dtype("<i4"),
    9: np.dtype("<u4"),
    10: np.dtype("<i8"),
    11: np.dtype("<u8"),
}
_CODE_OF = {dt.newbyteorder("="): code for code, dt in _DTYPES.items()}
_U32 = struct.Struct("<I")
_MAX_DEPTH = 64
_STRUCT, _CELL, _LOGICAL, _CHAR = 12, 13, 2, 3
_FIX = "Keep LoggedSignals and workspace values plain: numbers, logicals, char, structs and cells of them"


# -- Python -> bytes ---------------------------------------------------------------------------------
def pack(value: Any, subject: str = "value") -> bytes:
    """The bytes of ``value`` (plain data) as a MATLAB value; anything else is a SpecError naming the path."""
    parts: List[bytes] = []
    _pack(value, parts, subject, 0)
    return b"".join(parts)


def _head(parts: List[bytes], code: int, dims: Tuple[int, ...]) -> None:
    dims = tuple(dims) + (1,) * max(0, 2 - len(dims))
    parts.append(struct.pack(f"<BI{len(dims)}I", code, len(dims), *dims))


def _pack(value: Any, parts: List[bytes], path: str, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise error(SpecError, path, f"nest at most {_MAX_DEPTH} levels", "deeper", _FIX)
    if value is None:
        _head(parts, 0, (0, 0))
    elif value is True or value is False or isinstance(value, np.bool_):
        _head(parts, _LOGICAL, (1, 1))
        parts.append(b"\x01" if value else b"\x00")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _head(parts, 0, (1, 1))
        parts.append(struct.pack("<d", float(value)))
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _head(parts, _CHAR, (1 if data else 0, len(data)))
        parts.append(data)
    elif isinstance(value, (np.ndarray, np.generic)):
        _pack_array(np.asarray(value), parts, path)
    elif isinstance(value, dict):
        _pack_dict(value, parts, path, depth)
    elif isinstance(value, (list, tuple)):
        items = list(value)
        keys = list(items[0]) if items and isinstance(items[0], dict) else None
        if keys is not None and all(isinstance(v, dict) and list(v) == keys for v in items):
            _pack_structs(items, (1, len(items)), parts, path, depth)
        else:
            _head(parts, _CELL, (1 if items else 0, len(items)))
            for i, item in enumerate(items):
                _pack(item, parts, f"{path}{{{i + 1}}}", depth + 1)
    else:
        raise error(SpecError, path, "be plain data to reach Octave", type(value).__name__, _FIX)


def _pack_array(arr: np.ndarray, parts: List[bytes], path: str) -> None:
    dims = arr.shape if arr.ndim != 1 else (arr.shape[0], 1)  # a 1-D array is a column, as Dimension n is [n 1]
    if arr.dtype.kind == "b":
        _head(parts, _LOGICAL, dims)
        parts.append(arr.astype(np.uint8).tobytes(order="F"))
        return
    code = _CODE_OF.get(arr.dtype.newbyteorder("=")) if arr.dtype.kind in "iuf" else None
    if code is None:
        raise error(SpecError, path, "be a real numeric or logical array to reach Octave", f"dtype {arr.dtype}", _FIX)
    _head(parts, code, dims)
    parts.append(arr.astype(_DTYPES[code], copy=False).tobytes(order="F"))


def _pack_dict(value: dict, parts: List[bytes], path: str, depth: int) -> None:
    if "@size" in value:
        size = tuple(int(d) for d in value["@size"])
        if "@char" in value:
            data = np.frombuffer(value["@char"].encode("utf-8"), np.uint8).reshape(size, order="F")
            _head(parts, _CHAR, size)
            parts.append(data.tobytes(order="F"))
        elif "@cell" in value:
            _head(parts, _CELL, size)
            for i, item in enumerate(value["@cell"]):
                _pack(item, parts, f"{path}{{{i + 1}}}", depth + 1)
        else:
            _pack_structs(list(value["@struct"]), size, parts, path, depth)
        return
    _pack_structs([value], (1, 1), parts, path, depth)


def _pack_structs(items: List[dict], size: Tuple[int, ...], parts: List[bytes], path: str, depth: int) -> None:
    keys = list(items[0]) if items else []
    bad = [k for k in keys if not (isinstance(k, str) and k.isidentifier() and k.isascii())]
    if bad:
        raise error(SpecError, f"{path} field names", "be MATLAB identifiers", repr(bad[0]), _FIX)
    _head(parts, _STRUCT, size)
    parts.append(_U32.pack(len(keys)))
    for key in keys:
        parts.append(_U32.pack(len(key)) + key.encode("ascii"))
    for i, item in enumerate(items):
        where = path if len(items) == 1 else f"{path}({i + 1})"
        for key in keys:
            _pack(item[key], parts, f"{where}.{key}", depth + 1)


# -- bytes -> Python ---------------------------------------------------------------------------------
def unpack(data: bytes, subject: str = "Octave value") -> Any:
    """The plain data of one packed value that fills ``data`` exactly (checked before every allocation)."""
    reader = _Reader(memoryview(data), subject)
    value = reader.value(0)
    if reader.at != len(data):
        reader.refuse(f"end after its value ({reader.at:,} bytes)", f"{len(data) - reader.at:,} bytes more")
    return value


class _Reader:
    def __init__(self, data: memoryview, subject: str) -> None:
        self.data, self.at, self.subject = data, 0, subject

    def refuse(self, expectation: str, got: str) -> None:
        raise error(ContractError, self.subject, expectation, got, "Check that the Octave host is envbridge's own")

    def take(self, count: int) -> memoryview:
        if count > len(self.data) - self.at:
            self.refuse(f"hold {count:,} more bytes", f"{len(self.data) - self.at:,} bytes left")
        chunk = self.data[self.at : self.at + count]
        self.at += count
        return chunk

    def u32(self) -> int:
        return _U32.unpack(self.take(4))[0]

    def value(self, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            self.refuse(f"nest at most {_MAX_DEPTH} levels", "deeper")
        code = self.take(1)[0]
        nd = self.u32()
        if code > _CELL or not 2 <= nd <= 32:
            self.refuse("start with a class code and 2..32 dimensions", f"class {code}, {nd} dimensions")
        dims = tuple(self.u32() for _ in range(nd))
        count = 1
        for d in dims:
            count *= d
        if count > len(self.data) - self.at:  # every element takes at least one byte
            self.refuse(f"hold {count:,} elements", f"{len(self.data) - self.at:,} bytes left")
        while len(dims) > 2 and dims[-1] == 1:
            dims = dims[:-1]
        if code == _STRUCT:
            return self.structs(dims, count, depth)
        if code == _CELL:
            items = [self.value(depth + 1) for _ in range(count)]
            return items if _row(dims) else {"@size": list(dims), "@cell": items}
        if code == _CHAR:
            raw = bytes(self.take(count))
            if _row(dims):
                return raw.decode("utf-8", "replace")
            text = np.frombuffer(raw, np.uint8).reshape(dims, order="F").tobytes(order="F")
            return {"@size": list(dims), "@char": text.decode("utf-8", "replace")}
        dtype = np.dtype(np.bool_) if code == _LOGICAL else _DTYPES[code]
        raw = self.take(count * dtype.itemsize)
        arr = np.frombuffer(raw, dtype).reshape(dims, order="F").astype(dtype.newbyteorder("="))
        if count == 1 and dims == (1, 1):
            scalar = arr.reshape(())[()]
            return float(scalar) if code == 0 else bool(scalar) if code == _LOGICAL else scalar
        return arr

    def structs(self, dims: Tuple[int, ...], count: int, depth: int) -> Any:
        keys = []
        for _ in range(self.u32()):
            length = self.u32()
            keys.append(bytes(self.take(length)).decode("utf-8", "replace"))
        items = [{k: self.value(depth + 1) for k in keys} for _ in range(count)]
        if dims == (1, 1):
            return items[0]
        return items if _row(dims) and count > 1 else {"@size": list(dims), "@struct": items}


def _row(dims: Tuple[int, ...]) -> bool:
    """A 1xN (N >= 1) or 0x0 value: what a list or str stands for."""
    return dims == (0, 0) or (len(dims) == 2 and dims[0] == 1 and dims[1] >= 1)

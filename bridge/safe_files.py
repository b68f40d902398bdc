"""The one pickle-free file format of snapshots and tapes, and its loader for files from strangers.

A container is an ``.npz``: a zip whose members are ``<name>.npy`` arrays of plain dtypes (numbers,
bools, fixed-width strings), so ``numpy.load(..., allow_pickle=False)`` reads it too. JSON rides
along as one string member (snapshots) or as a file next to it (tape manifests).

The loader trusts nothing it has not sized. Before a byte is decompressed it checks the file size,
the zip's end record (member count, directory size) and what the central directory declares per
member and in total; it then parses each ``.npy`` header itself (``numpy.lib.format``), with a
bounded read, and checks dtype, string widths and ``shape x itemsize`` against :class:`Limits`
and against the sizes the archive declares; only then does it allocate and stream each member in
chunks, never past its declared size. Every failure is one :class:`~bridge.errors.ContractError`
in the house format naming the real cause (an empty file, a plain ``.npy``, a truncated zip, a
member too large, a truncated member, a damaged checksum, ...). JSON: :mod:`bridge.safe_json`.
"""

from __future__ import annotations

import io
import math
import os
import struct
import zlib
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from numpy.lib import format as npy_format

from bridge.errors import ContractError, SpecError, message
from bridge.regular_file import Refusal as _Refusal
from bridge.regular_file import opened as _opened

if TYPE_CHECKING:
    import zipfile  # imported where used: it costs `import bridge` about 7 ms

__all__ = ["Limits", "LIMITS", "Member", "write_npz", "check_save_path", "read_npz", "sha256_file"]

_MAX_HEADER = 10_000  # bytes of a .npy header dict; numpy's own default limit
_CHUNK = 1 << 20
_MAX_NDIM = 32
_STORED, _DEFLATED = 0, 8  # zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED
_KIND_NAMES = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex", "U": "str", "S": "bytes"}


class Limits:
    """What a file may declare before the loader refuses it (all checked before allocating).

    Args:
        max_file_bytes: the file on disk.
        max_members: members of the archive.
        max_member_bytes: one member's array data (``prod(shape) * itemsize``).
        max_total_bytes: all members together, as the archive declares them.
        max_string_chars: characters of one element of a string array.
        max_json_bytes: characters of a JSON text (a manifest, a snapshot's tree).
        max_json_depth: nesting of a JSON text (parsed without recursion up to this depth).
        max_json_containers: lists and dicts of a JSON text (what it expands to once parsed:
            an empty dict is ~100 bytes of memory for 3 characters of text).
        max_json_values: values of a JSON text (containers, numbers, strings, ...).
        max_directory_bytes: the zip's central directory.
    """

    def __init__(
        self,
        *,
        max_file_bytes: int = 2**30,
        max_members: int = 10_000,
        max_member_bytes: int = 512 * 2**20,
        max_total_bytes: int = 2**30,
        max_string_chars: int = 1_000_000,
        max_json_bytes: int = 64 * 2**20,
        max_json_depth: int = 1024,
        max_json_containers: int = 2**20,
        max_json_values: int = 2**23,
        max_directory_bytes: int = 16 * 2**20,
    ) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_members = max_members
        self.max_member_bytes = max_member_bytes
        self.max_total_bytes = max_total_bytes
        self.max_string_chars = max_string_chars
        self.max_json_bytes = max_json_bytes
        self.max_json_depth = max_json_depth
        self.max_json_containers = max_json_containers
        self.max_json_values = max_json_values
        self.max_directory_bytes = max_directory_bytes


LIMITS = Limits()


class Member:
    """One member as its ``.npy`` header declares it (nothing of its data read yet)."""

    __slots__ = ("name", "dtype", "shape", "fortran", "offset", "nbytes")

    def __init__(self, name: str, dtype: np.dtype, shape: Tuple[int, ...], fortran: bool, offset: int) -> None:
        self.name, self.dtype, self.shape, self.fortran, self.offset = name, dtype, shape, fortran, offset
        self.nbytes = math.prod(shape) * dtype.itemsize


# -- writing -------------------------------------------------------------------------------------
def write_npz(path: str, arrays: Dict[str, np.ndarray], *, compress: bool, subject: str = "save path") -> None:
    """Write ``arrays`` as ``<name>.npy`` members, atomically (a temporary file, then a rename).

    Timestamps are fixed, so equal arrays give equal bytes (and equal sha256). Object arrays are
    refused by numpy (``allow_pickle=False``); callers check dtypes first for a better message.
    A ``path`` that is a folder, or inside a folder that does not exist, is a SpecError naming it
    (``subject``) before anything is written.
    """
    import zipfile

    check_save_path(path, subject)

    method = _DEFLATED if compress else _STORED
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with zipfile.ZipFile(temporary, "w", compression=method) as archive:
            for name, array in arrays.items():
                info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type, info.external_attr = method, 0o644 << 16
                with archive.open(info, "w", force_zip64=array.nbytes > 2**30) as out:
                    npy_format.write_array(out, np.asanyarray(array), allow_pickle=False)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def check_save_path(path: Any, subject: str) -> None:
    """A SpecError unless ``path`` names a file (new or not) inside an existing folder."""
    if not isinstance(path, (str, os.PathLike)):
        raise SpecError(
            message(subject, "be a file path (str or os.PathLike)", repr(path)[:80], "Pass e.g. 'state.npz'")
        )
    path = os.fspath(path)
    if os.path.isdir(path):
        fix = f"Pass a file path inside it, e.g. {os.path.join(path, 'state.npz')!r}"
        raise SpecError(message(subject, "name a file", f"{path!r} (a folder)", fix))
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        what = "a file" if os.path.exists(folder) else "no such folder"
        fix = f"Create the folder first: os.makedirs({folder!r}, exist_ok=True)"
        raise SpecError(message(subject, "be inside an existing folder", f"{path!r} ({folder!r} is {what})", fix))


# -- reading -------------------------------------------------------------------------------------
def read_npz(
    path: str,
    *,
    subject: str,
    fix: str,
    limits: Limits = LIMITS,
    kinds: str = "biuf",
    long_text: Iterable[str] = (),
    expect: Optional[Callable[[Dict[str, Member]], None]] = None,
) -> Dict[str, np.ndarray]:
    """The arrays of a file written by :func:`write_npz` (or ``np.savez``), by member name.

    Args:
        subject: how messages name the file (``"tape walk.npz"``).
        fix: the last sentence of every message.
        kinds: the dtype kinds allowed (``"biuf"``: numbers and bools; add ``"cUS"`` as needed).
        long_text: members that may hold one string up to ``limits.max_json_bytes`` characters.
        expect: called with every member's declared :class:`Member` before any data is read; it
            raises (a ContractError) to refuse names, dtypes or shapes the caller does not expect.
    """
    import zipfile

    refuse = _Refusal(subject, fix)
    with _opened(path, refuse) as (raw, size):
        head = raw.read(8)
        if size == 0:
            raise refuse("be an .npz archive", "an empty file (0 bytes)")
        if head.startswith(b"\x93NUMPY"):
            raise refuse("be an .npz archive", "a plain .npy file (np.save output)")
        if not head.startswith(b"PK"):
            raise refuse("be an .npz archive (a zip file)", f"a file that starts with {head!r}")
        if size > limits.max_file_bytes:
            raise refuse(f"be at most {limits.max_file_bytes:,} bytes (Limits.max_file_bytes)", f"{size:,} bytes")
        _check_end_record(raw, size, limits, refuse)
        try:
            archive = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error, NotImplementedError) as e:
            raise refuse("be a readable zip archive", f"a damaged zip ({type(e).__name__}: {e})") from e
        with archive:
            infos = _check_directory(archive.infolist(), limits, refuse)
            long = set(long_text)
            members = {
                stem: _header(archive, info, stem, limits, kinds, stem in long, refuse) for stem, info in infos.items()
            }
            if expect is not None:
                expect(members)
            return {stem: _data(archive, infos[stem], member, refuse) for stem, member in members.items()}


def _check_end_record(raw: Any, size: int, limits: Limits, refuse: _Refusal) -> None:
    """Member count and directory size from the zip's end record, before zipfile builds anything."""
    tail_size = min(size, 22 + 65535)
    raw.seek(size - tail_size)
    tail = raw.read(tail_size)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise refuse("be a complete zip archive", "a truncated or damaged zip (no end-of-archive record)")
    _, _, _, _, entries, directory, offset, _ = struct.unpack("<4s4H2LH", tail[at : at + 22])
    if entries == 0xFFFF or directory == 0xFFFFFFFF or offset == 0xFFFFFFFF:  # zip64: the real record
        locator = tail[at - 20 : at] if at >= 20 else b""
        if not locator.startswith(b"PK\x06\x07"):
            raise refuse("be a complete zip archive", "a truncated or damaged zip (no zip64 end record)")
        raw.seek(struct.unpack("<4sLQL", locator)[2])
        record = raw.read(56)
        if len(record) < 56 or not record.startswith(b"PK\x06\x06"):
            raise refuse("be a complete zip archive", "a truncated or damaged zip (no zip64 end record)")
        entries, directory = struct.unpack("<4sQ2H2L4Q", record)[7:9]
    if entries > limits.max_members:
        raise refuse(f"hold at most {limits.max_members:,} members (Limits.max_members)", f"{entries:,} members")
    if directory > limits.max_directory_bytes:
        expectation = (
            f"have a zip directory of at most {limits.max_directory_bytes:,} bytes (Limits.max_directory_bytes)"
        )
        raise refuse(expectation, f"{directory:,} bytes")
    raw.seek(0)


def _check_directory(infos: List[zipfile.ZipInfo], limits: Limits, refuse: _Refusal) -> Dict[str, zipfile.ZipInfo]:
    """Names, flags and declared sizes from the central directory alone (nothing decompressed)."""
    if len(infos) > limits.max_members:
        raise refuse(f"hold at most {limits.max_members:,} members (Limits.max_members)", f"{len(infos):,} members")
    out: Dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        if not name.endswith(".npy"):
            raise refuse("hold only .npy members", f"a member {name!r}")
        if name[:-4] in out:
            raise refuse("name each member once", f"{name!r} twice")
        if info.flag_bits & 0x1:
            raise refuse("not be encrypted", "an encrypted member", name)
        if info.compress_type not in (_STORED, _DEFLATED):
            raise refuse("be stored or deflated", f"compression method {info.compress_type}", name)
        if info.file_size > limits.max_member_bytes + _MAX_HEADER + 12:
            expectation = f"hold at most {limits.max_member_bytes:,} bytes (Limits.max_member_bytes)"
            raise refuse(expectation, f"{info.file_size:,} bytes declared by the archive", name)
        out[name[:-4]] = info
    total = sum(info.file_size for info in infos)
    if total > limits.max_total_bytes:
        expectation = f"unpack to at most {limits.max_total_bytes:,} bytes (Limits.max_total_bytes)"
        raise refuse(expectation, f"{total:,} bytes declared by its members")
    return out


class _zip_errors:
    """What zipfile / zlib raise while a member is read, as the house error naming that member."""

    def __init__(self, refuse: _Refusal, name: str) -> None:
        self.refuse, self.name = refuse, name
        self.stream: Any = None  # the open member, once there is one

    def __enter__(self) -> _zip_errors:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        import zipfile

        if kind is None or issubclass(kind, ContractError):
            return
        short = getattr(self.stream, "_left", 0) > 0  # zipfile's count of declared bytes not yet seen
        if issubclass(kind, EOFError) or (issubclass(kind, zipfile.BadZipFile) and short):
            got = "a truncated member (its data ends before the size the archive declares)"
            raise self.refuse("be complete", got, self.name) from error
        if issubclass(kind, zipfile.BadZipFile):
            raise self.refuse("be undamaged", f"a damaged member ({error})", self.name) from error
        if issubclass(kind, zlib.error):
            raise self.refuse("be undamaged", f"damaged deflate data ({error})", self.name) from error
        if issubclass(kind, (OSError, ValueError, struct.error, NotImplementedError, RuntimeError)):
            raise self.refuse("be readable", f"{kind.__name__}: {error}", self.name) from error


def _read_exactly(stream: Any, count: int, refuse: _Refusal, name: str, what: str) -> bytes:
    data = stream.read(count)
    if len(data) < count:
        raise refuse(f"hold a complete {what}", f"{len(data)} of its {count} bytes (truncated)", name)
    return data


def _header(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, stem: str, limits: Limits, kinds: str, long: bool, refuse: _Refusal
) -> Member:
    """Parse one member's .npy header with a bounded read, and size it against the limits."""
    name = info.filename
    with _zip_errors(refuse, name) as errors, archive.open(info) as stream:
        errors.stream = stream
        prefix = stream.read(8)
        if not prefix.startswith(b"\x93NUMPY") or len(prefix) < 8:
            raise refuse("be a .npy array", f"{info.file_size:,} bytes that start with {prefix!r}", name)
        version = npy_format.read_magic(io.BytesIO(prefix))
        if version not in ((1, 0), (2, 0)):
            raise refuse("be a .npy array of format 1.0 or 2.0", f"format {version[0]}.{version[1]}", name)
        width = 2 if version == (1, 0) else 4
        length_bytes = _read_exactly(stream, width, refuse, name, ".npy header")
        length = struct.unpack("<H" if width == 2 else "<I", length_bytes)[0]
        if length > _MAX_HEADER:
            raise refuse(f"have a .npy header of at most {_MAX_HEADER:,} bytes", f"{length:,} bytes", name)
        text = _read_exactly(stream, length, refuse, name, ".npy header")
    reader = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
    try:
        shape, fortran, dtype = reader(io.BytesIO(length_bytes + text))
    except Exception as e:  # numpy's parser on untrusted text: ValueError, SyntaxError, tokenize.TokenError, ...
        raise refuse("have a valid .npy header", f"{type(e).__name__}: {e}", name) from e
    chars = (
        (limits.max_json_bytes, "Limits.max_json_bytes")
        if long
        else (limits.max_string_chars, "Limits.max_string_chars")
    )
    _check_dtype(dtype, kinds, chars, refuse, name)
    if not (len(shape) <= _MAX_NDIM and all(type(d) is int and d >= 0 for d in shape)):
        raise refuse(f"have a shape of at most {_MAX_NDIM} non-negative ints", repr(shape), name)
    member = Member(stem, dtype, shape, bool(fortran), 8 + width + length)
    if member.nbytes > limits.max_member_bytes:
        got = f"{dtype.str} of shape {shape}: {member.nbytes:,} bytes"
        raise refuse(f"hold at most {limits.max_member_bytes:,} bytes (Limits.max_member_bytes)", got, name)
    declared = member.offset + member.nbytes
    if info.file_size != declared:  # the archive and the header disagree: refuse before reading
        want = f"hold {member.nbytes:,} bytes of {dtype.str} data (shape {shape})"
        if info.file_size < declared:
            raise refuse(want, f"{max(info.file_size - member.offset, 0):,} bytes (truncated)", name)
        raise refuse(want, f"{info.file_size - declared:,} bytes more than its header declares", name)
    return member


def _check_dtype(dtype: np.dtype, kinds: str, chars: Tuple[int, str], refuse: _Refusal, name: str) -> None:
    if dtype.hasobject:
        raise refuse("hold a plain array (no pickled objects)", f"dtype {dtype}", name)
    if dtype.kind not in kinds or dtype.fields is not None or dtype.subdtype is not None:
        allowed = ", ".join(_KIND_NAMES[k] for k in kinds)
        raise refuse(f"have a plain dtype ({allowed})", f"dtype {dtype}", name)
    if dtype.itemsize == 0:
        raise refuse("have a dtype of non-zero size", f"dtype {dtype.str}", name)
    width = dtype.itemsize // 4 if dtype.kind == "U" else dtype.itemsize
    if dtype.kind in "US" and width > chars[0]:
        raise refuse(f"have strings of at most {chars[0]:,} characters ({chars[1]})", f"dtype {dtype.str}", name)


def _data(archive: zipfile.ZipFile, info: zipfile.ZipInfo, member: Member, refuse: _Refusal) -> np.ndarray:
    """Stream one member's data into a buffer of its declared size, in chunks, and no further."""
    name = info.filename
    buffer = bytearray(member.nbytes)
    view, got = memoryview(buffer), 0
    with _zip_errors(refuse, name) as errors, archive.open(info) as stream:
        errors.stream = stream
        stream.read(member.offset)
        while got < member.nbytes:
            chunk = stream.read(min(_CHUNK, member.nbytes - got))
            if not chunk:
                break
            view[got : got + len(chunk)] = chunk
            got += len(chunk)
        if got < member.nbytes:
            want = f"hold {member.nbytes:,} bytes of {member.dtype.str} data (shape {member.shape})"
            raise refuse(want, f"{got:,} bytes (truncated)", name)
        if stream.read(1):  # at the end: zipfile checks the CRC here
            raise refuse("end after its data", "more bytes than its header declares", name)
    flat = np.frombuffer(buffer, dtype=member.dtype)
    return flat.reshape(member.shape[::-1]).transpose() if member.fortran else flat.reshape(member.shape)


# -- hashes --------------------------------------------------------------------------------------
def sha256_file(path: str, subject: str, fix: str) -> str:
    """The file's sha256, read in chunks (never the whole file at once)."""
    import hashlib

    digest = hashlib.sha256()
    with _opened(path, _Refusal(subject, fix)) as (raw, _):
        for chunk in iter(lambda: raw.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()

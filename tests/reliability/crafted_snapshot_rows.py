"""The crafted-file table, snapshot rows: the container's own refusals (through ``snapshot.load``)
and the JSON snapshot's (``snapshot.from_json``). Tape rows: crafted_tape_rows.py."""

from __future__ import annotations

import functools
import os
from typing import Any, Callable

import numpy as np
from crafted import MIB, Entry, Row, bomb_entry, deflated, header_for, member, npy, npy_header, stored, write, zip_bytes

S, FIX_S = "snapshot file", "Recreate it with bridge.snapshot.save."
J, FIX_J = "snapshot JSON", "Recreate it with bridge.snapshot.to_json."

# -- building blocks -----------------------------------------------------------------------------
TREE = member("tree.npy", np.array('{"x": {"__ndarray__": 0}}'))
A0 = member("a0.npy", np.arange(3.0))
GOOD = zip_bytes([TREE, A0])


@functools.cache
def bomb(name: str) -> bytes:
    """2 GiB of .npy (a uint8 array of zeros) in about 2 MB of zip."""
    return zip_bytes([bomb_entry(name, 2**31)])


def snap(data: bytes) -> Callable[[str], str]:
    return lambda tmp: write(os.path.join(tmp, "snap.npz"), data)


def snap_members(*entries: Entry, **lies: Any) -> Callable[[str], str]:
    return lambda tmp: write(os.path.join(tmp, "snap.npz"), zip_bytes(list(entries), **lies))


def truncated_deflate() -> Entry:
    payload = header_for("<f8", (500,)) + np.random.default_rng(0).bytes(4000)
    whole = deflated("a0.npy", payload)
    return whole._replace(data=whole.data[: len(whole.data) // 2])


DEEP = "[" * 100_000 + "]" * 100_000
OVERLAP = bomb_entry("a0.npy", 100 * MIB)
NOT_ZIP = b"hello, world"


SNAPSHOT_ROWS = [
    Row(
        "s-empty",
        "snapshot",
        "an empty file",
        "file size",
        snap(b""),
        f"{S} must be an .npz archive, got an empty file (0 bytes). {FIX_S}",
    ),
    Row(
        "s-plain-npy",
        "snapshot",
        "a plain .npy (np.save)",
        "magic bytes",
        snap(npy(np.zeros(3))),
        f"{S} must be an .npz archive, got a plain .npy file (np.save output). {FIX_S}",
    ),
    Row(
        "s-not-zip",
        "snapshot",
        "text",
        "magic bytes",
        snap(NOT_ZIP),
        f"{S} must be an .npz archive (a zip file), got a file that starts with b'hello, w'. {FIX_S}",
    ),
    Row(
        "s-missing",
        "snapshot",
        "no file",
        "open",
        lambda tmp: os.path.join(tmp, "none.npz"),
        f"{S} must be a readable file, got FileNotFoundError (No such file or directory). {FIX_S}",
    ),
    Row(
        "s-truncated-zip",
        "snapshot",
        "a snapshot cut in half",
        "zip end record",
        snap(GOOD[: len(GOOD) // 2]),
        f"{S} must be a complete zip archive, got a truncated or damaged zip (no end-of-archive record). {FIX_S}",
    ),
    Row(
        "s-file-size",
        "snapshot",
        "a file past max_file_bytes (limit lowered to 100)",
        "Limits.max_file_bytes",
        snap(GOOD),
        f"{S} must be at most 100 bytes (Limits.max_file_bytes), got {len(GOOD):,} bytes. {FIX_S}",
        {"max_file_bytes": 100},
    ),
    Row(
        "s-member-count",
        "snapshot",
        "an end record declaring 20,000 members",
        "Limits.max_members (before zipfile reads the directory)",
        snap_members(TREE, A0, count=20_000),
        f"{S} must hold at most 10,000 members (Limits.max_members), got 20,000 members. {FIX_S}",
    ),
    Row(
        "s-directory-size",
        "snapshot",
        "an end record declaring a 32 MiB directory",
        "Limits.max_directory_bytes",
        snap_members(TREE, A0, directory_size=32 * MIB),
        f"{S} must have a zip directory of at most 16,777,216 bytes (Limits.max_directory_bytes), got 33,554,432 bytes. {FIX_S}",
    ),
    Row(
        "s-not-npy-member",
        "snapshot",
        "a member named `tree` (no .npy)",
        "exact member names",
        snap_members(TREE._replace(name="tree"), A0),
        f"{S} must hold only .npy members, got a member 'tree'. {FIX_S}",
    ),
    Row(
        "s-duplicate-member",
        "snapshot",
        "`a0.npy` twice",
        "exact member names",
        snap_members(TREE, A0, A0),
        f"{S} must name each member once, got 'a0.npy' twice. {FIX_S}",
    ),
    Row(
        "s-encrypted",
        "snapshot",
        "an encrypted member",
        "zip flags",
        snap_members(TREE, A0._replace(flags=1)),
        f"{S} member 'a0.npy' must not be encrypted, got an encrypted member. {FIX_S}",
    ),
    Row(
        "s-bzip2",
        "snapshot",
        "a bzip2 member",
        "compression method",
        snap_members(TREE, A0._replace(method=12)),
        f"{S} member 'a0.npy' must be stored or deflated, got compression method 12. {FIX_S}",
    ),
    Row(
        "s-zip-bomb",
        "snapshot",
        "the 2 MB zip bomb: one member expanding to 2 GiB",
        "Limits.max_member_bytes, from the directory (nothing decompressed)",
        lambda tmp: write(os.path.join(tmp, "snap.npz"), bomb("a0.npy")),
        f"{S} member 'a0.npy' must hold at most 536,870,912 bytes (Limits.max_member_bytes), got 2,147,483,648 bytes declared by the archive. {FIX_S}",
    ),
    Row(
        "s-overlapping-bomb",
        "snapshot",
        "21 directory entries sharing one 100 MiB member",
        "Limits.max_total_bytes, from the directory",
        snap_members(OVERLAP, directory=[(OVERLAP._replace(name=f"a{i}.npy"), 0) for i in range(21)]),
        f"{S} must unpack to at most 1,073,741,824 bytes (Limits.max_total_bytes), got 2,202,009,600 bytes declared by its members. {FIX_S}",
    ),
    Row(
        "s-lying-directory",
        "snapshot",
        "a 2 GiB member the directory declares as 1,000 bytes",
        "Limits.max_member_bytes, from the .npy header",
        snap_members(bomb_entry("a0.npy", 2**31, declared=1000)),
        f"{S} member 'a0.npy' must hold at most 536,870,912 bytes (Limits.max_member_bytes), got |u1 of shape (2147483520,): 2,147,483,520 bytes. {FIX_S}",
    ),
    Row(
        "s-lying-directory-crc",
        "snapshot",
        "the same, with the CRC of the whole stream",
        "CRC at the declared end",
        snap_members(bomb_entry("a0.npy", 2**31, declared=1000, careful=False)),
        f"{S} member 'a0.npy' must be undamaged, got a damaged member (Bad CRC-32 for file 'a0.npy'). {FIX_S}",
    ),
    Row(
        "s-lying-header",
        "snapshot",
        "a 2 GiB stream whose .npy header declares 64 bytes",
        "header size == directory size",
        snap_members(bomb_entry("a0.npy", 2**31, declared=1128, header=header_for("|u1", (64,)))),
        f"{S} member 'a0.npy' must hold 64 bytes of |u1 data (shape (64,)), got 936 bytes more than its header declares. {FIX_S}",
    ),
    Row(
        "s-truncated-member",
        "snapshot",
        "a member with 40 of its 96 data bytes",
        "header size == directory size",
        snap_members(TREE, stored("a0.npy", header_for("<f8", (12,)) + bytes(40))),
        f"{S} member 'a0.npy' must hold 96 bytes of <f8 data (shape (12,)), got 40 bytes (truncated). {FIX_S}",
    ),
    Row(
        "s-truncated-deflate",
        "snapshot",
        "a deflate stream cut in half",
        "streamed read",
        snap_members(TREE, truncated_deflate()),
        f"{S} member 'a0.npy' must be complete, got a truncated member (its data ends before the size the archive declares). {FIX_S}",
    ),
    Row(
        "s-bad-crc",
        "snapshot",
        "a member whose CRC-32 does not match",
        "CRC at the end of the stream",
        snap_members(TREE, A0._replace(crc=A0.crc ^ 1)),
        f"{S} member 'a0.npy' must be undamaged, got a damaged member (Bad CRC-32 for file 'a0.npy'). {FIX_S}",
    ),
    Row(
        "s-not-npy-data",
        "snapshot",
        "a member that is not .npy",
        ".npy magic",
        snap_members(TREE, stored("a0.npy", b"not a numpy file")),
        f"{S} member 'a0.npy' must be a .npy array, got 16 bytes that start with b'not a nu'. {FIX_S}",
    ),
    Row(
        "s-npy-version",
        "snapshot",
        ".npy format 3.0",
        ".npy version",
        snap_members(TREE, stored("a0.npy", npy_header("{}", (3, 0)))),
        f"{S} member 'a0.npy' must be a .npy array of format 1.0 or 2.0, got format 3.0. {FIX_S}",
    ),
    Row(
        "s-npy-header-length",
        "snapshot",
        "a .npy header declaring 4 GiB",
        ".npy header length (10,000 bytes)",
        snap_members(TREE, stored("a0.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\xff")),
        f"{S} member 'a0.npy' must have a .npy header of at most 10,000 bytes, got 4,294,967,295 bytes. {FIX_S}",
    ),
    Row(
        "s-npy-header-text",
        "snapshot",
        "a .npy header that is a list",
        "numpy's header parser",
        snap_members(TREE, stored("a0.npy", npy_header("[1, 2]"))),
        f"{S} member 'a0.npy' must have a valid .npy header, got ValueError: Header is not a dictionary: [1, 2]. {FIX_S}",
    ),
    Row(
        "s-negative-shape",
        "snapshot",
        "shape (-3,)",
        "shape",
        snap_members(TREE, stored("a0.npy", header_for("<f8", (-3,)))),
        f"{S} member 'a0.npy' must have a shape of at most 32 non-negative ints, got (-3,). {FIX_S}",
    ),
    Row(
        "s-pickled",
        "snapshot",
        "an object (pickled) member",
        "dtype",
        snap_members(TREE, stored("a0.npy", header_for("|O", (1,)) + b"\x80\x04N.")),
        f"{S} member 'a0.npy' must hold a plain array (no pickled objects), got dtype object. {FIX_S}",
    ),
    Row(
        "s-structured",
        "snapshot",
        "a structured dtype",
        "dtype",
        snap_members(
            TREE,
            stored(
                "a0.npy", npy_header("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }") + bytes(8)
            ),
        ),
        f"{S} member 'a0.npy' must have a plain dtype (bool, int, uint, float, complex, str, bytes), got dtype [('a', '<f8')]. {FIX_S}",
    ),
    Row(
        "s-wide-string",
        "snapshot",
        "dtype <U100000000 (400 MB an element)",
        "Limits.max_string_chars",
        snap_members(TREE, stored("a0.npy", header_for("<U100000000", ()))),
        f"{S} member 'a0.npy' must have strings of at most 1,000,000 characters (Limits.max_string_chars), got dtype <U100000000. {FIX_S}",
    ),
    Row(
        "s-wide-tree",
        "snapshot",
        "a tree of dtype <U100000000",
        "Limits.max_json_bytes",
        snap_members(stored("tree.npy", header_for("<U100000000", ())), A0),
        f"{S} member 'tree.npy' must have strings of at most 67,108,864 characters (Limits.max_json_bytes), got dtype <U100000000. {FIX_S}",
    ),
    Row(
        "s-zero-width",
        "snapshot",
        "dtype <U0",
        "dtype",
        snap_members(TREE, stored("a0.npy", header_for("<U0", (5,)))),
        f"{S} member 'a0.npy' must have a dtype of non-zero size, got dtype <U0. {FIX_S}",
    ),
    Row(
        "s-deep-tree",
        "snapshot",
        "a tree nested 100,000 deep",
        "Limits.max_json_depth (measured without parsing)",
        snap_members(member("tree.npy", np.array(DEEP))),
        f"{S} tree must nest at most 1,024 levels (Limits.max_json_depth), got 100,000 levels. {FIX_S}",
    ),
    Row(
        "s-bad-marker",
        "snapshot",
        'a tree with `{"__tuple__": 5}`',
        "markers",
        snap_members(member("tree.npy", np.array('{"x": {"__tuple__": 5}}'))),
        f'{S} tree must use the markers snapshot files write, got {{"__tuple__": 5}}. {FIX_S}',
    ),
    Row(
        "j-wide-string",
        "json",
        "the 80-byte JSON declaring dtype `<U100000000`",
        "Limits.max_string_chars",
        lambda tmp: '{"x": {"__ndarray__": ["a"], "dtype": "<U100000000", "shape": [1]}}',
        f"{J} array dtype must have strings of at most 1,000,000 characters (Limits.max_string_chars), got <U100000000. {FIX_J}",
    ),
    Row(
        "j-huge-shape",
        "json",
        "shape [100000, 100000] of float64",
        "Limits.max_member_bytes",
        lambda tmp: '{"x": {"__ndarray__": [], "dtype": "<f8", "shape": [100000, 100000]}}',
        f"{J} array must hold at most 536,870,912 more bytes (Limits.max_member_bytes and .max_total_bytes), got <f8 of shape [100000, 100000]: 80,000,000,000 bytes. {FIX_J}",
    ),
    Row(
        "j-deep",
        "json",
        "JSON nested 100,000 deep",
        "Limits.max_json_depth",
        lambda tmp: DEEP,
        f"{J} must nest at most 1,024 levels (Limits.max_json_depth), got 100,000 levels. {FIX_J}",
    ),
    Row(  # within max_json_depth; the message's json.dumps of it recursed once a level (RecursionError)
        "j-deep-marker",
        "json",
        "a marker dict with a value 1,000 lists deep",
        "snapshot markers, then a JSON preview without recursion",
        lambda tmp: '{"__tuple__": 1, "x": ' + "[" * 1000 + "]" * 1000 + "}",
        f'{J} must use the markers snapshot files write, got {{"__tuple__": 1, "x": {"[" * 58}. {FIX_J}',
    ),
    Row(
        "j-not-json",
        "json",
        "Python repr instead of JSON",
        "parser",
        lambda tmp: "{'x': 1}",
        f"{J} must be JSON text, got \"{{'x': 1}}\". {FIX_J}",
    ),
    Row(
        "j-wrapping-int",
        "json",
        "-1 for a uint64 array",
        "value types and ranges",
        lambda tmp: '{"x": {"__ndarray__": [-1], "dtype": "<u8", "shape": [1]}}',
        f'{J} array must have values, a dtype and a matching shape, got {{"__ndarray__": [-1], "dtype": "<u8", "shape": [1]}}. {FIX_J}',
    ),
    Row(
        "j-cut-string",
        "json",
        '"abc" for a <U2 array',
        "value types and ranges",
        lambda tmp: '{"x": {"__ndarray__": ["abc"], "dtype": "<U2", "shape": [1]}}',
        f'{J} array must have values, a dtype and a matching shape, got {{"__ndarray__": ["abc"], "dtype": "<U2", "shape": [1]}}. {FIX_J}',
    ),
]

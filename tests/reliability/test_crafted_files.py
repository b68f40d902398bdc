"""Files from strangers, crafted at run time: every row is refused with ONE ContractError naming its
real cause (whole message), within the memory it may use, before anything is allocated for it.

The rows are the crafted-file table of docs/safe-files.md (a test checks the table lists each row
with its message). Each row runs under tracemalloc (numpy reports its allocations to it) and must
peak under 50 MB; the 2 MB zip bomb that expands to 2 GiB also runs in a child process under
RLIMIT_AS and RLIMIT_CPU, where its peak RSS growth must stay under 50 MB. Time: pytest-timeout.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from typing import Any, Callable, Dict, NamedTuple

import numpy as np
import pytest
from crafted import MIB, Entry, bomb_entry, deflated, header_for, member, npy, npy_header, stored, write, zip_bytes
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support import raises_exactly

from bridge import snapshot
from bridge.conformance import Tape, record
from bridge.errors import ContractError
from bridge.safe_files import Limits

pytestmark = pytest.mark.timeout(120)

S, FIX_S = "snapshot file", "Recreate it with bridge.snapshot.save."
J, FIX_J = "snapshot JSON", "Recreate it with bridge.snapshot.to_json."
T, FIX_T = "tape walk.npz", "Record the tape again with envbridge conform --record."
PEAK = 50 * MIB


class Row(NamedTuple):
    id: str
    target: str  # "snapshot" (snapshot.load), "json" (snapshot.from_json) or "tape" (Tape.load)
    input: str  # what the file is, for the docs table
    check: str  # the limit or check that refuses it, for the docs table
    build: Callable[[str], Any]  # tmp dir -> path (snapshot, tape) or text (json)
    message: str
    limits: Any = None  # Limits(**limits) for this row; None: the defaults


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


BASE = record("envbridge/GridWorld-v0", seed=0, steps=12)
ENTRIES, STEPS = len(BASE.entries), len(BASE.actions)


def _fix_hash(path: str) -> None:
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(path + ".json") as f:
        manifest = json.load(f)
    manifest["npz_sha256"] = digest  # a careful attacker fixes the hash
    with open(path + ".json", "w") as f:
        json.dump(manifest, f)


def tape_npz(data: Callable[[Dict[str, np.ndarray]], bytes]) -> Callable[[str], str]:
    """A recorded tape whose .npz is replaced by ``data(its arrays)``, the manifest's hash fixed."""

    def build(tmp: str) -> str:
        path = os.path.join(tmp, "walk.npz")
        BASE.save(path)
        with np.load(path, allow_pickle=False) as saved:
            arrays = {k: saved[k] for k in saved.files}
        write(path, data(arrays))
        _fix_hash(path)
        return path

    return build


def tape_members(**changes: Callable[[np.ndarray], np.ndarray]) -> Callable[[str], str]:
    """The tape's own members, some changed, written honestly (sizes, CRCs) and re-hashed."""

    def data(arrays: Dict[str, np.ndarray]) -> bytes:
        changed = {k: changes[k](v) if k in changes else v for k, v in arrays.items()}
        return zip_bytes([member(f"{k}.npy", v) for k, v in changed.items()])

    return tape_npz(data)


def _also_ended(flags: np.ndarray, index: int) -> np.ndarray:
    out = flags.copy()
    out[index] = True
    return out


def tape_manifest(raw: bytes) -> Callable[[str], str]:
    def build(tmp: str) -> str:
        path = os.path.join(tmp, "walk.npz")
        BASE.save(path)
        write(path + ".json", raw)
        return path

    return build


def tape_manifest_edit(**changes: Any) -> Callable[[str], str]:
    def build(tmp: str) -> str:
        path = os.path.join(tmp, "walk.npz")
        BASE.save(path)
        with open(path + ".json") as f:
            manifest = json.load(f)
        manifest.update(changes)
        write(path + ".json", json.dumps(manifest).encode())
        return path

    return build


def truncated_deflate() -> Entry:
    payload = header_for("<f8", (500,)) + np.random.default_rng(0).bytes(4000)
    whole = deflated("a0.npy", payload)
    return whole._replace(data=whole.data[: len(whole.data) // 2])


DEEP = "[" * 100_000 + "]" * 100_000
OVERLAP = bomb_entry("a0.npy", 100 * MIB)
NOT_ZIP = b"hello, world"

# -- the rows ------------------------------------------------------------------------------------
ROWS = [
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
    Row(
        "t-no-manifest",
        "tape",
        "a tape without its .json",
        "open",
        lambda tmp: (
            BASE.save(os.path.join(tmp, "walk.npz")),
            os.remove(os.path.join(tmp, "walk.npz.json")),
            os.path.join(tmp, "walk.npz"),
        )[2],
        f"tape manifest walk.npz.json must be a readable file, got FileNotFoundError (No such file or directory). {FIX_T}",
    ),
    Row(
        "t-deep-manifest",
        "tape",
        "a manifest nested 100,000 deep",
        "Limits.max_json_depth",
        tape_manifest(DEEP.encode()),
        f"tape manifest walk.npz.json must nest at most 1,024 levels (Limits.max_json_depth), got 100,000 levels. {FIX_T}",
    ),
    Row(
        "t-binary-manifest",
        "tape",
        "a manifest that is not UTF-8",
        "UTF-8",
        tape_manifest(b"\xff\xfe{}"),
        f"tape manifest walk.npz.json must be UTF-8 JSON text, got bytes that are not UTF-8 (invalid start byte at byte 0). {FIX_T}",
    ),
    Row(
        "t-empty-manifest",
        "tape",
        "an empty manifest",
        "parser",
        tape_manifest(b""),
        f"tape manifest walk.npz.json must be JSON text, got ''. {FIX_T}",
    ),
    Row(
        "t-format",
        "tape",
        "format envbridge-tape/9",
        "format",
        tape_manifest_edit(format="envbridge-tape/9"),
        f"tape manifest format must be one of ['envbridge-tape/1', 'envbridge-tape/2'], got 'envbridge-tape/9'. {FIX_T}",
    ),
    Row(
        "t-step-api",
        "tape",
        "another step API",
        "step API",
        tape_manifest_edit(step_api="gym-done-4-tuple"),
        f"tape manifest 'step_api' must be 'envbridge-step/1' (this envbridge's), got 'gym-done-4-tuple'. {FIX_T}",
    ),
    Row(
        "t-plain-npy",
        "tape",
        "a plain .npy (hash fixed)",
        "magic bytes",
        tape_npz(lambda a: npy(np.zeros(3))),
        f"{T} must be an .npz archive, got a plain .npy file (np.save output). {FIX_T}",
    ),
    Row(
        "t-empty-npz",
        "tape",
        "an empty .npz (hash fixed)",
        "file size",
        tape_npz(lambda a: b""),
        f"{T} must be an .npz archive, got an empty file (0 bytes). {FIX_T}",
    ),
    Row(
        "t-truncated-zip",
        "tape",
        "a tape cut in half (hash fixed)",
        "zip end record",
        tape_npz(lambda a: GOOD[: len(GOOD) // 2]),
        f"{T} must be a complete zip archive, got a truncated or damaged zip (no end-of-archive record). {FIX_T}",
    ),
    Row(
        "t-float-actions",
        "tape",
        "float actions for its Discrete(4) space",
        "members against the manifest",
        tape_members(act=lambda a: a.astype(np.float64)),
        f"{T} member 'act.npy' must be int64 of shape ({STEPS},), as its manifest declares, got float64 of shape ({STEPS},). {FIX_T}",
    ),
    Row(
        "t-short-member",
        "tape",
        "a reward member of 2 rows",
        "members against the manifest",
        tape_members(reward=lambda a: a[:2]),
        f"{T} member 'reward.npy' must be float64 of shape ({ENTRIES},), as its manifest declares, got float64 of shape (2,). {FIX_T}",
    ),
    Row(
        "t-truncated-member",
        "tape",
        "a reward member with 40 data bytes",
        "header size == directory size",
        tape_npz(lambda a: zip_bytes([stored("reward.npy", header_for("<f8", (ENTRIES,)) + bytes(40))])),
        f"{T} member 'reward.npy' must hold {8 * ENTRIES} bytes of <f8 data (shape ({ENTRIES},)), got 40 bytes (truncated). {FIX_T}",
    ),
    Row(
        "t-episode-ends",
        "tape",
        "an episode end the kinds do not follow",
        "episode structure",
        tape_members(terminated=lambda a: _also_ended(a, 2)),
        f"{T} must start with a reset and reset exactly after each episode end, got a step at entry 3 right after an episode end. {FIX_T}",
    ),
    Row(
        "t-zip-bomb",
        "tape",
        "the 2 MB zip bomb as a tape (hash fixed)",
        "Limits.max_member_bytes, from the directory",
        tape_npz(lambda a: bomb("obs.npy")),
        f"{T} member 'obs.npy' must hold at most 536,870,912 bytes (Limits.max_member_bytes), got 2,147,483,648 bytes declared by the archive. {FIX_T}",
    ),
]


def load(row: Row, tmp: str) -> Any:
    built = row.build(tmp)
    limits = Limits(**(row.limits or {}))
    if row.target == "json":
        return lambda: snapshot.from_json(built, limits=limits)
    if row.target == "tape":
        return lambda: Tape.load(built, limits=limits)
    return lambda: snapshot.load(built, limits=limits)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_a_crafted_file_is_refused_with_its_one_message_within_memory(row, tmp_path):
    call = load(row, str(tmp_path))
    tracemalloc.start()
    try:
        with raises_exactly(ContractError, row.message):
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK, f"{row.id}: peak {peak:,} bytes"


def test_the_builders_make_real_archives(tmp_path):
    # the refusals above mean something only if the same builders make files that load
    path = write(os.path.join(tmp_path, "ok.npz"), GOOD)
    assert np.array_equal(snapshot.load(path)["x"], np.arange(3.0))
    small = write(
        os.path.join(tmp_path, "zeros.npz"),
        zip_bytes([member("tree.npy", np.array('{"__ndarray__": 0}')), bomb_entry("a0.npy", 3 * MIB + 5)]),
    )
    zeros = snapshot.load(small)
    assert (
        zeros.dtype == np.uint8
        and zeros.size == 3 * MIB + 5 - len(header_for("|u1", (3 * MIB + 5,)))
        and not zeros.any()
    )
    assert np.load(small)["a0"].shape == zeros.shape  # numpy reads the same archive
    again = Tape.load(tape_members()(str(tmp_path)))
    assert [int(a) for a in again.actions] == [int(a) for a in BASE.actions]


def test_the_docs_table_lists_every_row_with_its_whole_message():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "safe-files.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    table = {line.split("|")[1].strip(" `"): line for line in lines if line.startswith("| `")}
    missing = [r.id for r in ROWS if r.id not in table]
    assert not missing, f"docs/safe-files.md lacks rows {missing}"
    for r in ROWS:
        assert r.message.replace("|", "\\|") in table[r.id], f"docs/safe-files.md row {r.id} does not show its message"


CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import numpy
    from bridge import snapshot
    from bridge.conformance import Tape
    from bridge.errors import ContractError

    def vm_bytes():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))

    # a hard cap: the child cannot allocate the bomb even if the loader tried
    resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + 256 * 2**20, resource.RLIM_INFINITY))
    resource.setrlimit(resource.RLIMIT_CPU, (30, 60))
    out = []
    for kind, path in json.loads(sys.argv[1]):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        try:
            (Tape.load if kind == "tape" else snapshot.load)(path)
            message = "loaded"
        except ContractError as e:
            message = str(e)
        seconds = time.perf_counter() - start
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        out.append({"message": message, "grew_kib": grew, "seconds": seconds})
    print(json.dumps(out))
    """
)


def test_the_zip_bomb_is_refused_in_a_child_under_hard_memory_and_cpu_limits(tmp_path):
    rows = {r.id: r for r in ROWS}
    snap_path = rows["s-zip-bomb"].build(str(tmp_path))
    tape_dir = tmp_path / "tape"
    tape_dir.mkdir()
    tape_path = rows["t-zip-bomb"].build(str(tape_dir))
    assert 1.5 * MIB < os.path.getsize(snap_path) < 3 * MIB  # the "2 MB" bomb
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([["snapshot", snap_path], ["tape", tape_path]])],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [r["message"] for r in results] == [rows["s-zip-bomb"].message, rows["t-zip-bomb"].message]
    for r in results:
        assert r["grew_kib"] * 1024 < PEAK, r


if (
    __name__ == "__main__"
):  # print the docs table: PYTHONPATH=tests:tests/reliability python tests/reliability/test_crafted_files.py
    loaders = {"snapshot": "`snapshot.load`", "json": "`snapshot.from_json`", "tape": "`Tape.load`"}
    print("| row | loader | input | refused by | message |")
    print("|---|---|---|---|---|")
    for r in ROWS:
        cells = [f"`{r.id}`", loaders[r.target], r.input, r.check, r.message.replace("|", "\\|")]
        print("| " + " | ".join(cells) + " |")


# -- damaged at random: every outcome is a load or a ContractError (snapshot, tape, manifest, JSON) ---
DAMAGE = st.one_of(
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8)),
    st.tuples(st.just("cut"), st.integers(0, 10**6)),
    st.tuples(st.just("append"), st.binary(min_size=1, max_size=64)),
)


def _damaged(data: bytes, damage) -> bytes:
    kind, how = damage
    if kind == "cut":
        return data[: how % (len(data) + 1)]
    if kind == "append":
        return data + how
    out = bytearray(data)
    for at, byte in how:
        out[at % len(out)] = byte
    return bytes(out)


@functools.cache
def _clean_files() -> Dict[str, bytes]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        snap_path = os.path.join(tmp, "s.npz")
        snapshot.save(snap_path, {"pos": np.arange(6.0).reshape(2, 3), "t": (3, np.int64(4)), "name": "grid"})
        tape_path = os.path.join(tmp, "walk.npz")
        record("envbridge/MultiModal-v0", seed=0, steps=6).save(tape_path)
        state = {"pos": np.arange(6.0).reshape(2, 3), "t": (3, np.int64(4)), "name": "grid", "s": np.array(["ab"])}
        with open(snap_path, "rb") as a, open(tape_path, "rb") as b, open(tape_path + ".json", "rb") as c:
            return {
                "snapshot": a.read(),
                "tape": b.read(),
                "manifest": c.read(),
                "json": snapshot.to_json(state).encode(),
            }


@given(target=st.sampled_from(["snapshot", "tape", "manifest", "json"]), damage=DAMAGE)
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # examples: the profile
def test_a_file_damaged_at_random_loads_or_is_one_contract_error(tmp_path, target, damage):
    clean = _clean_files()
    snap_path, tape_path = os.path.join(tmp_path, "s.npz"), os.path.join(tmp_path, "walk.npz")
    write(snap_path, _damaged(clean["snapshot"], damage) if target == "snapshot" else clean["snapshot"])
    write(tape_path, _damaged(clean["tape"], damage) if target == "tape" else clean["tape"])
    write(tape_path + ".json", _damaged(clean["manifest"], damage) if target == "manifest" else clean["manifest"])
    if target == "tape":
        _fix_hash(tape_path)  # past the hash, into the container reader
    try:
        if target == "json":
            snapshot.from_json(_damaged(clean["json"], damage).decode("utf-8", "replace"))
        else:
            snapshot.load(snap_path) if target == "snapshot" else Tape.load(tape_path)
        event("loaded")
    except ContractError as e:
        text = str(e)
        assert " must " in text and ", got " in text and text.endswith("."), text
        event("refused")

"""Files from strangers, crafted at run time: every row is refused with ONE ContractError naming its
real cause (whole message), within the memory it may use, before anything is allocated for it.

The rows are the crafted-file table of docs/safe-files.md (a test checks the table lists each row
with its message). Each row runs under tracemalloc (numpy reports its allocations to it) and must
peak under 50 MB; the 2 MB zip bomb that expands to 2 GiB also runs in a child process under
RLIMIT_AS and RLIMIT_CPU, where its peak RSS growth must stay under 50 MB. Time: pytest-timeout.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from typing import Any, Dict

import numpy as np
import pytest
from crafted import MIB, Row, bomb_entry, header_for, member, write, zip_bytes
from crafted_snapshot_rows import GOOD, SNAPSHOT_ROWS
from crafted_tape_rows import BASE, TAPE_ROWS, _fix_hash, tape_members
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support import raises_exactly

from bridge import snapshot
from bridge.conformance import Tape, record
from bridge.errors import ContractError
from bridge.safe_files import Limits

pytestmark = pytest.mark.timeout(120)

PEAK = 50 * MIB
ROWS = SNAPSHOT_ROWS + TAPE_ROWS


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
        cwd=str(tape_dir),  # outside the checkout, whose bridge/ would shadow the installed package
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

"""The loader on the 2 MB zip bomb (one member expanding to 2 GiB), measured with /usr/bin/time -v.

python benchmarks/bench_safe_files.py

Builds the bomb (tests/reliability/crafted.py) as a snapshot file and as a tape (its manifest's
hash fixed), then runs, each in a fresh interpreter under ``/usr/bin/time -v``: the interpreter
importing bridge only (the baseline), ``snapshot.load`` on the bomb, ``Tape.load`` on the bomb
tape, and ``snapshot.load`` on the same stream with its size hidden from the zip directory. Prints maximum resident set size and wall time per run, and the load's own time measured
inside the child (import excluded).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reliability"))  # the bomb builder

from crafted import bomb_entry, write, zip_bytes  # noqa: E402

CHILD = """
import sys, time
from bridge import snapshot
from bridge.conformance import Tape
from bridge.errors import ContractError
kind, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if kind != "baseline":
    try:
        (Tape.load if kind == "tape" else snapshot.load)(path)
    except ContractError as e:
        print("refused:", e)
print(f"load seconds: {time.perf_counter() - start:.4f}")
"""


def _timed(kind: str, path: str) -> dict:
    done = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-c", CHILD, kind, path], capture_output=True, text=True, check=True
    )
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr).group(1)
    load = float(re.search(r"load seconds: (\S+)", done.stdout).group(1))
    refused = next((line for line in done.stdout.splitlines() if line.startswith("refused:")), "")
    return {"rss_mb": rss / 1024, "wall": wall, "load_s": load, "refused": refused}


def main() -> None:
    from bridge.conformance import record

    with tempfile.TemporaryDirectory() as tmp:
        snap = write(os.path.join(tmp, "bomb.npz"), zip_bytes([bomb_entry("a0.npy", 2**31)]))
        # the same stream, its size hidden from the directory: refused from the .npy header
        lying = write(os.path.join(tmp, "lying.npz"), zip_bytes([bomb_entry("a0.npy", 2**31, declared=1000)]))
        tape = os.path.join(tmp, "walk.npz")
        record("envbridge/GridWorld-v0", seed=0, steps=12).save(tape)
        write(tape, zip_bytes([bomb_entry("obs.npy", 2**31)]))
        with open(tape + ".json") as f:
            manifest = json.load(f)
        with open(tape, "rb") as f:
            manifest["npz_sha256"] = hashlib.sha256(f.read()).hexdigest()
        with open(tape + ".json", "w") as f:
            json.dump(manifest, f)
        print(f"bomb: {os.path.getsize(snap):,} bytes on disk, 2,147,483,648 bytes unpacked")
        print(f"{'run':<22} {'max RSS (MB)':>12} {'wall':>8} {'load (s)':>9}")
        runs = [("import bridge", "baseline", ""), ("snapshot.load", "snapshot", snap), ("Tape.load", "tape", tape)]
        runs.append(("snapshot.load (lying)", "snapshot", lying))
        for name, kind, path in runs:
            r = _timed(kind, path)
            print(f"{name:<22} {r['rss_mb']:>12.1f} {r['wall']:>8} {r['load_s']:>9.4f}")
            if r["refused"]:
                print(f"  {r['refused']}")


if __name__ == "__main__":
    main()

"""How often do two platforms round the same float computation differently? (docs/conformance.md)

Computes each expression below on the same 2,000 inputs (``np.random.default_rng(0)``, stable
across numpy versions) in this interpreter and on each other platform asked for: ``--other`` (the
other era's Python) and ``--kernel`` (this interpreter under another OpenBLAS kernel, selected with
``OPENBLAS_CORETYPE`` in a subprocess: another machine, emulated), and prints, per expression and
platform, how many of its results differ from this interpreter's and by how many ulps at most::

    python benchmarks/measure_cross_era_bits.py --other /path/to/python3.9-with-numpy-1.19.5 \
        --kernel Haswell --kernel Prescott

Only numpy and the standard library; nothing is asserted (the numbers depend on the CPU's SIMD
kernels and on the BLAS each numpy wheel ships).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

N = 2000
Q = np.array([[2.0, 0.3], [0.3, 1.5]])


def _per_input(f, rows):
    return np.array([f(r) for r in rows], dtype=np.float64)


def compute() -> dict:
    """Every expression on the same inputs: name -> float64 array of N results."""
    rng = np.random.default_rng(0)  # uniform draws: bit-stable across the eras (standard_normal is not)
    x = rng.uniform(-5.0, 5.0, (N, 2))
    y = rng.uniform(-5.0, 5.0, (N, 2))
    long_rows = rng.uniform(-1.0, 1.0, (N, 4096))
    angles = rng.uniform(-10.0, 10.0, N)
    mass = [np.array([[2.0, math.cos(a)], [math.cos(a), 1.0]]) for a in angles]
    return {
        "np.linalg.norm(x)": _per_input(np.linalg.norm, x),
        "math.hypot(x0, x1)": _per_input(lambda r: math.hypot(r[0], r[1]), x),
        "math.sqrt(x0*x0 + x1*x1)": _per_input(lambda r: math.sqrt(r[0] * r[0] + r[1] * r[1]), x),
        "x @ Q @ x (2x2)": _per_input(lambda r: r @ Q @ r, x),
        "x0*x0*q00 + ... (elementwise)": _per_input(
            lambda r: Q[0, 0] * r[0] * r[0] + (Q[0, 1] + Q[1, 0]) * r[0] * r[1] + Q[1, 1] * r[1] * r[1], x
        ),
        "x @ y (2-vectors)": np.array([a @ b for a, b in zip(x, y)]),
        "x0*y0 + x1*y1": np.array([a[0] * b[0] + a[1] * b[1] for a, b in zip(x, y)]),
        "np.sum(4,096 floats)": long_rows.sum(axis=1),
        "math.fsum(4,096 floats)": _per_input(math.fsum, long_rows),
        "np.exp(array)": np.exp(angles / 3.0),
        "math.exp(each)": _per_input(lambda v: math.exp(v / 3.0), angles),
        "np.sin(array)": np.sin(angles),
        "np.tanh(array)": np.tanh(angles / 3.0),
        "np.linalg.solve(2x2, b)": np.array([np.linalg.solve(m, r)[0] for m, r in zip(mass, x)]),
        # the draws themselves: N x 4,096 normals (the ziggurat's rare exp/log branch), N x 4,096 uniforms
        "default_rng(1).standard_normal": np.random.default_rng(1).standard_normal(N * 4096),
        "default_rng(1).uniform": np.random.default_rng(1).uniform(-1.0, 1.0, N * 4096),
    }


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ka, kb = (np.where(v.view(np.int64) < 0, np.int64(-(2**63)) - v.view(np.int64), v.view(np.int64)) for v in (a, b))
    return np.abs(ka - kb)


_WHERE = (
    "import sys, numpy; from bridge.conformance.machine import describe; d = describe(); "
    "print(f\"Python {sys.version.split()[0]}, numpy {numpy.__version__}, {d['blas']} {d['blas_kernel']}\")"
)


def _run(python: str, kernel: str, folder: str) -> tuple:
    """(where, results) of ``python`` under ``kernel`` ('' : the kernel OpenBLAS picks)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    path = os.path.join(folder, f"{len(os.listdir(folder))}.npz")
    subprocess.run([python, os.path.abspath(__file__), "--dump", path], check=True, env=env)
    where = subprocess.run([python, "-c", _WHERE], check=True, capture_output=True, text=True, env=env).stdout.strip()
    with np.load(path) as found:
        return where, {k: found[k] for k in found.files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", action="append", default=[], help="another era's python (with its numpy)")
    parser.add_argument("--kernel", action="append", default=[], help="an OpenBLAS kernel (OPENBLAS_CORETYPE)")
    parser.add_argument("--dump", help=argparse.SUPPRESS)  # the other interpreter's side
    args = parser.parse_args()
    if args.dump:
        np.savez(args.dump, **compute())
        return
    if not args.other and not args.kernel:
        parser.error("pass --other PYTHON (another era's interpreter) and/or --kernel NAME (an OpenBLAS kernel)")
    with tempfile.TemporaryDirectory() as folder:
        here = _run(sys.executable, "", folder)
        others = [_run(sys.executable, k, folder) for k in args.kernel]
        others += [_run(python, k, folder) for python in args.other for k in [""] + args.kernel]
    print(f"here: {here[0]}; {N:,} inputs each; a cell: results that differ from here (max ulps)")
    for i, (where, _) in enumerate(others):
        print(f"  [{i + 1}] {where}")
    print("| expression | " + " | ".join(f"[{i + 1}]" for i in range(len(others))) + " |")
    print("|---|" + "---:|" * len(others))
    for name, mine in here[1].items():
        cells = []
        for _, theirs in others:
            distance = _ulps(mine, theirs[name])
            cells.append(f"{int((distance > 0).sum()):,} ({int(distance.max()):,})")
        print(f"| `{name}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

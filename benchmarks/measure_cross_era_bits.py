"""How often do the two eras round the same float computation differently? (docs/conformance.md)

Computes each expression below on the same 2,000 inputs (``np.random.default_rng(0)``, stable
across numpy versions) in this interpreter and in ``--other`` (the other era's Python), and prints,
per expression, how many of its results differ between the two and by how many ulps at most::

    python benchmarks/measure_cross_era_bits.py --other /path/to/python3.9-with-numpy-1.19.5

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", help="the other era's python (with its numpy)")
    parser.add_argument("--dump", help=argparse.SUPPRESS)  # the other interpreter's side
    args = parser.parse_args()
    if args.dump:
        np.savez(args.dump, **compute())
        return
    if not args.other:
        parser.error("pass --other PYTHON (the other era's interpreter)")
    mine = compute()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "other.npz")
        subprocess.run([args.other, os.path.abspath(__file__), "--dump", path], check=True)
        probe = [args.other, "-c", "import sys, numpy; print(sys.version.split()[0], numpy.__version__)"]
        theirs_version = subprocess.run(probe, check=True, capture_output=True, text=True).stdout.split()
        with np.load(path) as theirs:
            other = {k: theirs[k] for k in theirs.files}
    print(
        f"here: Python {sys.version.split()[0]}, numpy {np.__version__}; "
        f"other: Python {theirs_version[0]}, numpy {theirs_version[1]}; {N:,} inputs each"
    )
    print(f"{'expression':<32} {'results that differ':>19} {'max ulps':>9}")
    for name, here in mine.items():
        distance = _ulps(here, other[name])
        print(f"{name:<32} {int((distance > 0).sum()):>19,} {int(distance.max()):>9,}")
    either = (_ulps(mine["np.linalg.norm(x)"], other["np.linalg.norm(x)"]) > 0) | (
        _ulps(mine["x @ Q @ x (2x2)"], other["x @ Q @ x (2x2)"]) > 0
    )
    print(f"{'norm or quadratic form':<32} {int(either.sum()):>19,}")


if __name__ == "__main__":
    main()

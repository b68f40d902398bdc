"""Core measurements, side by side in one run: snapshot+restore vs copy.deepcopy, and import time.

python benchmarks/bench_core.py [--seconds 2]
"""

from __future__ import annotations

import argparse
import copy
import subprocess
import sys
import time


def _rate(fn, seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds`` (after a short warm-up)."""
    for _ in range(100):
        fn()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            fn()
        count += 200
    return count / (time.perf_counter() - start)


def _import_seconds(module: str, repeats: int = 5) -> float:
    """Best-of wall time of a fresh interpreter importing ``module``, minus bare interpreter start."""

    def run(code: str) -> float:
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            best = min(best, time.perf_counter() - start)
        return best

    return run(f"import {module}") - run("pass")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()

    import numpy as np

    import bridge

    env = bridge.make("envbridge/CartPole-v0")
    env.reset(seed=0)
    env.step(1)

    def snapshot_pair() -> None:
        env.restore_state(env.clone_state())

    def deepcopy_pair() -> None:
        copy.deepcopy(env)

    snap = _rate(snapshot_pair, args.seconds)
    deep = _rate(deepcopy_pair, args.seconds)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"CartPole (TimeLimit) snapshot+restore pairs/s : {snap:12,.0f}")
    print(f"CartPole (TimeLimit) copy.deepcopy(env)/s     : {deep:12,.0f}")
    print(f"ratio snapshot+restore / deepcopy             : {snap / deep:12.1f}x")
    bridge_s = _import_seconds("bridge")
    numpy_s = _import_seconds("numpy")
    print(f"import bridge (fresh interpreter)             : {bridge_s * 1000:9.1f} ms")
    print(f"import numpy  (fresh interpreter)             : {numpy_s * 1000:9.1f} ms")
    print(f"bridge's own share (bridge - numpy)           : {(bridge_s - numpy_s) * 1000:9.1f} ms")


if __name__ == "__main__":
    main()

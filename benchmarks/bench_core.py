"""Core measurements, side by side in one run: snapshot+restore vs copy.deepcopy, and import time.

python benchmarks/bench_core.py [--seconds 2] [--rounds 5]     wall clock, paired interleaved rounds
python benchmarks/bench_core.py --instructions [--pairs 2000]  instruction counts under callgrind

The subject is ``bridge.make("envbridge/CartPole-v0")`` (CartPole in a TimeLimit) after
``reset(seed=0)`` and one step; a snapshot+restore pair is ``env.restore_state(env.clone_state())``.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind import instructions_per_step  # noqa: E402

VARIANTS = ("snapshot+restore", "deepcopy")


def _subject() -> Any:
    import bridge

    env = bridge.make("envbridge/CartPole-v0")
    env.reset(seed=0)
    env.step(1)
    return env


def _operations(env: Any) -> Dict[str, Callable[[], None]]:
    def snapshot_pair() -> None:
        env.restore_state(env.clone_state())

    def deepcopy_pair() -> None:
        copy.deepcopy(env)

    return {"snapshot+restore": snapshot_pair, "deepcopy": deepcopy_pair}


def _child(variant: str, pairs: int) -> None:
    """Run one variant ``pairs`` times (inside callgrind); a warm-up pair first, so 0 pairs cancels it."""
    operation = _operations(_subject())[variant]
    operation()
    for _ in range(pairs):
        operation()


def _rate(fn: Callable[[], None], seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds``."""
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            fn()
        count += 100
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


def _versions() -> str:
    import numpy as np

    return f"python {sys.version.split()[0]}, numpy {np.__version__}"


def _row(name: str, snap: float, deep: float, unit: str) -> str:
    return f"{name:<34} {snap:>18,.0f} {deep:>12,.0f} {snap / deep if unit == '/s' else deep / snap:>8.1f}x  {unit}"


def _header() -> str:
    return f"{'CartPole (TimeLimit)':<34} {VARIANTS[0]:>18} {VARIANTS[1]:>12} {'ratio':>9}"


def _wall(seconds: float, rounds: int) -> None:
    operations = _operations(_subject())
    for fn in operations.values():  # warm-up
        for _ in range(200):
            fn()
    rates: Dict[str, list] = {v: [] for v in VARIANTS}
    ratios = []
    for _ in range(rounds):  # paired, interleaved: each round measures both, back to back
        for v in VARIANTS:
            rates[v].append(_rate(operations[v], seconds / rounds))
        ratios.append(rates[VARIANTS[0]][-1] / rates[VARIANTS[1]][-1])
    snap, deep = (statistics.median(rates[v]) for v in VARIANTS)
    print(f"{_versions()}; wall clock, medians of {rounds} paired interleaved rounds")
    print(_header())
    print(_row("pairs per second", snap, deep, "/s"))
    print(_row("ns per pair", 1e9 / snap, 1e9 / deep, "ns"))
    print(f"{'median of the per-round ratios':<34} {'':>18} {'':>12} {statistics.median(ratios):>8.1f}x")
    bridge_s = _import_seconds("bridge")
    numpy_s = _import_seconds("numpy")
    print(f"import bridge (fresh interpreter)  : {bridge_s * 1000:9.1f} ms")
    print(f"import numpy  (fresh interpreter)  : {numpy_s * 1000:9.1f} ms")
    print(f"bridge's own share (bridge - numpy): {(bridge_s - numpy_s) * 1000:9.1f} ms")


def _instructions(pairs: int) -> None:
    snap = instructions_per_step(__file__, ("snapshot+restore",), pairs)
    deep = instructions_per_step(__file__, ("deepcopy",), max(pairs // 10, 1))
    print(f"{_versions()}; instructions per pair (callgrind, N pairs minus 0 pairs)")
    print(_header())
    print(_row("instructions per pair", snap, deep, "instr"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="wall-clock seconds per variant in all")
    parser.add_argument("--rounds", type=int, default=5, help="paired interleaved rounds (wall clock)")
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind instead")
    parser.add_argument("--pairs", type=int, default=2000, help="snapshot+restore pairs per count (deepcopy: 1/10)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)  # variant pairs, run by callgrind
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]))
    elif args.instructions:
        _instructions(args.pairs)
    else:
        _wall(args.seconds, args.rounds)


if __name__ == "__main__":
    main()

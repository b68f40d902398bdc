"""Batched stepping into SB3: ``make_vec_env(CartPoleVector)`` vs SB3 DummyVecEnv vs Gymnasium's own.

Run: ``python benchmarks/bench_sb3_vec.py [--seconds 0.5] [--repeats 5] [--sizes 16 256]``.
For each N prints env-steps/s of:
  * batched: ``bridge.adapters.sb3.make_vec_env(CartPoleVector, n_envs=N)`` (SB3 VecEnv API,
    with SB3's info conventions: terminal_observation, TimeLimit.truncated, episode stats);
  * dummy: SB3's ``DummyVecEnv`` of N scalar exports of ``envbridge/CartPole-v0`` (with Monitor);
  * gymnasium: ``gymnasium.make_vec("CartPole-v1", num_envs=N, vectorization_mode="vector_entry_point")``;
  * neutral: ``CartPoleVector`` itself (same-step autoreset, no SB3 conventions), which is what
    Gymnasium's vector env does, so neutral/gymnasium compares like with like;
and the ratios batched/gymnasium (target >= 1), neutral/gymnasium and batched/dummy (target >= 40 at
N=256). batched/gymnasium compares SB3's full info conventions against a raw vector step.
Random actions, so episodes end (and autoreset) often. Best of interleaved rounds.

``--instructions`` counts CPU instructions per env-step under callgrind instead (repeatable where
wall-clock on a shared VM is not): batched, gymnasium and neutral.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, List

import gymnasium
import numpy as np
from bridge.adapters.sb3 import make_vec_env

from bridge.examples import CartPoleVector

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind import instructions_per_step  # noqa: E402

VARIANTS = ("batched", "gymnasium", "neutral")


def _build(variant: str, n: int) -> Any:
    """One variant with N sub-envs, reset the runtime's way."""
    if variant == "batched":
        vec = make_vec_env(CartPoleVector, n_envs=n, seed=0)
        vec.reset()
    elif variant == "dummy":
        vec = make_vec_env("envbridge/CartPole-v0", n_envs=n, seed=0)
        vec.reset()
    elif variant == "gymnasium":
        vec = gymnasium.make_vec("CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point")
        vec.reset(seed=0)
    else:
        vec = CartPoleVector(n, autoreset_mode="same-step")
        vec.reset(seed=0)
    return vec


def _child(variant: str, n: int, steps: int) -> None:
    """Step one variant ``steps`` times over the action tape (runs inside callgrind)."""
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, 2, n) for _ in range(256)]
    vec = _build(variant, n)
    for i in range(steps):
        vec.step(actions[i & 255])


def _instructions(sizes: List[int], steps: int) -> None:
    print(f"instructions per env-step (callgrind, {steps} batch steps), CartPole, random actions")
    print(f"{'N':>5} {'batched':>10} {'gymnasium':>10} {'neutral':>10} {'gymnasium/batched':>18}")
    for n in sizes:
        per = [instructions_per_step(__file__, (v, str(n)), steps) / n for v in VARIANTS]
        print(f"{n:>5} {per[0]:>10,.0f} {per[1]:>10,.0f} {per[2]:>10,.0f} {per[1] / per[0]:>18.2f}")


def _rate(vec: Any, actions: List[np.ndarray], seconds: float, reset: Callable[[], Any]) -> float:
    """env-steps/s of ``vec.step`` over the action tape (``reset`` starts it the runtime's way)."""
    reset()
    n, i, count = len(actions), 0, 0
    start = time.perf_counter()
    while True:
        for _ in range(50):
            vec.step(actions[i])
            i = i + 1 if i + 1 < n else 0
        count += 50
        now = time.perf_counter()
        if now - start >= seconds:
            return count * vec.num_envs / (now - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="per variant per round")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 256])
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--steps", type=int, default=2000, help="batch steps per count (--instructions)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # variant n steps, run by callgrind
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]), int(args.child[2]))
        return
    if args.instructions:
        _instructions(args.sizes, args.steps)
        return
    print(f"env-steps/s, CartPole, random actions, best of {args.repeats} interleaved rounds of {args.seconds:.2f} s")
    print(
        f"{'N':>5} {'batched':>12} {'dummy':>12} {'gymnasium':>12} {'neutral':>12} {'batched/gymnasium':>18} {'neutral/gymnasium':>18} {'batched/dummy':>14}"
    )
    for n in args.sizes:
        rng = np.random.default_rng(0)
        actions = [rng.integers(0, 2, n) for _ in range(256)]
        batched, dummy, native, neutral = (_build(v, n) for v in ("batched", "dummy", "gymnasium", "neutral"))
        runs: List[Callable[[], float]] = [
            lambda vec=batched, actions=actions: _rate(vec, actions, args.seconds, vec.reset),
            lambda vec=dummy, actions=actions: _rate(vec, actions, args.seconds, vec.reset),
            lambda vec=native, actions=actions: _rate(vec, actions, args.seconds, lambda: vec.reset(seed=0)),
            lambda vec=neutral, actions=actions: _rate(vec, actions, args.seconds, lambda: vec.reset(seed=0)),
        ]
        best = [0.0] * len(runs)
        for _ in range(args.repeats):
            for k, run in enumerate(runs):
                best[k] = max(best[k], run())
        print(
            f"{n:>5} {best[0]:>12,.0f} {best[1]:>12,.0f} {best[2]:>12,.0f} {best[3]:>12,.0f} "
            f"{best[0] / best[2]:>18.2f} {best[3] / best[2]:>18.2f} {best[0] / best[1]:>14.1f}"
        )
        for vec in (batched, dummy, native, neutral):
            vec.close()


if __name__ == "__main__":
    main()

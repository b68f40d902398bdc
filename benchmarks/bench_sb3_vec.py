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
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, List

import gymnasium
import numpy as np
from bridge.adapters.sb3 import make_vec_env

from bridge.examples import CartPoleVector


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
    args = parser.parse_args()
    print(f"env-steps/s, CartPole, random actions, best of {args.repeats} interleaved rounds of {args.seconds:.2f} s")
    print(
        f"{'N':>5} {'batched':>12} {'dummy':>12} {'gymnasium':>12} {'neutral':>12} {'batched/gymnasium':>18} {'neutral/gymnasium':>18} {'batched/dummy':>14}"
    )
    for n in args.sizes:
        rng = np.random.default_rng(0)
        actions = [rng.integers(0, 2, n) for _ in range(256)]
        batched = make_vec_env(CartPoleVector, n_envs=n, seed=0)
        dummy = make_vec_env("envbridge/CartPole-v0", n_envs=n, seed=0)
        native = gymnasium.make_vec("CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point")
        neutral = CartPoleVector(n, autoreset_mode="same-step")
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

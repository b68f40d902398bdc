"""Process-parallel envs, 2 workers: ours (shared memory, and pipes only) vs SB3's SubprocVecEnv and
Gymnasium's AsyncVectorEnv(shared_memory=True), on the same env, side by side in one run.

Run: ``python benchmarks/bench_workers.py [--steps 400] [--rounds 7] [--workers 2] [--envs cartpole pixelgrid]``.
For each env (``envbridge/CartPole-v0``: a near-zero-cost step, 4 float64; ``envbridge/PixelGrid-v0``:
a 64x64x3 uint8 image) prints the median env-steps/s over paired, interleaved rounds (every variant
runs ``--steps`` batch steps in each round, in turn) of:

  * shm: ``bridge.vectorize(make, 2, workers="process")`` (shared memory for observations and actions);
  * pipes: ``ProcessVectorEnv(..., shared_memory=False)`` (everything pickled through the pipes:
    what ``workers="process"`` did before shared memory);
  * sb3-shm: our SB3 export of the shm VectorEnv, ``make_vec_env(bridge.vectorize(..., workers="process"))``
    (SB3's conventions, CHW images);
  * sb3-subproc: our SB3 subprocess export, ``make_vec_env(id, vec_env_cls=SubprocVecEnv)`` (SB3's own
    worker loop, supervised; Monitor in the workers);
  * SubprocVecEnv: SB3's own class on ``to_gymnasium(id)``;
  * AsyncVectorEnv: ``gymnasium.vector.AsyncVectorEnv`` on ``to_gymnasium(id)``, ``shared_memory=True``;

and the ratios shm/pipes and shm/best (best of SubprocVecEnv and AsyncVectorEnv; target >= 1).
Random actions (episodes end, every variant autoresets its own way). Wall clock on a shared
machine is noisy: read the medians and the ratios of one run, not single numbers.

``--instructions`` counts the CPU instructions the *parent* spends per env-step under callgrind
(workers run natively: forkserver workers are exec'd, so callgrind does not follow them) for shm,
pipes, SubprocVecEnv and AsyncVectorEnv (forkserver here, for the same reason).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

import gymnasium
import numpy as np
from bridge.adapters.gymnasium import to_gymnasium
from bridge.adapters.sb3 import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

import bridge
from bridge.vector import ProcessVectorEnv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind import instructions_per_step  # noqa: E402

ENVS = {"cartpole": ("envbridge/CartPole-v0", 2), "pixelgrid": ("envbridge/PixelGrid-v0", 4)}
VARIANTS = ("shm", "pipes", "sb3-shm", "sb3-subproc", "SubprocVecEnv", "AsyncVectorEnv")
COUNTED = ("shm", "pipes", "SubprocVecEnv", "AsyncVectorEnv")


def _build(variant: str, env_id: str, n: int) -> Any:
    make = functools.partial(bridge.make, env_id)
    gym_make = functools.partial(to_gymnasium, env_id)
    if variant == "shm":
        return bridge.vectorize(make, n, workers="process")
    if variant == "pipes":
        return ProcessVectorEnv([make] * n, shared_memory=False)
    if variant == "sb3-shm":
        return make_vec_env(bridge.vectorize(make, n, workers="process"), n_envs=n, seed=0)
    if variant == "sb3-subproc":
        return make_vec_env(env_id, n_envs=n, seed=0, vec_env_cls=SubprocVecEnv)
    if variant == "SubprocVecEnv":
        return SubprocVecEnv([gym_make] * n)
    context = "forkserver" if os.environ.get("ENVBRIDGE_BENCH_CHILD") else None
    return gymnasium.vector.AsyncVectorEnv([gym_make] * n, shared_memory=True, context=context)


def _reset(variant: str, vec: Any) -> None:
    if variant.startswith("sb3") or variant == "SubprocVecEnv":
        vec.reset()
    else:
        vec.reset(seed=0)


def _rate(vec: Any, actions: List[np.ndarray]) -> float:
    """env-steps/s of ``len(actions)`` batch steps."""
    start = time.perf_counter()
    for batch in actions:
        vec.step(batch)
    return len(actions) * len(actions[0]) / (time.perf_counter() - start)


def _bench(name: str, args: argparse.Namespace) -> Dict[str, float]:
    env_id, choices = ENVS[name]
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, choices, args.workers) for _ in range(args.steps)]
    vecs = {v: _build(v, env_id, args.workers) for v in VARIANTS}
    rates: Dict[str, List[float]] = {v: [] for v in VARIANTS}
    try:
        for v, vec in vecs.items():
            _reset(v, vec)
            _rate(vec, actions[:50])  # warm-up
        for _ in range(args.rounds):
            for v, vec in vecs.items():  # paired: every variant once per round, in turn
                rates[v].append(_rate(vec, actions))
    finally:
        for vec in vecs.values():
            vec.close()
    return {v: statistics.median(r) for v, r in rates.items()}


def _child(variant: str, name: str, workers: int, steps: int) -> None:
    """Step one variant ``steps`` times (runs inside callgrind)."""
    env_id, choices = ENVS[name]
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, choices, workers) for _ in range(256)]
    vec = _build(variant, env_id, workers)
    _reset(variant, vec)
    for i in range(steps):
        vec.step(actions[i & 255])
    vec.close()


def _instructions(args: argparse.Namespace) -> None:
    os.environ["ENVBRIDGE_BENCH_CHILD"] = "1"
    print(f"parent instructions per env-step (callgrind, {args.steps} batch steps, {args.workers} workers)")
    print(f"{'env':>10}" + "".join(f"{v:>16}" for v in COUNTED))
    for name in args.envs:
        per = [
            instructions_per_step(__file__, (v, name, str(args.workers)), args.steps) / args.workers for v in COUNTED
        ]
        print(f"{name:>10}" + "".join(f"{p:>16,.0f}" for p in per))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="batch steps per variant per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--envs", nargs="+", default=list(ENVS), choices=list(ENVS))
    parser.add_argument("--instructions", action="store_true", help="count parent instructions under callgrind")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)  # variant env workers steps, run by callgrind
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]), int(args.child[3]))
        return
    if args.instructions:
        _instructions(args)
        return
    print(
        f"env-steps/s, {args.workers} workers, random actions, median of {args.rounds} paired interleaved rounds "
        f"of {args.steps} batch steps"
    )
    header: List[Callable[[str], str]] = [lambda v: f"{v:>14}"]
    print(f"{'env':>10}" + "".join(h(v) for h in header for v in VARIANTS) + f"{'shm/pipes':>11}{'shm/best':>10}")
    for name in args.envs:
        median = _bench(name, args)
        best = max(median["SubprocVecEnv"], median["AsyncVectorEnv"])
        cells = "".join(f"{median[v]:>14,.0f}" for v in VARIANTS)
        print(f"{name:>10}{cells}{median['shm'] / median['pipes']:>11.2f}{median['shm'] / best:>10.2f}")


if __name__ == "__main__":
    main()

"""Per-step round trip of a remote env (``bridge.remote``) vs the same env in a local process worker
and vs Gymnasium's ``AsyncVectorEnv(shared_memory=True)`` with one worker, side by side in one run.

Run (modern era, gymnasium installed):
``python benchmarks/bench_remote.py [--steps 2000] [--rounds 5] [--host-python PATH_OR_ERA]``.

Envs: ``envbridge/PointMass-v0`` (2 float32 observations, 2 float32 actions: the round trip is all
overhead) and ``envbridge/PixelGrid-v0`` (a 64x64x3 uint8 image). Variants:

  * remote: ``bridge.remote(id, python=--host-python)`` (default this interpreter; pass the other
    era's to cross interpreters), frames over the host's pipes; episode ends reset it here;
  * process: ``bridge.vectorize(make, 1, workers="process")`` (pipes + shared memory, autoreset);
  * AsyncVectorEnv: ``gymnasium.vector.AsyncVectorEnv([to_gymnasium(id)], shared_memory=True)``.

Prints the median microseconds per step over interleaved rounds and remote/AsyncVectorEnv (goal
<= 1.2). Wall clock on a shared machine is noisy: read the medians and ratios of one run.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from typing import Any, Callable, Dict, List

import gymnasium
import numpy as np
from bridge.adapters.gymnasium import to_gymnasium

import bridge

ENVS = {"pointmass": "envbridge/PointMass-v0", "pixelgrid": "envbridge/PixelGrid-v0"}


def _remote_round(env: Any, actions: List[Any]) -> float:
    env.reset(seed=0)
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return time.perf_counter() - start


def _vector_round(env: Any, actions: List[Any]) -> float:
    env.reset(seed=0)
    start = time.perf_counter()
    for action in actions:
        env.step(action)
    return time.perf_counter() - start


def measure(env_id: str, steps: int, rounds: int, host_python: Any) -> Dict[str, float]:
    make = functools.partial(bridge.make, env_id)
    space = bridge.make(env_id).action_space
    rng = np.random.default_rng(0)
    actions = [space.sample(rng) for _ in range(steps)]
    batched = [bridge.spaces.stack(space, [a]) for a in actions]
    variants: Dict[str, Any] = {
        "remote": (bridge.remote(env_id, python=host_python), _remote_round, actions),
        "process": (bridge.vectorize(make, 1, workers="process"), _vector_round, batched),
        "AsyncVectorEnv": (
            gymnasium.vector.AsyncVectorEnv([functools.partial(to_gymnasium, env_id)], shared_memory=True),
            _vector_round,
            batched,
        ),
    }
    times: Dict[str, List[float]] = {name: [] for name in variants}
    try:
        for _ in range(rounds):
            for name, (env, run, acts) in variants.items():
                times[name].append(run(env, acts) / steps * 1e6)
    finally:
        for env, _, _ in variants.values():
            env.close()
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--host-python", default=None, help="the remote host's interpreter (path or era name)")
    parser.add_argument("--envs", nargs="+", default=list(ENVS), choices=list(ENVS))
    args = parser.parse_args()
    host: Callable[[], str] = lambda: bridge.hosted.client.host_python(args.host_python)  # noqa: E731
    print(f"remote host: {host()}; {args.steps} steps x {args.rounds} rounds; median us/step")
    print(f"{'env':<10} {'remote':>9} {'process':>9} {'AsyncVec':>9} {'remote/Async':>13}")
    for name in args.envs:
        m = measure(ENVS[name], args.steps, args.rounds, args.host_python)
        ratio = m["remote"] / m["AsyncVectorEnv"]
        print(f"{name:<10} {m['remote']:9.1f} {m['process']:9.1f} {m['AsyncVectorEnv']:9.1f} {ratio:13.2f}")


if __name__ == "__main__":
    main()

"""A hosted env (``bridge.remote``, the shared-memory step wire) against in-process and against the
AsyncVectorEnv round trip, and a hosted vector against ``bridge.vectorize(workers="process")``,
side by side in one run; ``--and-back`` also runs this script in the host's interpreter with this
one as its host (both directions: 3.11 -> 3.9 and 3.9 -> 3.11).

    python benchmarks/bench_remote.py --host-python legacy [--and-back] [--steps 2000] [--rounds 5]

Envs: ``envbridge/PointMass-v0`` (2 float32 observations, 2 float32 actions: the round trip is all
overhead) and ``envbridge/PixelGrid-v0`` (a 64x64x3 uint8 image). Columns (median microseconds per
step over interleaved rounds):

  * hosted: ``bridge.remote(id, python=--host-python)``; ``hosted/Async`` is the goal <= 0.5;
  * frames: the same host with ``shared_memory=False`` (every step a JSON frame each way);
  * Async: AsyncVectorEnv(shared_memory=True) with one worker, Gymnasium's (or gym 0.23's in the
    legacy era) over this project's export;
  * local: the env in this process; ``hosted-local`` is the goal <= 30 us (PointMass);
  * vec8 hosted / process: ``bridge.remote_vector(id, 8)`` (one host) vs
    ``bridge.vectorize(make, 8, workers="process")``, per batch step; the goal is hosted <= process
    (a hosted vector of 8 at least 0.9x as fast).

Wall clock on a shared machine is noisy: read the medians and ratios of one run, with ``uptime``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List

import numpy as np

import bridge
from bridge.hosted.client import host_python

ENVS = {"pointmass": "envbridge/PointMass-v0", "pixelgrid": "envbridge/PixelGrid-v0"}


def _single_round(env: Any, actions: List[Any]) -> float:
    env.reset(seed=0)
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return time.perf_counter() - start


def _gym_round(env: Any, actions: List[Any]) -> float:
    env.reset(seed=0)
    start = time.perf_counter()
    for action in actions:
        env.step(action)
    return time.perf_counter() - start


def _async_vector(env_id: str) -> Any:
    """AsyncVectorEnv(shared_memory=True) with one worker: Gymnasium's, else gym 0.23's."""
    try:
        import gymnasium
        from bridge.adapters.gymnasium import to_gymnasium

        return gymnasium.vector.AsyncVectorEnv([functools.partial(to_gymnasium, env_id)], shared_memory=True)
    except ImportError:
        import gym
        from bridge.adapters.gym import to_gym

        return gym.vector.AsyncVectorEnv([functools.partial(to_gym, env_id)], shared_memory=True)


def measure_single(env_id: str, steps: int, rounds: int, host: str) -> Dict[str, float]:
    space = bridge.make(env_id).action_space
    rng = np.random.default_rng(0)
    actions = [space.sample(rng) for _ in range(steps)]
    batched = [bridge.spaces.stack(space, [a]) for a in actions]
    variants: Dict[str, Any] = {
        "hosted": (bridge.remote(env_id, python=host), _single_round, actions),
        "frames": (bridge.remote(env_id, python=host, shared_memory=False), _single_round, actions),
        "Async": (_async_vector(env_id), _gym_round, batched),
        "local": (bridge.make(env_id), _single_round, actions),
    }
    return _interleaved(variants, rounds, steps)


def measure_vector(env_id: str, steps: int, rounds: int, host: str, n: int = 8) -> Dict[str, float]:
    space = bridge.spaces.batch_space(bridge.make(env_id).action_space, n)
    rng = np.random.default_rng(0)
    batches = [space.sample(rng) for _ in range(steps)]
    variants: Dict[str, Any] = {
        "vec hosted": (bridge.remote_vector(env_id, n, python=host), _gym_round, batches),
        "vec process": (
            bridge.vectorize(functools.partial(bridge.make, env_id), n, workers="process"),
            _gym_round,
            batches,
        ),
    }
    return _interleaved(variants, rounds, steps)


def _interleaved(variants: Dict[str, Any], rounds: int, steps: int) -> Dict[str, float]:
    times: Dict[str, List[float]] = {name: [] for name in variants}
    try:
        for _ in range(rounds):
            for name, (env, run, acts) in variants.items():
                times[name].append(run(env, acts) / steps * 1e6)
    finally:
        for env, _, _ in variants.values():
            env.close()
    return {name: statistics.median(values) for name, values in times.items()}


def table(host: str, steps: int, rounds: int, envs: List[str]) -> None:
    here = ".".join(map(str, sys.version_info[:2])) + f", numpy {np.__version__}"
    print(f"client Python {here}; host {host}; {steps} steps x {rounds} rounds; median us/step")
    head = (
        f"{'env':<10} {'hosted':>8} {'frames':>8} {'Async':>8} {'local':>8} {'hosted/Async':>13} {'hosted-local':>13}"
    )
    print(head + f" {'vec8 hosted':>12} {'vec8 process':>13} {'hosted/process':>15}")
    for name in envs:
        m = measure_single(ENVS[name], steps, rounds, host)
        v = measure_vector(ENVS[name], max(steps // 4, 100), rounds, host)
        row = f"{name:<10} {m['hosted']:8.1f} {m['frames']:8.1f} {m['Async']:8.1f} {m['local']:8.1f}"
        row += f" {m['hosted'] / m['Async']:13.2f} {m['hosted'] - m['local']:13.1f}"
        row += f" {v['vec hosted']:12.1f} {v['vec process']:13.1f} {v['vec hosted'] / v['vec process']:15.2f}"
        print(row, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--host-python", default=None, help="the host's interpreter (path or era name)")
    parser.add_argument("--and-back", action="store_true", help="also run with the host's interpreter as client")
    parser.add_argument("--envs", nargs="+", default=list(ENVS), choices=list(ENVS))
    args = parser.parse_args()
    host = host_python(args.host_python)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    table(host, args.steps, args.rounds, args.envs)
    if args.and_back:
        back: Callable[..., Any] = subprocess.run
        command = [host, __file__, "--host-python", sys.executable, "--steps", str(args.steps)]
        back(command + ["--rounds", str(args.rounds), "--envs", *args.envs], check=True)


if __name__ == "__main__":
    main()

"""RLlib env-runner sampling throughput, side by side in one run (steps/s; best of ``--repeats``).

Run: ``python benchmarks/bench_rllib.py [--steps 2000] [--repeats 3]`` in the rllib era.

1. export vs hand-written: GridWorld through ``bridge.adapters.rllib.register`` vs the same env
   hand-written for Gymnasium (``bench_gymnasium.HandGridWorld`` + Gymnasium's TimeLimit), one env
   in RLlib's local env runner, PPO's module choosing the actions. Target: export/hand >= 0.97.
2. batched vs sync at 64 envs per runner: CartPoleVector through ``vector_entry_point`` (one numpy
   call per step) vs RLlib's default ``sync`` vectorization of the scalar CartPole export (a
   SyncVectorEnv of 64). Target: >= 10x. Measured with the module and with random actions.
3. 1 vs 2 remote env runners (GridWorld export, 8 envs each), sampling in parallel (measured one
   after the other: on 2 CPUs the two runner groups cannot exist at once).

Runs are interleaved; the machine's other load shows in the spread.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, Dict, List

import gymnasium
import torch
from bridge.adapters.rllib import register
from bridge.adapters.rllib.session import ensure_ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.tune.registry import register_env

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gymnasium import HandGridWorld  # noqa: E402

from bridge.examples import CartPoleVector  # noqa: E402


def _hand_grid(config: Any = None) -> Any:
    return gymnasium.wrappers.TimeLimit(HandGridWorld(), max_episode_steps=100)


def _algo(env: str, runners: int, envs: int, mode: str = "sync") -> Any:
    config = (
        PPOConfig()
        .environment(env)
        .env_runners(num_env_runners=runners, num_envs_per_env_runner=envs, gym_env_vectorize_mode=mode)
        .rl_module(model_config={"fcnet_hiddens": [32, 32]})
        .debugging(seed=0)
    )
    return config.build_algo()


def _local_rate(algo: Any, steps: int, random_actions: bool) -> float:
    runner = algo.env_runner
    # force_reset: an episode begun with the module cannot go on with random actions (RLlib's
    # episode then lacks the module's outputs for those steps and fails its own validation)
    runner.sample(num_timesteps=min(steps, 500), random_actions=random_actions, force_reset=True)  # warm up
    start = time.perf_counter()
    episodes = runner.sample(num_timesteps=steps, random_actions=random_actions)
    return sum(len(e) for e in episodes) / (time.perf_counter() - start)


def _remote_rate(algo: Any, steps: int) -> float:
    group = algo.env_runner_group
    group.foreach_env_runner(lambda r: r.sample(num_timesteps=200), local_env_runner=False)
    start = time.perf_counter()
    counts = group.foreach_env_runner(
        lambda r: sum(len(e) for e in r.sample(num_timesteps=steps)), local_env_runner=False
    )
    return sum(counts) / (time.perf_counter() - start)


def _best(cases: Dict[str, Callable[[], float]], repeats: int) -> Dict[str, float]:
    best: Dict[str, List[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, run in cases.items():
            best[name].append(run())
    return {name: max(rates) for name, rates in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as in RLlib's remote env runners; tiny nets on 2 shared cores
    ensure_ray(num_cpus=2)
    register_env("hand-gridworld", _hand_grid)
    grid = register("envbridge/GridWorld-v0")
    cartpole = register("envbridge/CartPole-v0")
    batched = register(CartPoleVector)
    algos = {
        "hand": _algo("hand-gridworld", 0, 1),
        "export": _algo(grid, 0, 1),
        "sync64": _algo(cartpole, 0, 64),
        "batched64": _algo(batched, 0, 64, "vector_entry_point"),
    }
    s = args.steps
    rates = _best(
        {
            "hand": lambda: _local_rate(algos["hand"], s, False),
            "export": lambda: _local_rate(algos["export"], s, False),
            "sync64": lambda: _local_rate(algos["sync64"], 16 * s, False),
            "batched64": lambda: _local_rate(algos["batched64"], 16 * s, False),
            "sync64-random": lambda: _local_rate(algos["sync64"], 16 * s, True),
            "batched64-random": lambda: _local_rate(algos["batched64"], 16 * s, True),
        },
        args.repeats,
    )
    for algo in algos.values():
        algo.stop()
    print(
        f"GridWorld, 1 env, local runner, PPO module: export {rates['export']:,.0f} steps/s, hand-written "
        f"Gymnasium {rates['hand']:,.0f} steps/s, export/hand = {rates['export'] / rates['hand']:.3f} (target >= 0.97)"
    )
    for suffix, what in (("", "PPO module"), ("-random", "random actions")):
        b, y = rates[f"batched64{suffix}"], rates[f"sync64{suffix}"]
        print(
            f"CartPole, 64 envs per runner, {what}: batched vector_entry_point {b:,.0f} steps/s, sync of the "
            f"scalar export {y:,.0f} steps/s, batched/sync = {b / y:.2f}x (target >= 10x)"
        )
    scale = {}
    for n in (1, 2):  # one after the other: on 2 CPUs both groups cannot hold their runners at once
        algo = _algo(grid, n, 8)
        scale[n] = max(_remote_rate(algo, s) for _ in range(args.repeats))
        algo.stop()
    print(
        f"GridWorld export, 8 envs per runner, PPO module: 1 env runner {scale[1]:,.0f} steps/s, 2 env runners "
        f"{scale[2]:,.0f} steps/s, 2/1 = {scale[2] / scale[1]:.2f}x (2 cores)"
    )


if __name__ == "__main__":
    main()

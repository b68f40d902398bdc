"""SB3 PPO training FPS: GridWorld through the export vs the same env hand-written for Gymnasium.

Run: ``python benchmarks/bench_sb3_training.py [--steps 8192] [--repeats 3]``. Both sides use SB3's
``DummyVecEnv`` of 8 envs with ``Monitor`` and a 100-step limit, the demo's PPO settings and one
torch thread; runs are interleaved and the best FPS of each is kept. Target: export/hand >= 0.99.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, List

import gymnasium
import torch
from bridge.adapters.sb3 import make_vec_env
from bridge.adapters.sb3.train import DEMO_N_ENVS, DEMO_PPO
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gymnasium import HandGridWorld  # noqa: E402


def _hand_env() -> Any:
    return gymnasium.wrappers.TimeLimit(HandGridWorld(), max_episode_steps=100)


def _fps(make_vec: Callable[[], Any], steps: int) -> float:
    vec = make_vec()
    model = PPO("MlpPolicy", vec, seed=0, verbose=0, **DEMO_PPO)
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    elapsed = time.perf_counter() - start
    vec.close()
    return model.num_timesteps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    variants: List[tuple] = [
        ("hand-written", lambda: sb3_make_vec_env(_hand_env, n_envs=DEMO_N_ENVS, seed=0)),
        ("export", lambda: make_vec_env("envbridge/GridWorld-v0", n_envs=DEMO_N_ENVS, seed=0)),
        (
            "export no-check",
            lambda: make_vec_env("envbridge/GridWorld-v0", n_envs=DEMO_N_ENVS, seed=0, check_actions=False),
        ),
    ]
    best = [0.0] * len(variants)
    for _ in range(args.repeats):
        for k, (_, make) in enumerate(variants):
            best[k] = max(best[k], _fps(make, args.steps))
    print(
        f"PPO on GridWorld, {DEMO_N_ENVS} envs, {args.steps} steps, best of {args.repeats} interleaved runs (target: export/hand >= 0.99)"
    )
    print(
        f"{'hand-written FPS':>17} {'export FPS':>11} {'export no-check FPS':>20} {'ratio':>7} {'ratio no-check':>15}"
    )
    print(f"{best[0]:>17,.0f} {best[1]:>11,.0f} {best[2]:>20,.0f} {best[1] / best[0]:>7.3f} {best[2] / best[0]:>15.3f}")


if __name__ == "__main__":
    main()

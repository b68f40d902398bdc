"""Single-env steps/s: ``to_gymnasium(neutral)`` vs the same env hand-written as a ``gymnasium.Env``.

Run: ``python benchmarks/bench_gymnasium.py [--seconds 2] [--repeats 5]``. Prints one line per env
with steps/s of each variant and the ratio export / hand-written (target >= 0.97), side by side.
Variants run back to back in each round (rotating the order); the ratios are the median of the
per-round ratios, so a noisy neighbour or a slow drift of the machine cancels out of them.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, List

import gymnasium
import numpy as np
from bridge.adapters.gymnasium import to_gymnasium

import bridge
from bridge import spaces
from bridge.examples import CartPole, GridWorld, PointMass
from bridge.examples.cartpole import _HIGH, dynamics, fallen
from bridge.examples.gridworld import _MOVES


class HandGridWorld(gymnasium.Env):
    """GridWorld written directly against Gymnasium (same logic as bridge.examples.GridWorld)."""

    def __init__(self, size: int = 5) -> None:
        self.size = size
        self.observation_space = gymnasium.spaces.Box(0, size - 1, (4,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(4)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.agent = self.np_random.integers(0, self.size, size=2)
        self.goal = self.agent
        while np.array_equal(self.goal, self.agent):
            self.goal = self.np_random.integers(0, self.size, size=2)
        return np.concatenate([self.agent, self.goal]).astype(np.float32), {
            "distance": int(np.abs(self.goal - self.agent).sum())
        }

    def step(self, action: Any) -> Any:
        self.agent = np.clip(self.agent + _MOVES[int(action)], 0, self.size - 1)
        distance = int(np.abs(self.goal - self.agent).sum())
        terminated = distance == 0
        obs = np.concatenate([self.agent, self.goal]).astype(np.float32)
        return obs, (1.0 if terminated else -0.01), terminated, False, {"distance": distance}


class HandPointMass(gymnasium.Env):
    """PointMass written directly against Gymnasium."""

    def __init__(self) -> None:
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1.0, 1.0, size=2).astype(np.float32)
        return self.pos.copy(), {}

    def step(self, action: Any) -> Any:
        move = np.clip(np.asarray(action, dtype=np.float32), -1.0, 1.0)
        self.pos = np.clip(self.pos + np.float32(0.1) * move, -1.0, 1.0).astype(np.float32)
        distance = float(np.linalg.norm(self.pos))
        terminated = distance < 0.1
        return self.pos.copy(), (1.0 if terminated else -distance), terminated, False, {"distance": distance}


class Drift(bridge.Env):
    """A near-zero-cost env (a 2-float step): the floor against which an export's own cost shows."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.obs = np.zeros(2, dtype=np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return self.obs.copy(), {}

    def step(self, action: Any) -> Any:
        return self.obs.copy(), 0.0, False, False, {}


class HandDrift(gymnasium.Env):
    """Drift written directly against Gymnasium."""

    def __init__(self) -> None:
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.obs = np.zeros(2, dtype=np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return self.obs.copy(), {}

    def step(self, action: Any) -> Any:
        return self.obs.copy(), 0.0, False, False, {}


class HandCartPole(gymnasium.Env):
    """CartPole written directly against Gymnasium (same dynamics functions)."""

    def __init__(self) -> None:
        self.observation_space = gymnasium.spaces.Box(-_HIGH, _HIGH, (4,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.state = self.np_random.uniform(-0.05, 0.05, size=4)
        return self.state.astype(np.float32), {}

    def step(self, action: Any) -> Any:
        self.state = dynamics(self.state, 10.0 if int(action) == 1 else -10.0)
        return self.state.astype(np.float32), 1.0, bool(fallen(self.state)), False, {}


def _rate(env: Any, actions: List[Any], seconds: float) -> float:
    """Steps per second over the action tape, resetting on episode ends."""
    env.reset(seed=0)
    step, reset = env.step, env.reset
    n, i, count = len(actions), 0, 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(1000):
            _, _, terminated, truncated, _ = step(actions[i])
            i = i + 1 if i + 1 < n else 0
            if terminated or truncated:
                reset()
        count += 1000
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.15, help="per variant per round")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    cases: List[tuple] = [
        ("GridWorld", HandGridWorld, GridWorld),
        ("PointMass", HandPointMass, PointMass),
        ("CartPole", HandCartPole, CartPole),
    ]
    print(
        f"steps/s: best of {args.repeats} rounds of {args.seconds:.2f} s; ratios: median of per-round ratios (target >= 0.97)"
    )
    print(
        f"{'env':<10} {'hand-written':>13} {'export':>10} {'export no-check':>16} {'ratio':>7} {'ratio no-check':>15}"
    )
    for name, hand_cls, neutral_cls in cases:
        variants: List[Callable[[], Any]] = [
            hand_cls,
            lambda cls=neutral_cls: to_gymnasium(cls()),
            lambda cls=neutral_cls: to_gymnasium(cls(), check_actions=False),
        ]
        envs = [make() for make in variants]
        rng = np.random.default_rng(0)
        space = envs[0].action_space
        space.seed(0)
        actions = [space.sample() for _ in range(4096)]
        best = [0.0] * len(envs)
        ratios: List[List[float]] = [[], []]  # per round, export / hand: paired, so drift cancels
        for r in range(args.repeats):
            order = list(range(len(envs)))[r % len(envs) :] + list(range(len(envs)))[: r % len(envs)]
            rates = [0.0] * len(envs)
            for k in order:
                rates[k] = _rate(envs[k], actions, args.seconds)
                best[k] = max(best[k], rates[k])
            ratios[0].append(rates[1] / rates[0])
            ratios[1].append(rates[2] / rates[0])
        del rng
        print(
            f"{name:<10} {best[0]:>13,.0f} {best[1]:>10,.0f} {best[2]:>16,.0f} "
            f"{float(np.median(ratios[0])):>7.3f} {float(np.median(ratios[1])):>15.3f}"
        )


if __name__ == "__main__":
    main()

"""Steps/s of the to_dreamerv2 chain vs DreamerV2's own chain over an equivalent hand-written gym 0.23 env.

Both sides are DreamerV2's wrapper chain (GymWrapper -> ResizeImage -> OneHotAction | NormalizeAction
-> TimeLimit) built from the same classes; only the innermost env differs: our Dreamer-ready export
of a neutral example, or a gym 0.23 env written by hand for DreamerV2 (dict observations,
``info["is_terminal"]``). Rounds alternate; the best round of each counts. Target: ratio >= 0.95.

Run: CUDA_VISIBLE_DEVICES= TF_CPP_MIN_LOG_LEVEL=2 python benchmarks/bench_dreamerv2.py [--steps N]

``--instructions`` counts CPU instructions per chain step under callgrind instead (repeatable where
wall clock on a shared VM is not; target hand / ours >= 0.97). Each count imports TensorFlow under
valgrind: allow a few minutes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, List

import gym
import numpy as np
from bridge.adapters.dreamerv2 import load_dreamerv2, to_dreamerv2

from bridge.examples import GridWorld, PointMass

_MOVES = np.array([[0, -1], [0, 1], [-1, 0], [1, 0]], dtype=np.int64)


class HandGridWorld(gym.Env):
    """GridWorld as one would write it for DreamerV2 by hand (same dynamics and RNG draws)."""

    def __init__(self, size: int = 5) -> None:
        self.size = size
        self.observation_space = gym.spaces.Dict({"vector": gym.spaces.Box(0, size - 1, (4,), np.float32)})
        self.action_space = gym.spaces.Discrete(4)
        self.rng = np.random.default_rng(0)

    def _obs(self) -> dict:
        return {"vector": np.concatenate([self.agent, self.goal]).astype(np.float32)}

    def reset(self, **kwargs: Any) -> dict:
        self.agent = self.rng.integers(0, self.size, size=2)
        self.goal = self.agent
        while np.array_equal(self.goal, self.agent):
            self.goal = self.rng.integers(0, self.size, size=2)
        return self._obs()

    def step(self, action: Any) -> tuple:
        self.agent = np.clip(self.agent + _MOVES[int(action)], 0, self.size - 1)
        distance = int(np.abs(self.goal - self.agent).sum())
        terminated = distance == 0
        return self._obs(), 1.0 if terminated else -0.01, terminated, {"distance": distance, "is_terminal": terminated}


class HandPointMass(gym.Env):
    """PointMass written by hand for DreamerV2 (same dynamics as bridge.examples.PointMass)."""

    def __init__(self) -> None:
        self._env = PointMass()  # reuse the physics; the API layer is the hand-written part
        self.observation_space = gym.spaces.Dict({"vector": gym.spaces.Box(-1.0, 1.0, (2,), np.float32)})
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self._seeded = False

    def reset(self, **kwargs: Any) -> dict:
        obs, _ = self._env.reset(seed=None if self._seeded else 0)
        self._seeded = True
        return {"vector": obs}

    def step(self, action: Any) -> tuple:
        obs, reward, terminated, truncated, info = self._env.step(np.asarray(action, np.float32))
        info = dict(info)
        info["is_terminal"] = terminated
        return {"vector": obs}, float(reward), terminated or truncated, info


def dreamer_chain(env: Any, discrete: bool, time_limit: int) -> Any:
    """DreamerV2's chain exactly as ``api.train`` builds it."""
    common = load_dreamerv2().common
    chain = common.ResizeImage(common.GymWrapper(env))
    chain = common.OneHotAction(chain) if discrete else common.NormalizeAction(chain)
    return common.TimeLimit(chain, time_limit)


def steps_per_second(chain: Any, actions: List[dict]) -> float:
    obs = chain.reset()
    started = time.perf_counter()
    for action in actions:
        obs = chain.step(action)
        if obs["is_last"]:
            obs = chain.reset()
    return len(actions) / (time.perf_counter() - started)


def _tapes(steps: int) -> tuple:
    rng = np.random.default_rng(0)
    one_hots = [{"action": np.eye(4, dtype=np.float32)[i]} for i in rng.integers(0, 4, steps)]
    moves = [{"action": a} for a in rng.uniform(-1, 1, (steps, 2)).astype(np.float32)]
    return one_hots, moves


CHAINS = {
    ("GridWorld", "ours"): lambda: to_dreamerv2(GridWorld(), time_limit=100, seed=0),
    ("GridWorld", "hand"): lambda: dreamer_chain(HandGridWorld(), True, 100),
    ("PointMass", "ours"): lambda: to_dreamerv2(PointMass(), time_limit=50, seed=0),
    ("PointMass", "hand"): lambda: dreamer_chain(HandPointMass(), False, 50),
}


def _child(env: str, variant: str, steps: int) -> None:
    """Step one chain over the tape (runs inside callgrind; 0 steps measures the set-up alone)."""
    one_hots, moves = _tapes(4096)
    actions = one_hots if env == "GridWorld" else moves
    chain = CHAINS[(env, variant)]()
    chain.reset()
    for i in range(steps):
        if chain.step(actions[i & 4095])["is_last"]:
            chain.reset()


def compare(name: str, ours: Callable[[], Any], hand: Callable[[], Any], actions: List[dict], rounds: int) -> None:
    best = {"to_dreamerv2": 0.0, "hand-written": 0.0}
    makers = [("to_dreamerv2", ours), ("hand-written", hand)]
    for round_ in range(rounds):
        for label, make in makers[:: 1 if round_ % 2 else -1]:  # alternate who goes first
            best[label] = max(best[label], steps_per_second(make(), actions))
    ratio = best["to_dreamerv2"] / best["hand-written"]
    ours_rate, hand_rate = best["to_dreamerv2"], best["hand-written"]
    print(
        f"{name:<22} to_dreamerv2 {ours_rate:>9,.0f} steps/s   "
        f"hand-written gym 0.23 {hand_rate:>9,.0f} steps/s   ratio {ratio:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # env variant steps, run by callgrind
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return
    if args.instructions:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from callgrind import instructions_per_step

        steps = min(args.steps, 4000)
        print(f"DreamerV2 chain, instructions per step (callgrind, {steps} steps minus 0); target hand / ours >= 0.97")
        for env in ("GridWorld", "PointMass"):
            ours, hand = (instructions_per_step(__file__, (env, v), steps) for v in ("ours", "hand"))
            print(
                f"{env:<10} to_dreamerv2 {ours:>9,.0f}   hand-written gym 0.23 {hand:>9,.0f}   ratio {hand / ours:.3f}"
            )
        return
    one_hots, moves = _tapes(args.steps)
    print(
        f"DreamerV2 chain steps/s, {args.steps} steps, best of {args.rounds} alternating rounds (target ratio >= 0.95)"
    )
    compare("GridWorld (discrete)", CHAINS[("GridWorld", "ours")], CHAINS[("GridWorld", "hand")], one_hots, args.rounds)
    compare("PointMass (continuous)", CHAINS[("PointMass", "ours")], CHAINS[("PointMass", "hand")], moves, args.rounds)


if __name__ == "__main__":
    main()

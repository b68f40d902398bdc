"""Soak: N environment steps through every export this era has, with RSS growth and steps/s.

Each export steps the registered cart-pole (``envbridge/CartPole-v0``: 500-step TimeLimit, random
actions, so an episode ends every ~20 steps and resets are soaked too). RSS is read from
``/proc/self/status`` (VmRSS; ``resource`` peak RSS where /proc is missing) after a warm-up and
again at the end, each after ``gc.collect()``. A "step" is one environment transition: a VecEnv
call over ``--num-envs`` envs counts ``--num-envs`` steps. Target: growth < 5 MB per export.

    python benchmarks/soak.py [--steps 1000000] [--num-envs 8] [--only NAME ...]

Exports: neutral (bridge.Env), rlFunctionEnv (both eras); to_gymnasium, SB3 DummyVecEnv, SB3
batched VecEnv (modern); to_gym, the to_dreamerv2 chain (legacy). An export whose runtime is
missing is listed as skipped.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import resource
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

ENV_ID = "envbridge/CartPole-v0"
TARGET_MB = 5.0
# a stepper makes one call and returns how many transitions it made
Stepper = Callable[[int], int]


def rss_mb() -> float:
    """This process's resident set size in MB (VmRSS), or the peak RSS where /proc is missing."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


def _actions(n: int = 1024) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 2, size=n)


def _five_tuple(env: Any) -> Stepper:
    """A bridge.Env or a Gymnasium env: reset when the episode ends."""
    actions = _actions()
    env.reset(seed=0)

    def step(i: int) -> int:
        _, _, terminated, truncated, _ = env.step(int(actions[i & 1023]))
        if terminated or truncated:
            env.reset()
        return 1

    return step


def _four_tuple(env: Any) -> Stepper:
    """A gym 0.23 env."""
    actions = _actions()
    env.seed(0)
    env.reset()

    def step(i: int) -> int:
        if env.step(int(actions[i & 1023]))[2]:
            env.reset()
        return 1

    return step


def _vec(vec_env: Any, num_envs: int) -> Stepper:
    """An SB3 VecEnv (it resets ended envs itself)."""
    batches = np.random.default_rng(0).integers(0, 2, size=(64, num_envs))
    vec_env.seed(0)
    vec_env.reset()

    def step(i: int) -> int:
        vec_env.step(batches[i & 63])
        return num_envs

    return step


def _dreamer_chain(chain: Any) -> Stepper:
    one_hots = [{"action": np.eye(2, dtype=np.float32)[a]} for a in _actions()]
    chain.reset()

    def step(i: int) -> int:
        if chain.step(one_hots[i & 1023])["is_last"]:
            chain.reset()
        return 1

    return step


def _neutral(num_envs: int) -> Stepper:
    import bridge

    return _five_tuple(bridge.make(ENV_ID))


def _rl_function_env(num_envs: int) -> Stepper:
    from bridge.adapters.matlab import examples

    return _five_tuple(examples.make_cartpole("discrete", MaxStepsPerEpisode=500))


def _to_gymnasium(num_envs: int) -> Stepper:
    from bridge.adapters.gymnasium import to_gymnasium

    return _five_tuple(to_gymnasium(ENV_ID))


def _sb3_dummy(num_envs: int) -> Stepper:
    from bridge.adapters.sb3 import make_vec_env

    return _vec(make_vec_env(ENV_ID, n_envs=num_envs), num_envs)


def _sb3_batched(num_envs: int) -> Stepper:
    from bridge.adapters.sb3 import make_vec_env

    from bridge.examples import CartPoleVector

    return _vec(make_vec_env(CartPoleVector, n_envs=num_envs), num_envs)


def _to_gym(num_envs: int) -> Stepper:
    from bridge.adapters.gym import to_gym

    return _four_tuple(to_gym(ENV_ID))


def _to_dreamerv2(num_envs: int) -> Stepper:
    from bridge.adapters.dreamerv2 import to_dreamerv2

    return _dreamer_chain(to_dreamerv2(ENV_ID, seed=0))


# name -> (module the export needs, builder)
EXPORTS: Dict[str, Tuple[Optional[str], Callable[[int], Stepper]]] = {
    "neutral bridge.Env": (None, _neutral),
    "rlFunctionEnv": (None, _rl_function_env),
    "to_gymnasium": ("gymnasium", _to_gymnasium),
    "SB3 DummyVecEnv": ("stable_baselines3", _sb3_dummy),
    "SB3 batched VecEnv": ("stable_baselines3", _sb3_batched),
    "to_gym": ("gym", _to_gym),
    "to_dreamerv2 chain": ("dreamerv2", _to_dreamerv2),
}


def soak(stepper: Stepper, steps: int, warmup: int) -> Tuple[float, float, float, int]:
    """(RSS after warm-up MB, RSS at the end MB, steps/s, steps made) for ``steps`` transitions."""
    done, i = 0, 0
    while done < warmup:
        done += stepper(i)
        i += 1
    gc.collect()
    before = rss_mb()
    done, started = 0, time.perf_counter()
    while done < steps:
        done += stepper(i)
        i += 1
    elapsed = time.perf_counter() - started
    gc.collect()
    return before, rss_mb(), done / elapsed, done


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="transitions per export")
    parser.add_argument("--warmup", type=int, default=20_000, help="transitions before the first RSS reading")
    parser.add_argument("--num-envs", type=int, default=8, help="envs per SB3 VecEnv")
    parser.add_argument("--only", nargs="*", default=None, help="export names to run (default: all)")
    args = parser.parse_args(argv)
    print(
        f"soak: {args.steps:,} steps per export after {args.warmup:,} warm-up steps, {ENV_ID}, "
        f"python {sys.version.split()[0]}, numpy {np.__version__}, pid {os.getpid()}"
    )
    header = f"{'export':<20} {'steps':>10} {'steps/s':>10} {'RSS warm MB':>12} {'RSS end MB':>11} {'growth MB':>10}"
    print(f"{header}  verdict")
    worst = 0.0
    for name, (module, build) in EXPORTS.items():
        if args.only and name not in args.only:
            continue
        if module is not None and importlib.util.find_spec(module) is None:
            print(f"{name:<20} {'-':>10} {'-':>10} {'-':>12} {'-':>11} {'-':>10}  skipped ({module} not installed)")
            continue
        before, after, rate, done = soak(build(args.num_envs), args.steps, args.warmup)
        growth = after - before
        worst = max(worst, growth)
        verdict = "ok" if growth < TARGET_MB else f"OVER {TARGET_MB:g} MB"
        row = f"{name:<20} {done:>10,} {rate:>10,.0f} {before:>12.1f} {after:>11.1f} {growth:>+10.2f}"
        print(f"{row}  {verdict}", flush=True)
    print(f"largest growth {worst:+.2f} MB (target < {TARGET_MB:g} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The MATLAB facade's cost, side by side in one run.

Scalar: the rlFunctionEnv cart-pole (MATLAB-style step/reset functions) against the same user
functions called bare (the facade's own overhead) and against bridge's hand-written CartPole class.
Batched: rlFunctionVectorEnv (one call of the user's batched functions per step) against
bridge's CartPoleVector and against N scalar facades looped by bridge.vectorize.

    python benchmarks/bench_matlab.py [--seconds 0.2] [--rounds 15] [--num-envs 256]
    python benchmarks/bench_matlab.py --instructions [--steps 20000] [--batch-steps 2000]

Wall clock: medians of paired, interleaved rounds (each round measures every variant once, for
``--seconds`` each; a ratio is the median of the per-round ratios). ``--instructions`` counts CPU
instructions per step under callgrind instead (repeatable where wall clock on a shared VM is not).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind import instructions_per_step  # noqa: E402

SCALAR = ("bare", "rlFunctionEnv", "rlFunctionEnv-nocheck", "CartPole")
BATCHED = ("rlFunctionVectorEnv", "CartPoleVector", "looped")
NAMES = {
    "bare": "bare user functions",
    "rlFunctionEnv": "rlFunctionEnv",
    "rlFunctionEnv-nocheck": "rlFunctionEnv check_actions=False",
    "CartPole": "bridge.examples.CartPole",
    "rlFunctionVectorEnv": "rlFunctionVectorEnv",
    "CartPoleVector": "CartPoleVector (hand-written)",
    "looped": "vectorize(rlFunctionEnv) loop",
}


def _stepper(env: Any, action: Any) -> Callable[[], None]:
    env.reset(seed=0)

    def step() -> None:
        if env.step(action)[2]:
            env.reset()

    return step


def _build(variant: str, n: int) -> Callable[[], None]:
    """One step of ``variant`` as a zero-argument function (the env reset and ready)."""
    import numpy as np
    from bridge.adapters.matlab import examples as cp
    from bridge.adapters.matlab import rlFunctionEnv

    import bridge
    from bridge.examples import CartPole, CartPoleVector

    if variant == "bare":  # the user's functions alone: what the facade adds is the difference
        rng = np.random.default_rng(0)
        state = {"info": cp.cartpole_reset(rng)[1]}
        force = np.float64(10.0)

        def bare() -> None:
            _, _, done, info = cp.cartpole_step_discrete(force, state["info"])
            state["info"] = cp.cartpole_reset(rng)[1] if done else info

        return bare
    if variant == "rlFunctionEnv":
        return _stepper(cp.make_cartpole("discrete", MaxStepsPerEpisode=None), 1)
    if variant == "rlFunctionEnv-nocheck":
        info, act = cp.cartpole_observation_info(), cp.cartpole_action_info()
        env = rlFunctionEnv(info, act, cp.cartpole_step_discrete, cp.cartpole_reset, check_actions=False)
        return _stepper(env, 1)
    if variant == "CartPole":
        return _stepper(CartPole(), 1)
    ones = np.ones(n, dtype=np.int64)
    if variant == "rlFunctionVectorEnv":
        vec: Any = cp.make_vector_cartpole(n, MaxStepsPerEpisode=500)
    elif variant == "CartPoleVector":
        vec = CartPoleVector(n, autoreset_mode="same-step")
    else:
        vec = bridge.vectorize(
            lambda: cp.make_cartpole("discrete", MaxStepsPerEpisode=500), n, autoreset_mode="same-step"
        )
    vec.reset(seed=0)
    return lambda: vec.step(ones)


def _child(variant: str, n: int, steps: int) -> None:
    """Step one variant ``steps`` times (runs inside callgrind)."""
    step = _build(variant, n)
    for _ in range(steps):
        step()


def _rate(fn: Callable[[], None], seconds: float) -> float:
    """Calls per second of ``fn`` over about ``seconds``."""
    count, start = 0, time.perf_counter()
    while True:
        for _ in range(50):
            fn()
        count += 50
        now = time.perf_counter()
        if now - start >= seconds:
            return count / (now - start)


def _ratio(a: str, b: str, value: float, fmt: str = "8.3f") -> None:
    print(f"ratio {a + ' / ' + b:<44}: {value:{fmt}}")


def _instructions(n: int, steps: int, batch_steps: int) -> None:
    print(f"instructions per step (callgrind, N steps minus 0 steps; scalar N={steps}, batched N={batch_steps})")
    print("a ratio is instructions of the reference / of the facade: the speed ratio facade / reference")
    per: Dict[str, float] = {}
    for v in SCALAR:
        per[v] = instructions_per_step(__file__, (v, str(n)), steps)
        print(f"scalar  {NAMES[v]:<36}: {per[v]:12,.0f} instructions/step")
    for v in BATCHED[:2]:  # the loop of N facades is N scalar steps: counted by the scalar rows
        per[v] = instructions_per_step(__file__, (v, str(n)), batch_steps)
        print(f"batched {NAMES[v]:<36}: {per[v]:12,.0f} instructions/batch step ({per[v] / n:,.0f} per env-step)")
    _ratio("rlFunctionEnv", "bare user functions", per["bare"] / per["rlFunctionEnv"])
    _ratio("rlFunctionEnv no-check", "bare user functions", per["bare"] / per["rlFunctionEnv-nocheck"])
    _ratio("rlFunctionEnv", "CartPole class", per["CartPole"] / per["rlFunctionEnv"])
    _ratio("rlFunctionVectorEnv", "CartPoleVector", per["CartPoleVector"] / per["rlFunctionVectorEnv"])


def _wall(n: int, seconds: float, rounds: int) -> None:
    import numpy as np

    steps = {v: _build(v, n) for v in SCALAR + BATCHED}
    per_call = {v: (n if v in BATCHED else 1) for v in steps}
    for step in steps.values():  # warm-up
        for _ in range(50):
            step()
    rates: Dict[str, list] = {v: [] for v in steps}
    for _ in range(rounds):
        for v, step in steps.items():
            share = seconds / 4 if v == "looped" else seconds
            rates[v].append(_rate(step, share) * per_call[v])
    median = {v: statistics.median(r) for v, r in rates.items()}

    def paired(a: str, b: str) -> float:
        return statistics.median(x / y for x, y in zip(rates[a], rates[b]))

    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; medians of {rounds} interleaved rounds")
    for v in SCALAR:
        print(f"scalar  {NAMES[v]:<36}: {median[v]:12,.0f} steps/s")
    for v in BATCHED:
        print(f"batched {NAMES[v]:<36}: {median[v]:12,.0f} env-steps/s ({n} envs)")
    _ratio("rlFunctionEnv", "bare user functions", paired("rlFunctionEnv", "bare"))
    _ratio("rlFunctionEnv no-check", "bare user functions", paired("rlFunctionEnv-nocheck", "bare"))
    _ratio("rlFunctionEnv", "CartPole class", paired("rlFunctionEnv", "CartPole"))
    _ratio("rlFunctionVectorEnv", "CartPoleVector", paired("rlFunctionVectorEnv", "CartPoleVector"))
    _ratio("rlFunctionVectorEnv", "looped facades", paired("rlFunctionVectorEnv", "looped"), "8.1f")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.2, help="per variant per round (wall clock)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--steps", type=int, default=20000, help="scalar steps per count (--instructions)")
    parser.add_argument("--batch-steps", type=int, default=2000, help="batch steps per count (--instructions)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # variant n steps, run by callgrind
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]), int(args.child[2]))
    elif args.instructions:
        _instructions(args.num_envs, args.steps, args.batch_steps)
    else:
        _wall(args.num_envs, args.seconds, args.rounds)


if __name__ == "__main__":
    main()

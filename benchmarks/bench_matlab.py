"""The MATLAB facade's cost, side by side in one run.

Scalar: the rlFunctionEnv cart-pole (MATLAB-style step/reset functions) against the same user
functions called bare (the facade's own overhead) and against bridge's hand-written CartPole class.
Batched: rlFunctionVectorEnv (one call of the user's batched functions per step) against
bridge's CartPoleVector and against N scalar facades looped by bridge.vectorize.

    python benchmarks/bench_matlab.py [--seconds 1] [--num-envs 256]
"""

from __future__ import annotations

import argparse
import sys
import time


def _rate(fn, seconds: float, per_call: int = 1) -> float:
    """Items per second of ``fn`` over about ``seconds`` (after a warm-up)."""
    for _ in range(50):
        fn()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            fn()
        count += 50
    return count * per_call / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--num-envs", type=int, default=256)
    args = parser.parse_args()

    import numpy as np
    from bridge.adapters.matlab import examples as cp

    import bridge
    from bridge.examples import CartPole, CartPoleVector

    def stepper(env, action):
        env.reset(seed=0)

        def step():
            if env.step(action)[2]:
                env.reset()

        return step

    facade = cp.make_cartpole("discrete", MaxStepsPerEpisode=None)
    unchecked = bridge.adapters.matlab.rlFunctionEnv(
        cp.cartpole_observation_info(),
        cp.cartpole_action_info(),
        cp.cartpole_step_discrete,
        cp.cartpole_reset,
        check_actions=False,
    )
    rng = np.random.default_rng(0)
    state = {"info": cp.cartpole_reset(rng)[1]}

    def bare():  # the user's functions alone: what the facade adds is the difference
        _, _, done, info = cp.cartpole_step_discrete(np.float64(10.0), state["info"])
        state["info"] = cp.cartpole_reset(rng)[1] if done else info

    n = args.num_envs
    vector = cp.make_vector_cartpole(n, MaxStepsPerEpisode=500)
    vector.reset(seed=0)
    native_vector = CartPoleVector(n, autoreset_mode="same-step")
    native_vector.reset(seed=0)
    looped = bridge.vectorize(
        lambda: cp.make_cartpole("discrete", MaxStepsPerEpisode=500), n, autoreset_mode="same-step"
    )
    looped.reset(seed=0)
    ones = np.ones(n, dtype=np.int64)

    rates = {
        "bare user functions": _rate(bare, args.seconds),
        "rlFunctionEnv": _rate(stepper(facade, 1), args.seconds),
        "rlFunctionEnv check_actions=False": _rate(stepper(unchecked, 1), args.seconds),
        "bridge.examples.CartPole": _rate(stepper(CartPole(), 1), args.seconds),
    }
    batched = {
        "rlFunctionVectorEnv": _rate(lambda: vector.step(ones), args.seconds, n),
        "CartPoleVector (hand-written)": _rate(lambda: native_vector.step(ones), args.seconds, n),
        "vectorize(rlFunctionEnv) loop": _rate(lambda: looped.step(ones), args.seconds / 2, n),
    }
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    for name, rate in rates.items():
        print(f"scalar  {name:<36}: {rate:12,.0f} steps/s")
    print(
        f"ratio rlFunctionEnv / bare user functions       : {rates['rlFunctionEnv'] / rates['bare user functions']:8.2f}"
    )
    print(
        f"ratio rlFunctionEnv / CartPole class            : {rates['rlFunctionEnv'] / rates['bridge.examples.CartPole']:8.2f}"
    )
    for name, rate in batched.items():
        print(f"batched {name:<36}: {rate:12,.0f} env-steps/s ({n} envs)")
    print(
        f"ratio rlFunctionVectorEnv / CartPoleVector      : {batched['rlFunctionVectorEnv'] / batched['CartPoleVector (hand-written)']:8.2f}"
    )
    print(
        f"ratio rlFunctionVectorEnv / looped facades      : {batched['rlFunctionVectorEnv'] / batched['vectorize(rlFunctionEnv) loop']:8.1f}x"
    )


if __name__ == "__main__":
    main()

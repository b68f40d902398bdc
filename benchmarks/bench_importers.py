"""The cost of the importer round trip: ``to_gymnasium(from_gymnasium("CartPole-v1"))`` against
``gymnasium.make("CartPole-v1")`` directly, side by side in one run.

    python benchmarks/bench_importers.py [--seconds 0.15] [--repeats 30] [--steps 20000] [--no-callgrind]

Wall clock: steps/s, best of ``--repeats`` rounds (the variants back to back in each round, the
order rotating), ratios the median of the per-round ratios round trip / direct (goal >= 0.9).
Then instructions per step under callgrind (``benchmarks/callgrind.py``: ``--steps`` steps minus
0 steps), repeatable where wall clock on a shared machine is not. Both envs keep Gymnasium's own
wrappers (TimeLimit, OrderEnforcing, PassiveEnvChecker): the round trip adds the neutral env, the
export's port and guard on top of them.
"""

from __future__ import annotations

import argparse
from typing import Any, List

import numpy as np
from bench_gymnasium import _rate
from callgrind import instructions_per_step

VARIANTS = ("direct", "round-trip", "round-trip no-check")
# callgrind also counts the imported env alone (no export), to split the cost between the two
COUNTED = VARIANTS + ("imported",)


def _build(variant: str) -> Any:
    import gymnasium

    import bridge

    if variant == "direct":
        return gymnasium.make("CartPole-v1")
    if variant == "imported":
        return bridge.from_gymnasium("CartPole-v1")
    check = variant == "round-trip"
    return bridge.to_gymnasium(bridge.from_gymnasium("CartPole-v1"), check_actions=check)


def _actions() -> List[Any]:
    """One action tape for every variant (Gymnasium's Discrete samples: np.int64)."""
    space = _build("direct").action_space
    space.seed(0)
    return [space.sample() for _ in range(4096)]


def _child(variant: str, steps: int) -> None:
    """Step one variant ``steps`` times (runs inside callgrind)."""
    env = _build(variant)
    actions = _actions()
    env.reset(seed=0)
    for i in range(steps):
        out = env.step(actions[i & 4095])
        if out[2] or out[3]:
            env.reset()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.15, help="per variant per round")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--steps", type=int, default=20000, help="steps per callgrind run")
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)  # variant steps, run by callgrind
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return
    envs = [_build(v) for v in VARIANTS]
    actions = _actions()
    best = [0.0] * len(envs)
    ratios: List[List[float]] = [[], []]
    for r in range(args.repeats):
        order = list(range(len(envs)))[r % len(envs) :] + list(range(len(envs)))[: r % len(envs)]
        rates = [0.0] * len(envs)
        for k in order:
            rates[k] = _rate(envs[k], actions, args.seconds)
            best[k] = max(best[k], rates[k])
        ratios[0].append(rates[1] / rates[0])
        ratios[1].append(rates[2] / rates[0])
    print(f"CartPole-v1 steps/s: best of {args.repeats} rounds of {args.seconds:.2f} s; ratio = round trip / direct")
    print(f"{'':<12} {'direct':>10} {'round trip':>11} {'no-check':>10} {'ratio':>7} {'ratio no-check':>15}")
    print(
        f"{'wall clock':<12} {best[0]:>10,.0f} {best[1]:>11,.0f} {best[2]:>10,.0f} "
        f"{float(np.median(ratios[0])):>7.3f} {float(np.median(ratios[1])):>15.3f}"
    )
    if args.no_callgrind:
        return
    per = [instructions_per_step(__file__, (v,), args.steps) for v in COUNTED]
    print(
        f"{'instr/step':<12} {per[0]:>10,.0f} {per[1]:>11,.0f} {per[2]:>10,.0f} "
        f"{per[0] / per[1]:>7.3f} {per[0] / per[2]:>15.3f}"
    )
    print(f"(instructions: ratio = direct / round trip; from_gymnasium alone, no export: {per[3]:,.0f} per step)")


if __name__ == "__main__":
    main()

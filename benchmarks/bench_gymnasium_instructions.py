"""Single-env export overhead in CPU instructions (valgrind callgrind): repeatable where wall-clock
ratios on a shared machine move by +-10 %.

    python benchmarks/bench_gymnasium_instructions.py [--steps 20000]

For each env and variant (hand-written gymnasium.Env, ``to_gymnasium`` with action checks, without),
runs the same action tape under callgrind with 0 and with ``--steps`` steps; the difference divided
by the steps is instructions per step. Prints them side by side with hand / export ratios.

Then the same for ``gymnasium.make`` of a registered near-zero-cost env (:class:`Drift`, a 2-float
step): the export registered with bridge's ``register`` against the same env hand-written and
registered with ``gymnasium.register``, each behind what ``gymnasium.make`` wraps it in.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from callgrind import instructions_per_step

HERE = os.path.dirname(os.path.abspath(__file__))


def _made(variant: str) -> Any:
    """``gymnasium.make`` of the Drift export (bridge's ``register``) or of the hand-written Drift."""
    import gymnasium
    from bench_gymnasium import Drift, HandDrift
    from bridge.adapters.gymnasium import register

    if variant == "hand":
        gymnasium.register("bench/HandDrift-v0", entry_point=HandDrift, max_episode_steps=200)
        return gymnasium.make("bench/HandDrift-v0")
    register("bench/Drift-v0", entry_point=Drift, max_episode_steps=200)
    return gymnasium.make("bench/Drift-v0")


def _child(env: str, variant: str, steps: int) -> None:
    """Step one variant ``steps`` times (runs inside callgrind)."""
    sys.path.insert(0, HERE)
    if env == "Drift":
        target = _made(variant)
        target.reset(seed=0)
        for i in range(steps):
            out = target.step(i & 1)
            if out[2] or out[3]:
                target.reset()
        return
    from bench_gymnasium import HandCartPole, HandGridWorld, HandPointMass
    from bridge.adapters.gymnasium import to_gymnasium

    from bridge.examples import CartPole, GridWorld, PointMass

    hand_cls, neutral_cls = {
        "GridWorld": (HandGridWorld, GridWorld),
        "PointMass": (HandPointMass, PointMass),
        "CartPole": (HandCartPole, CartPole),
    }[env]
    hand = hand_cls()
    hand.action_space.seed(0)
    actions = [hand.action_space.sample() for _ in range(4096)]
    built = {
        "hand": lambda: hand,
        "export": lambda: to_gymnasium(neutral_cls()),
        "no-check": lambda: to_gymnasium(neutral_cls(), check_actions=False),
    }
    target = built[variant]()
    target.reset(seed=0)
    for i in range(steps):
        out = target.step(actions[i & 4095])
        if out[2] or out[3]:
            target.reset()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # env variant steps, run by callgrind
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return
    print(
        f"instructions per step (callgrind, {args.steps} steps minus 0 steps); ratio = hand / export (target >= 0.97)"
    )
    print(
        f"{'env':<10} {'hand-written':>13} {'export':>10} {'export no-check':>16} {'ratio':>7} {'ratio no-check':>15}"
    )
    for env in ("GridWorld", "PointMass", "CartPole"):
        per = [instructions_per_step(__file__, (env, v), args.steps) for v in ("hand", "export", "no-check")]
        print(
            f"{env:<10} {per[0]:>13,.0f} {per[1]:>10,.0f} {per[2]:>16,.0f} {per[0] / per[1]:>7.3f} {per[0] / per[2]:>15.3f}"
        )
    print("\ngymnasium.make of a registered near-zero-cost env (Drift); ratio = hand / export (target >= 1.0)")
    hand, export = (instructions_per_step(__file__, ("Drift", v), args.steps) for v in ("hand", "export"))
    print(f"{'Drift':<10} {hand:>13,.0f} {export:>10,.0f} {'':>16} {hand / export:>7.3f}")


if __name__ == "__main__":
    main()

"""``from_dm_env`` on dm_control's cartpole swingup against dm_control directly, side by side.

    python benchmarks/bench_dm_env.py [--steps 2000] [--no-instructions]

The same action tape (a sine) is stepped through ``suite.load("cartpole", "swingup")`` and through
``from_dm_env`` of it (the neutral Env's own ``step``, no export in between: the importer alone). Prints steps/s of each (best of 5 interleaved runs)
and, under valgrind's callgrind (see callgrind.py), instructions per step and their ratio; the
goal is direct / from_dm_env >= 0.95.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

os.environ.setdefault("MUJOCO_GL", "disable")  # no rendering here; dm_control's import would try GLFW
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _target(variant: str) -> Any:
    from dm_control import suite

    from bridge import from_dm_env

    native = suite.load("cartpole", "swingup", task_kwargs={"random": 0})
    return native if variant == "direct" else from_dm_env(native)


def _loop(variant: str, steps: int) -> None:
    import numpy as np

    env = _target(variant)
    actions = [np.array([np.sin(i / 10)]) for i in range(1000)]
    if variant == "direct":
        env.reset()
        for i in range(steps):
            if env.step(actions[i % 1000]).last():
                env.reset()
    else:
        env.reset()
        for i in range(steps):
            out = env.step(actions[i % 1000])
            if out[2] or out[3]:
                env.reset()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=2, metavar=("VARIANT", "STEPS"))
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--no-instructions", action="store_true")
    args = parser.parse_args()
    if args.child:
        _loop(args.child[0], int(args.child[1]))
        return
    best = {"direct": 0.0, "from_dm_env": 0.0}
    for _ in range(5):  # interleaved, so a busy moment of the shared machine hits both
        for variant in best:
            start = time.perf_counter()
            _loop(variant, args.steps)
            best[variant] = max(best[variant], args.steps / (time.perf_counter() - start))
    print(f"{'':14}{'direct':>12}{'from_dm_env':>14}{'ratio':>8}")
    d, f = best["direct"], best["from_dm_env"]
    print(f"{'steps/s':14}{d:12.0f}{f:14.0f}{f / d:8.3f}")
    if not args.no_instructions:
        from callgrind import instructions_per_step

        per = {v: instructions_per_step(os.path.abspath(__file__), [v], args.steps) for v in best}
        d, f = per["direct"], per["from_dm_env"]
        print(f"{'instr/step':14}{d:12.0f}{f:14.0f}{d / f:8.3f}")


if __name__ == "__main__":
    main()

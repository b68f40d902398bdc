"""The Octave-hosted .m env's cost, side by side in one run.

Per step: the .m cart-pole (``cartpole_step.m``) through ``rlFunctionEnv`` (Python drives a
persistent octave-cli over its pipes) against the same .m step in Octave's own loop (``tic``/``toc``
around ``[NextObs, Reward, IsDone, LoggedSignals] = cartpole_step(Action, LoggedSignals)``, resets
included), and its Python port for reference. Interleaved rounds; each ratio is the median of the
per-round ratios (DESIGN.md section 7: the target is at most 1.2x).
Training: SB3 PPO steps per second on the .m cart-pole against its Python port.

    python benchmarks/bench_octave.py [--steps 2000] [--rounds 5] [--ppo-steps 4096]
    python benchmarks/bench_octave.py --instructions [--steps 1000]

``--instructions`` counts CPU instructions per step under valgrind's callgrind instead, load-free:
Octave's own loop, and through rlFunctionEnv Octave's side (octave-cli started under callgrind
through ``$ENVBRIDGE_OCTAVE``) plus Python's side (this script's child under callgrind); each is the
difference of a run of N steps and a run of 0, so start-up cancels out.

On a loaded machine a round trip waits for the scheduler twice (Python and Octave are two
processes): read the wall ratio together with the load average printed first, and the CPU ratio
(Python's and Octave's CPU time per step, from /proc, against the own loop's ``cputime``).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List, Tuple

import numpy as np
from bridge.adapters.matlab.octave import ports
from bridge.adapters.matlab.octave.session import octave_program

OWN_LOOP = """
[Obs, LoggedSignals] = cartpole_reset();
Forces = [-10, 10];
tic; t0 = cputime ();
for i = 1:{steps}
  [Obs, Reward, IsDone, LoggedSignals] = cartpole_step(Forces(mod(i, 2) + 1), LoggedSignals);
  if IsDone
    [Obs, LoggedSignals] = cartpole_reset();
  end
end
printf("%.6f %.6f\\n", toc, cputime () - t0);
"""


def own_loop_us(steps: int) -> Tuple[float, float]:
    """(wall, CPU) microseconds per step of the .m step in Octave's own loop (startup not counted)."""
    command = [octave_program(), "--norc", "--no-history", "--quiet", "--no-window-system", "--eval"]
    done = subprocess.run(
        command + [OWN_LOOP.format(steps=steps)], cwd=ports.EXAMPLES, capture_output=True, text=True, check=True
    )
    wall, cpu = (float(v) for v in done.stdout.split()[-2:])
    return wall * 1e6 / steps, cpu * 1e6 / steps


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def facade_us(env, steps: int) -> Tuple[float, float]:
    """(wall, CPU) microseconds per step through rlFunctionEnv; CPU adds Python's and Octave's (if any)."""
    host = env.unwrapped._host
    pid = host.session.process.pid if host is not None else None
    env.reset(seed=0)
    actions = [np.int64(i % 2) for i in range(steps)]
    octave = _cpu_seconds(pid) if pid else 0.0
    python, start = time.process_time(), time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    wall = time.perf_counter() - start
    cpu = time.process_time() - python + ((_cpu_seconds(pid) - octave) if pid else 0.0)
    return wall * 1e6 / steps, cpu * 1e6 / steps


def ppo_steps_per_second(make, steps: int) -> float:
    import torch
    from bridge.adapters.sb3 import to_sb3
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    env = make()
    try:
        model = PPO("MlpPolicy", to_sb3(env), n_steps=1024, batch_size=64, n_epochs=10, seed=0)
        start = time.perf_counter()
        model.learn(steps)
        return steps / (time.perf_counter() - start)
    finally:
        env.close()


VALGRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]


def _collected(text: str) -> int:
    return int(re.search(r"Collected : (\d+)", text).group(1))


def own_loop_instructions(steps: int) -> float:
    """Instructions per step of the .m step in Octave's own loop."""

    def run(n: int) -> int:
        command = VALGRIND + [octave_program(), "--norc", "--no-history", "--quiet", "--no-window-system", "--eval"]
        done = subprocess.run(
            command + [OWN_LOOP.format(steps=n)], cwd=ports.EXAMPLES, capture_output=True, text=True, check=True
        )
        return _collected(done.stderr)

    return (run(steps) - run(0)) / steps


def hosted_instructions(steps: int) -> Tuple[float, float]:
    """(Octave's, Python's) instructions per step of the .m step through rlFunctionEnv."""
    with tempfile.TemporaryDirectory() as folder:
        wrapper = os.path.join(folder, "octave-cli")
        with open(wrapper, "w") as f:
            log = os.path.join(folder, "octave.%p")
            f.write(f'#!/bin/sh\nexec {" ".join(VALGRIND)} --log-file={log} {octave_program()} "$@"\n')
        os.chmod(wrapper, 0o755)

        def run(n: int) -> Tuple[int, int]:
            env = dict(os.environ, ENVBRIDGE_OCTAVE=wrapper, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
            command = VALGRIND + [sys.executable, os.path.abspath(__file__), "--child", str(n)]
            python = _collected(subprocess.run(command, env=env, capture_output=True, text=True, check=True).stderr)
            (name,) = [f for f in os.listdir(folder) if f.startswith("octave.")]
            with open(os.path.join(folder, name)) as f:
                octave = _collected(f.read())
            os.remove(os.path.join(folder, name))
            return octave, python

        (octave1, python1), (octave0, python0) = run(steps), run(0)
    return (octave1 - octave0) / steps, (python1 - python0) / steps


def child(steps: int) -> None:
    """The measured loop of --instructions: the .m cart-pole through rlFunctionEnv for ``steps`` steps."""
    env = ports.make_m_cartpole(None, timeout=None)  # no deadline: Octave runs under callgrind
    env.reset(seed=0)
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(np.int64(i % 2))
        if terminated or truncated:
            env.reset()
    env.close()


def instructions(steps: int) -> None:
    own = own_loop_instructions(steps)
    octave, python = hosted_instructions(steps)
    print(f"{'instructions per step (callgrind, ' + str(steps) + ' steps)':<56} {'instr':>10} {'vs own':>8}")
    print(f"{'cartpole_step.m in Octave own loop':<56} {own:>10.0f} {1.0:>7.2f}x")
    print(f"{'through rlFunctionEnv: Octave side':<56} {octave:>10.0f} {octave / own:>7.2f}x")
    print(f"{'through rlFunctionEnv: Python side':<56} {python:>10.0f} {python / own:>7.2f}x")
    print(f"{'through rlFunctionEnv: both':<56} {octave + python:>10.0f} {(octave + python) / own:>7.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ppo-steps", type=int, default=4096, help="0 skips the training comparison")
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind instead")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    if args.instructions:
        instructions(args.steps)
        return
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    m_env, py_env = ports.make_m_cartpole(None), ports.make_py_cartpole(None)
    own: List[Tuple[float, float]] = []
    hosted: List[Tuple[float, float]] = []
    port: List[Tuple[float, float]] = []
    try:
        for _ in range(args.rounds):
            own.append(own_loop_us(args.steps))
            hosted.append(facade_us(m_env, args.steps))
            port.append(facade_us(py_env, args.steps))
    finally:
        m_env.close()
    head = f"per step (median of {args.rounds} rounds of {args.steps})"
    print(f"{head:<52} {'wall us':>9} {'vs own':>8} {'CPU us':>9} {'vs own':>8}")
    for label, rows in (
        ("cartpole_step.m in Octave's own loop", own),
        ("cartpole_step.m through rlFunctionEnv (octave-cli)", hosted),
        ("its Python port through rlFunctionEnv", port),
    ):
        cells = []
        for k in (0, 1):
            cells.append(f"{statistics.median(r[k] for r in rows):>9.1f}")
            cells.append(f"{statistics.median(r[k] / o[k] for r, o in zip(rows, own)):>7.2f}x")
        print(f"{label:<52} " + " ".join(cells))
    if args.ppo_steps:
        m_rate = ppo_steps_per_second(lambda: ports.make_m_cartpole(500), args.ppo_steps)
        py_rate = ppo_steps_per_second(lambda: ports.make_py_cartpole(500), args.ppo_steps)
        print(f"{'SB3 PPO (' + str(args.ppo_steps) + ' steps)':<52} {'steps/s':>10} {'vs port':>12}")
        print(f"{'the .m cart-pole (Octave)':<52} {m_rate:>10.0f} {m_rate / py_rate:>11.2f}x")
        print(f"{'its Python port':<52} {py_rate:>10.0f} {1.0:>11.2f}x")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()

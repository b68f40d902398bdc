"""DreamerV2 learns through the export, and learns the same as on a hand-written gym 0.23 env.

    python benchmarks/bench_dreamerv2_learning.py [--steps 15000] [--seeds 0 1 2] [--jobs 1] [--out DIR]

For each seed it trains twice with the very same DreamerV2 ``Config`` (preset ``control``, only the
logdir differs), each run in its own process:

* export: ``bridge.adapters.dreamerv2.train(bridge.make("envbridge/PointMass-v0"), ...)``;
* hand: ``dreamerv2.api.train`` on :class:`HandPointMass`, the same env written by hand against
  gym 0.23 (a Dict observation under the export's key, so the config is the same), given directly.

The learning curves are read back from what DreamerV2 wrote: episode returns from the replay
(``train_episodes/*.npz``) and the world-model loss from ``metrics.jsonl``. It prints, per run, the
mean return of the episodes that ended in the last fifth of the steps and the wall time, the random
policy's mean return, and a hierarchical bootstrap (runs, then episodes within a run) of the
difference export - hand: a 95 % interval that holds 0 means no difference is detected at this
budget. DreamerV2 is not bit-reproducible (its replay samples from an unseeded generator), so
seeds are compared as samples. Writes ``DIR/learning.png`` and ``DIR/summary.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ENV_ID = "envbridge/PointMass-v0"
TIME_LIMIT = 50  # the registered limit of envbridge/PointMass-v0; DreamerV2's TimeLimit for the hand env


def config(steps: int, seed: int, logdir: str) -> Any:
    """The one Config both runs of a seed use (derived from the export, as ``train`` derives it)."""
    from bridge.adapters.dreamerv2 import dreamer_config, to_dreamer_ready

    ready = to_dreamer_ready(ENV_ID)
    cfg = dreamer_config(ready, preset="control", steps=steps, seed=seed, time_limit=TIME_LIMIT, logdir=logdir)
    ready.close()
    return cfg


def hand_point_mass(seed: int) -> Any:
    """PointMass as a user writes it for DreamerV2 by hand (gym 0.23; done = reached the origin)."""
    import gym

    class HandPointMass(gym.Env):
        observation_space = gym.spaces.Dict({"vector": gym.spaces.Box(-1.0, 1.0, (2,), np.float32)})
        action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

        def __init__(self) -> None:
            self.rng = np.random.default_rng(seed)
            self.pos = np.zeros(2, np.float32)

        def reset(self) -> Dict[str, np.ndarray]:
            self.pos = self.rng.uniform(-1.0, 1.0, size=2).astype(np.float32)
            return {"vector": self.pos.copy()}

        def step(self, action: Any) -> Tuple[Dict[str, np.ndarray], float, bool, dict]:
            move = np.clip(np.asarray(action, dtype=np.float32), -1.0, 1.0)
            self.pos = np.clip(self.pos + np.float32(0.1) * move, -1.0, 1.0).astype(np.float32)
            distance = float(np.linalg.norm(self.pos))
            done = distance < 0.1
            return {"vector": self.pos.copy()}, (1.0 if done else -distance), done, {}

    return HandPointMass()


def _child(variant: str, seed: int, steps: int, logdir: str) -> None:
    """One run (in its own process): prints its wall time as JSON on the last line."""
    cfg = config(steps, seed, logdir)
    start = time.perf_counter()
    if variant == "export":
        from bridge.adapters.dreamerv2 import train

        import bridge

        train(bridge.make(ENV_ID), cfg)
    else:
        import tensorflow as tf
        from bridge.adapters.dreamerv2 import load_dreamerv2

        api = load_dreamerv2()
        tf.random.set_seed(seed)  # as train() does
        with open(os.path.join(logdir, "stdout.log"), "w") as log:
            stdout, sys.stdout = sys.stdout, log
            try:
                api.train(hand_point_mass(seed), cfg, [api.common.JSONLOutput(logdir)])
            finally:
                sys.stdout = stdout
    print(json.dumps({"wall": time.perf_counter() - start}))


def _run(variant: str, seed: int, steps: int, out: pathlib.Path) -> subprocess.Popen:
    logdir = out / f"{variant}-seed{seed}"
    logdir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, __file__, "--child", variant, str(seed), str(steps), str(logdir)]
    quiet = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=quiet, cwd=out)


def _metrics(logdir: pathlib.Path, key: str) -> Tuple[np.ndarray, np.ndarray]:
    """DreamerV2's logged scalar ``key`` from ``metrics.jsonl``, (step, value) in the order written."""
    rows = [json.loads(line) for line in logdir.joinpath("metrics.jsonl").read_text().splitlines() if line]
    rows = [r for r in rows if key in r]
    return np.array([r["step"] for r in rows]), np.array([r[key] for r in rows], dtype=np.float64)


def _episodes(logdir: pathlib.Path) -> List[Dict[str, np.ndarray]]:
    """The replay episodes (``train_episodes/*.npz``; their names order them only to the second)."""
    out = []
    for path in sorted(logdir.joinpath("train_episodes").glob("*.npz")):
        with np.load(path) as data:
            out.append({k: data[k] for k in data.files})
    return out


def curve(logdir: pathlib.Path) -> Tuple[np.ndarray, np.ndarray]:
    """(step at which each episode ended, its return): DreamerV2's per-episode ``return`` metric."""
    return _metrics(logdir, "return")


def replay_agreement(logdir: pathlib.Path) -> Tuple[int, int]:
    """How many logged episode returns a replay episode's summed rewards reproduce, of how many.

    One is expected to miss: api.train's ``driver.reset()`` after the prefill does not clear the
    replay's unfinished episode, so the prefill's last partial episode is stored glued to the next.
    """
    _, returns = curve(logdir)
    stored = np.array([e["reward"].astype(np.float64).sum() for e in _episodes(logdir)])
    return sum(bool(np.isclose(stored, r, atol=1e-4).any()) for r in returns), len(returns)


def model_loss(logdir: pathlib.Path) -> Tuple[np.ndarray, np.ndarray]:
    """DreamerV2's logged world-model loss, (step, value)."""
    return _metrics(logdir, "model_loss")


def identical_episodes(a: pathlib.Path, b: pathlib.Path) -> int:
    """How many replay episodes two runs share exactly (every key, every value)."""

    def digests(logdir: pathlib.Path) -> set:
        return {b"".join(e[k].tobytes() for k in sorted(e)) for e in _episodes(logdir)}

    return len(digests(a) & digests(b))


def random_returns(episodes: int = 400, seed: int = 0) -> np.ndarray:
    """Returns of uniform random actions on the same env (and the same step limit)."""
    import bridge

    env, rng, out = bridge.make(ENV_ID), np.random.default_rng(seed), []
    env.reset(seed=seed)
    for _ in range(episodes):
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
            total, done = total + reward, terminated or truncated
        out.append(total)
        env.reset()
    return np.array(out)


def final(ends: np.ndarray, returns: np.ndarray, steps: int) -> np.ndarray:
    """Returns of the episodes that ended in the last fifth of the run."""
    return returns[ends > 0.8 * steps]


def bootstrap_difference(a: List[np.ndarray], b: List[np.ndarray], rounds: int = 4000) -> Tuple[float, float, float]:
    """Mean(a) - mean(b) and a 95 % interval, resampling runs and then episodes within each run."""
    rng = np.random.default_rng(0)

    def draw(runs: List[np.ndarray]) -> float:
        picked = [runs[i] for i in rng.integers(0, len(runs), len(runs))]
        return float(np.mean([rng.choice(r, len(r)).mean() for r in picked]))

    diffs = np.array([draw(a) - draw(b) for _ in range(rounds)])
    point = float(np.mean([r.mean() for r in a]) - np.mean([r.mean() for r in b]))
    return point, float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))


def _plot(out: pathlib.Path, runs: Dict[Tuple[str, int], pathlib.Path], random_mean: float, steps: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"export": "tab:blue", "hand": "tab:orange"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    for (variant, seed), logdir in sorted(runs.items()):
        ends, returns = curve(logdir)
        window = 20
        smooth = np.convolve(returns, np.ones(window) / window, mode="valid")
        style = "-" if seed == min(s for _, s in runs) else "--"
        left.plot(ends[window - 1 :], smooth, style, color=colors[variant], label=f"{variant} seed {seed}")
        loss_steps, loss = model_loss(logdir)
        right.plot(loss_steps, loss, style, color=colors[variant], label=f"{variant} seed {seed}")
    left.axhline(random_mean, color="tab:red", linestyle=":", label="random policy")
    left.axvline(0.8 * steps, color="grey", linewidth=0.5)
    left.set(xlabel="env steps", ylabel="episode return (mean of 20)", title="PointMass: return (replay episodes)")
    right.set(xlabel="env steps", ylabel="model_loss", title="world-model loss (metrics.jsonl)", yscale="log")
    left.legend(loc="lower right", fontsize=8)
    right.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "learning.png")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=15000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (1: wall times are per run)")
    parser.add_argument("--out", default="runs/dreamerv2-learning")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)  # variant seed steps logdir
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]), int(args.child[2]), args.child[3])
        return
    out = pathlib.Path(args.out).resolve()
    todo = [(variant, seed) for seed in args.seeds for variant in ("export", "hand")]
    runs, walls, running = {}, {}, []
    while todo or running:
        while todo and len(running) < args.jobs:
            variant, seed = todo.pop(0)
            running.append(((variant, seed), _run(variant, seed, args.steps, out)))
        key, proc = running.pop(0)
        stdout, _ = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"{key[0]} run of seed {key[1]} failed (exit {proc.returncode}); see {out}")
        walls[key] = json.loads(stdout.strip().splitlines()[-1])["wall"]
        runs[key] = out / f"{key[0]}-seed{key[1]}"
    rand = random_returns()
    finals = {key: final(*curve(logdir), args.steps) for key, logdir in runs.items()}
    print(
        f"PointMass, preset control, {args.steps} steps per run, jobs={args.jobs}; final = episodes ending after "
        f"step {int(0.8 * args.steps)}"
    )
    print(
        f"{'run':<14} {'final mean return':>18} {'episodes':>9} {'first-fifth mean':>17} {'wall s':>7} "
        f"{'in replay':>10}"
    )
    for key in sorted(runs):
        ends, returns = curve(runs[key])
        first = returns[ends <= 0.2 * args.steps]
        matched, total = replay_agreement(runs[key])
        print(
            f"{key[0] + ' seed ' + str(key[1]):<14} {finals[key].mean():>18.2f} {len(finals[key]):>9} "
            f"{first.mean():>17.2f} {walls[key]:>7.0f} {f'{matched}/{total}':>10}"
        )
    print(f"{'random policy':<14} {rand.mean():>18.2f} {len(rand):>9}")
    export = [finals[k] for k in sorted(finals) if k[0] == "export"]
    hand = [finals[k] for k in sorted(finals) if k[0] == "hand"]
    point, low, high = bootstrap_difference(export, hand)
    for seed in args.seeds:
        ends, _ = curve(runs[("export", seed)])
        same = identical_episodes(runs[("export", seed)], runs[("hand", seed)])
        print(
            f"seed {seed}: {same} of {len(ends)} replay episodes identical in export and hand (observations, "
            f"actions, rewards, flags; the first {same} end by step {ends[same - 1] if same else 0})"
        )
    verdict = "no difference detected" if low <= 0 <= high else "they DIFFER"
    print(f"export - hand final mean return: {point:+.2f}, 95 % interval [{low:+.2f}, {high:+.2f}]: {verdict}")
    _plot(out, runs, float(rand.mean()), args.steps)
    summary = {
        "steps": args.steps,
        "runs": {f"{k[0]}-seed{k[1]}": {"final": float(finals[k].mean()), "wall": walls[k]} for k in runs},
        "random": float(rand.mean()),
        "difference": [point, low, high],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"wrote {out / 'learning.png'} and {out / 'summary.json'}")


if __name__ == "__main__":
    main()

"""The Episode Manager, as files and lines: ``training-progress.csv`` (one row per episode) and
``training-progress.png`` (episode reward, average reward, episode Q0, the stop value), rewritten
while training runs; a progress line on the terminal; MATLAB's per-episode line with ``Verbose``.

matplotlib is imported only with ``Plots="training-progress"`` (the ``cli`` extra).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, List

from bridge.compat import optional_import

__all__ = ["TrainingProgress", "CSV_NAME", "PNG_NAME", "verbose_line"]

CSV_NAME, PNG_NAME = "training-progress.csv", "training-progress.png"
_HEADER = "EpisodeIndex,EpisodeReward,EpisodeSteps,AverageReward,AverageSteps,TotalAgentSteps,EpisodeQ0"
_REFRESH_SECONDS = 2.0
_REWARD_CRITERIA = ("AverageReward", "EpisodeReward", "EpisodeQ0")


def verbose_line(row: List[float], max_episodes: int) -> str:
    """MATLAB's per-episode line."""
    k, reward, steps, average_reward, _, total, q0 = row
    return (
        f"Episode: {int(k):>4d}/{max_episodes} | Episode reward: {reward:>9.2f} | Episode steps: {int(steps):>5d} | "
        f"Average reward: {average_reward:>9.2f} | Step Count: {int(total):>7d} | Episode Q0: {q0:>9.2f}"
    )


class TrainingProgress:
    """Writes the CSV and PNG (``Plots="training-progress"``) and the terminal lines."""

    def __init__(self, agent: str, env: str, opts: Any, started: float) -> None:
        self.opts, self.agent, self.env, self.started = opts, agent, env, started
        self.rows: List[List[float]] = []
        self.plots = opts.Plots == "training-progress"
        self._drawn = 0.0
        if self.plots:
            matplotlib = optional_import("matplotlib", "Plots='training-progress'")
            matplotlib.use("Agg")  # files only: no display on CI or over ssh
            self._plt = optional_import("matplotlib.pyplot", "Plots='training-progress'")
            os.makedirs(opts.ProgressDirectory, exist_ok=True)
            self.csv = os.path.join(opts.ProgressDirectory, CSV_NAME)
            self.png = os.path.join(opts.ProgressDirectory, PNG_NAME)
            with open(self.csv, "w", encoding="utf-8") as f:
                f.write(_HEADER + "\n")

    def episode(self, row: List[float], final: bool = False) -> None:
        self.rows.append(row)
        if self.opts.Verbose:
            print(verbose_line(row, self.opts.MaxEpisodes), flush=True)
        if not self.plots:
            return
        with open(self.csv, "a", encoding="utf-8") as f:
            f.write(",".join(repr(float(v)) if i in (1, 3, 4, 6) else str(int(v)) for i, v in enumerate(row)) + "\n")
        now = time.time()
        if not self.opts.Verbose and sys.stderr.isatty():  # a log file gets no carriage returns
            sys.stderr.write(
                f"\rtraining {self.agent}: episode {int(row[0])}/{self.opts.MaxEpisodes}, "
                f"average reward {row[3]:.2f}, {int(row[5])} steps, {now - self.started:.0f} s"
            )
            sys.stderr.flush()
        if final or now - self._drawn >= _REFRESH_SECONDS:
            self.draw()
            self._drawn = now

    def close(self, reason: str) -> None:
        if not self.plots:
            return
        self.draw(reason)
        if not self.opts.Verbose:
            sys.stderr.write(f"\n{self.agent}: stopped by {reason}; {self.png}, {self.csv}\n")

    def draw(self, reason: str = "") -> None:
        plt, rows, opts = self._plt, self.rows, self.opts
        fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
        if rows:
            k = [r[0] for r in rows]
            ax.plot(k, [r[1] for r in rows], "o-", ms=3, lw=0.8, color="tab:blue", label="Episode Reward")
            ax.plot(k, [r[3] for r in rows], lw=2, color="tab:red", label="Average Reward")
            ax.plot(k, [r[6] for r in rows], lw=1, color="tab:orange", label="Episode Q0")
        if opts.StopTrainingCriteria in _REWARD_CRITERIA:
            ax.axhline(opts.StopTrainingValue, ls="--", color="gray", label=f"{opts.StopTrainingCriteria} stop value")
        ax.set_xlabel("Episode Number")
        ax.set_ylabel("Episode Reward")
        ax.set_title(f"{self.agent}: Episode Manager")
        done = f"stopped by {reason}" if reason else "training"
        total = int(rows[-1][5]) if rows else 0
        ax.text(
            0.01,
            0.98,
            f"{len(rows)} episodes, {total} steps, {time.time() - self.started:.0f} s, {done}",
            transform=ax.transAxes,
            va="top",
            fontsize=8,
        )
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        tmp = self.png + ".tmp.png"
        fig.savefig(tmp)
        plt.close(fig)
        os.replace(tmp, self.png)  # a reader never sees a half-written picture

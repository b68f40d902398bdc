"""The learning-curve PNG of ``envbridge demo`` and ``envbridge train`` (matplotlib, lazily), shared
by the runtimes that train."""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
from bridge.compat import optional_import

__all__ = ["plot", "require_cli_extras"]


def require_cli_extras(progress: bool) -> Any:
    plt_module = optional_import("matplotlib", "envbridge's learning-curve plot")
    plt_module.use("Agg")  # files only: no display on CI or over ssh
    if progress:
        optional_import("tqdm", "the progress bar")
        optional_import("rich", "the progress bar")
    return optional_import("matplotlib.pyplot", "envbridge's learning-curve plot")


def plot(
    plt: Any,
    episodes: List[Tuple[int, float, int]],
    random_return: float,
    path: str,
    title: str,
    means: bool = False,
) -> None:
    """The curve of ``episodes`` (timestep, return, length) against the random policy's return.

    ``means``: each point is already a mean (RLlib reports one per iteration), drawn as a line with
    markers; otherwise single episodes are dots under their moving mean. The y-range holds the
    random line with a margin, so it never sits on the frame.
    """
    steps = np.array([e[0] for e in episodes], dtype=np.float64)
    returns = np.array([e[1] for e in episodes], dtype=np.float64)
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    if means:
        ax.plot(steps, returns, "o-", markersize=3, color="tab:blue", label="mean episode return (per iteration)")
    else:
        window = max(1, min(50, len(returns) // 10))
        smooth = np.convolve(returns, np.ones(window) / window, mode="valid") if len(returns) else returns
        ax.plot(steps, returns, ".", alpha=0.25, color="tab:blue", label="episode return")
        label = f"moving mean of {window} episodes" if window > 1 else "episode return"
        ax.plot(steps[window - 1 :], smooth, color="tab:blue", label=label)
    ax.axhline(random_return, color="tab:red", linestyle="--", label="random policy")
    values = np.concatenate([returns[np.isfinite(returns)], [random_return]])
    low, high = float(values.min()), float(values.max())
    pad = max(0.05 * (high - low), 0.05 * max(abs(low), abs(high)), 1e-3)
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel("timesteps")
    ax.set_ylabel("return")
    ax.set_title(title)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

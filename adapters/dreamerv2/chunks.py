"""How ``dreamerv2.api.train`` chunks a run, and the configs whose chunks do not fit ``steps``.

api.train fills the replay with ``prefill`` random steps, then loops ``while step < steps:
driver(policy, steps=eval_every)``: whole chunks of ``eval_every`` steps, so a chunk that does not
end at ``steps`` runs past it (``eval_every`` 4000 with ``steps`` 300 runs 4,000 steps). Inside,
``train_every`` and ``log_every`` fire on ``common.Every``: once at the first step, then every
N steps. So after the prefill there are ``span = steps - prefill`` policy steps to share out.

Derived values (the caller did not set the key) are adjusted to fit; a value the caller set that
does not fit is refused with the value that would.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

from bridge.errors import SpecError, message

__all__ = ["fitted", "check_chunks"]


def fitted(chosen: Dict[str, Any], steps: float, prefill: int) -> Dict[str, float]:
    """``eval_every``, ``train_every`` and ``log_every`` adjusted to a run of ``steps`` after ``prefill``:
    whole eval chunks that end at ``steps`` (within one step per chunk), at least two trainings,
    and at least three loss summaries."""
    span = max(1.0, steps - prefill)
    chunks = math.ceil(span / max(1.0, float(chosen["eval_every"])))
    return {
        "eval_every": float(math.ceil(span / chunks)),
        "train_every": min(float(chosen["train_every"]), max(1.0, span // 2)),
        "log_every": min(float(chosen["log_every"]), max(1.0, span // 3)),
    }


def check_chunks(cfg: Any, given: Dict[str, Any], prefill: Optional[float] = None) -> None:
    """Refuse a key the caller set (``given``) whose chunking does not fit ``cfg.steps`` after
    ``prefill`` (the steps the random prefill runs; default ``cfg.prefill``)."""
    steps, prefill = float(cfg.steps), float(cfg.prefill if prefill is None else prefill)
    span = steps - prefill
    where = f"steps={steps:g}, prefill={prefill:g}"
    if "eval_every" in given:
        every = float(cfg.eval_every)
        end = prefill + math.ceil(span / every) * every
        if end != steps:
            fit = span / math.ceil(span / every)
            suggestion = f"eval_every={fit:g}" if fit == int(fit) else f"steps={end:g}"
            raise SpecError(
                message(
                    "DreamerV2 config 'eval_every'",
                    f"split the {span:g} steps after the prefill into whole chunks (api.train runs "
                    f"eval_every steps at a time, so this run would end at step {end:g}, not {steps:g})",
                    f"eval_every={every:g} with {where}",
                    f"Pass {suggestion}, or leave eval_every to the preset",
                )
            )
    for key, what in (("train_every", "train the agent"), ("log_every", "print the losses")):
        if key in given and float(getattr(cfg, key)) >= span:
            raise SpecError(
                message(
                    f"DreamerV2 config {key!r}",
                    f"be less than the {span:g} steps after the prefill (else api.train would {what} "
                    "only once, at the first step)",
                    f"{key}={float(getattr(cfg, key)):g} with {where}",
                    f"Pass {key}={max(1, int(span // 3))}, or leave {key} to the preset",
                )
            )

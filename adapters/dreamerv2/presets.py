"""Where a DreamerV2 run's config comes from, before the keys derived from the env: a preset, then
the user's keys (``--config FILE.yaml`` mappings and ``--config KEY=VALUE`` pairs on the CLI).

Presets change model and data sizes (and ``control`` the learning settings), never ``steps`` or
``logdir`` (those belong to the run):

* ``"tiny"`` (the default): 32-unit networks, batch 4 x 8; a 300-step GridWorld run takes ~20 s on
  2 CPU cores. It is the default because DreamerV2's own sizes (1024-unit RSSM, batch 16 x 50,
  prefill 10000) take hours on a CPU and refuse any run shorter than 10000 steps;
* ``"small"``: 128/200-unit networks, batch 8 x 32; still CPU-friendly;
* ``"control"``: for low-dimensional vector control: 64-unit networks, batch 16 x 16, and
  DreamerV2's own dmc learning settings (free nats 1, unclipped rewards, no end prioritisation,
  a small actor entropy) with learning rates raised for short runs. PointMass goes from a random
  policy's return to near-optimal within 10,000 steps (6,500-10,000 in six runs; 12,000 steps take
  ~4 minutes on 2 CPU cores; see ``benchmarks/bench_dreamerv2_learning.py``);
* ``"default"``: DreamerV2's own ``configs.yaml`` defaults, unchanged.
"""

from __future__ import annotations

import copy
from typing import Any, Dict

from bridge.errors import SpecError, message

__all__ = ["PRESETS", "DEFAULT_PRESET", "preset_overrides"]

DEFAULT_PRESET = "tiny"

PRESETS: Dict[str, Dict[str, Any]] = {
    "tiny": {
        "rssm": {"hidden": 32, "deter": 32, "stoch": 4, "discrete": 4},
        "encoder": {"mlp_layers": [32, 32], "cnn_depth": 4},
        "decoder": {"mlp_layers": [32, 32], "cnn_depth": 4},
        "reward_head": {"layers": 1, "units": 32},
        "discount_head": {"layers": 1, "units": 32},
        "actor": {"layers": 1, "units": 32},
        "critic": {"layers": 1, "units": 32},
        "dataset": {"batch": 4, "length": 8},
        "replay": {"maxlen": 8},
        "imag_horizon": 5,
        "prefill": 100,
        "train_every": 25,
        "log_every": 100,
    },
    "small": {
        "rssm": {"hidden": 200, "deter": 200, "stoch": 16, "discrete": 16},
        "encoder": {"mlp_layers": [128, 128], "cnn_depth": 16},
        "decoder": {"mlp_layers": [128, 128], "cnn_depth": 16},
        "reward_head": {"layers": 2, "units": 128},
        "discount_head": {"layers": 2, "units": 128},
        "actor": {"layers": 2, "units": 128},
        "critic": {"layers": 2, "units": 128},
        "dataset": {"batch": 8, "length": 32},
        "replay": {"maxlen": 32},
        "imag_horizon": 10,
        "prefill": 1000,
        "train_every": 10,
        "log_every": 1000,
    },
    "control": {
        "rssm": {"hidden": 64, "deter": 64, "stoch": 8, "discrete": 8},
        "encoder": {"mlp_layers": [64, 64], "cnn_depth": 16},
        "decoder": {"mlp_layers": [64, 64], "cnn_depth": 16},
        "reward_head": {"layers": 2, "units": 64},
        "discount_head": {"layers": 2, "units": 64},
        "actor": {"layers": 2, "units": 64},
        "critic": {"layers": 2, "units": 64},
        "dataset": {"batch": 16, "length": 16},
        "replay": {"maxlen": 16, "prioritize_ends": False},
        "imag_horizon": 15,
        "prefill": 1000,
        "train_every": 5,
        "log_every": 1000,
        "clip_rewards": "identity",
        "kl": {"free": 1.0},
        "actor_ent": 1e-4,
        "model_opt": {"lr": 3e-4},
        "actor_opt": {"lr": 1e-4},
        "critic_opt": {"lr": 1e-4},
    },
    "default": {},
}


def preset_overrides(name: Any) -> Dict[str, Any]:
    """The config keys of preset ``name`` (a fresh nested dict; ``"default"`` is empty)."""
    if name not in PRESETS:
        raise SpecError(
            message(
                "DreamerV2 preset",
                f"be one of {', '.join(repr(p) for p in PRESETS)}",
                repr(name),
                f"Pass preset='{DEFAULT_PRESET}' (CPU-sized) or preset='default' (DreamerV2's own sizes)",
            )
        )
    return copy.deepcopy(PRESETS[name])

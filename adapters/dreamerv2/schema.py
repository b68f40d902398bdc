"""The declared type and range of every DreamerV2 config key, checked before ``Config.update``.

DreamerV2's ``Config.update`` converts a value with the default's type: ``bool("no")`` is True,
``float("nan")`` passes every comparison, so ``jit=no`` turned jit on and ``steps=nan`` "trained"
without a step. Every key the user gives (``--config`` pairs and files, the Python dict and
keywords) is checked here first with :mod:`bridge.config`'s checks: a bool only from true/false,
a count a whole number in range, a real finite and in range, a string a string, a list of the
default's element kind. The kind comes from the key's default in ``configs.yaml``; the ranges
below are declared, so a new DreamerV2 key still gets its kind's check.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict

from bridge import config as cfg

__all__ = ["check_values"]

# keys whose range is narrower than their kind's default (counts >= 0, reals >= 0)
_RANGES: Dict[str, cfg.Check] = {
    "steps": cfg.count(1, whole_floats=True),
    "log_every": cfg.count(1, whole_floats=True),
    "eval_every": cfg.count(1, whole_floats=True),
    "replay.capacity": cfg.count(1, whole_floats=True),
    "dmc_camera": cfg.count(-1),
    "precision": cfg.choice(16, 32),
    "envs_parallel": cfg.choice("none", "thread", "process"),
    "clip_rewards": cfg.choice("identity", "sign", "tanh"),
    "discount": cfg.number(0.0, 1.0),
    "discount_lambda": cfg.number(0.0, 1.0),
    "kl.balance": cfg.number(0.0, 1.0),
    "actor_grad_mix": cfg.number(0.0, 1.0),
    "reward_norm.momentum": cfg.number(0.0, 1.0),
    "expl_reward_norm.momentum": cfg.number(0.0, 1.0),
}
_AT_LEAST_ONE = (
    "envs action_repeat eval_eps pretrain train_every train_steps replay.minlen replay.maxlen dataset.batch "
    "dataset.length imag_horizon slow_target_update disag_models"
).split()
_AT_LEAST_ONE_SUFFIX = (".layers", ".units", ".cnn_depth", ".hidden", ".deter", ".stoch", ".discrete", ".ensemble")
_POSITIVE_REAL_SUFFIX = (".lr", ".eps")


def _check_for(key: str, default: Any) -> cfg.Check:
    if key in _RANGES:
        return _RANGES[key]
    if isinstance(default, bool):
        return cfg.flag
    if isinstance(default, int):
        at_least_one = key in _AT_LEAST_ONE or key.endswith(_AT_LEAST_ONE_SUFFIX)
        return cfg.count(1 if at_least_one else 0, whole_floats=True)
    if isinstance(default, float):
        return cfg.number(0.0, math.inf, open_low=key.endswith(_POSITIVE_REAL_SUFFIX))
    if isinstance(default, (tuple, list)):
        first = default[0] if default else ""
        each = cfg.text if isinstance(first, str) else cfg.count(1)
        return cfg.items(each)
    return cfg.text


def check_values(config: Any, flat: Dict[str, Any]) -> Dict[str, Any]:
    """``flat`` (dotted keys, or DreamerV2 key patterns) with every value checked against its key's
    declared kind and range; the checked values (a whole float as an int, a list as a tuple)."""
    known = config.flat
    out = {}
    for key, value in flat.items():
        if config.IS_PATTERN.match(key):
            pattern = re.compile(key)  # DreamerV2's own rule: the pattern sets every key it matches
            targets = sorted(k for k in known if pattern.match(k))
        else:
            targets = [key] if key in known else []
        for target in targets:
            out[key] = _check_for(target, known[target])(f"DreamerV2 config {key}", value)
        if not targets:
            out[key] = value  # unknown keys are named by train._update, with close matches
    return out

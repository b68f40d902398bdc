"""``train``: run ``dreamerv2.api.train`` on the Dreamer-ready env with a config derived from it.

Derived (unless the caller sets the key): encoder/decoder ``cnn_keys`` = the image keys and
``mlp_keys`` = the vector keys, as exact regexes; ``log_keys_video`` = the image keys; ``precision``
32 where no GPU is visible; ``eval_every`` (api.train's save interval) at most ``steps``;
``replay.minlen`` 1 (DreamerV2's default 50 silently drops shorter episodes, terminations included).
``api.train`` applies neither ``precision`` nor ``jit``; we apply both and restore them afterwards.
"""

from __future__ import annotations

import argparse
import difflib
import pathlib
from typing import Any, Dict, List, Mapping

from bridge.adapters.dreamerv2.export import DreamerReadyEnv, to_dreamer_ready
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.profile import key_regex
from bridge.compat import optional_import

from bridge.errors import SpecError, message

__all__ = ["dreamer_config", "train", "train_command", "VIDEO_PLACEHOLDER"]

# Config refuses an empty log_keys_video and api.train indexes every name in it: without images we
# name the always-present 2-D "action" and drop that one summary before TensorBoard (which cannot
# draw a 2-D array). Scalars are untouched.
VIDEO_PLACEHOLDER = "action"


def _flat(config: Any, mapping: Mapping[str, Any]) -> Dict[str, Any]:
    return config._flatten(dict(mapping))  # DreamerV2's own nesting rule (dotted keys)


def _update(config: Any, flat: Dict[str, Any]) -> Any:
    known = config.flat
    for key in flat:
        if not config.IS_PATTERN.match(key) and key not in known:
            close = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
            hint = (
                f"Did you mean {', '.join(repr(c) for c in close)}?"
                if close
                else "See dreamerv2/configs.yaml 'defaults' (nested keys are dotted, e.g. 'dataset.batch')"
            )
            raise SpecError(
                message(
                    f"DreamerV2 config key {key!r}", "be a key of dreamerv2/configs.yaml 'defaults'", repr(key), hint
                )
            )
    try:
        return config.update(flat)
    except (KeyError, TypeError, ValueError) as e:
        raise SpecError(
            message(
                "DreamerV2 config overrides",
                "match the keys and value types of configs.yaml",
                f"{type(e).__name__}: {str(e).rstrip('.')}",
                "Pass values of each default's type",
            )
        ) from e


def _gpu_visible() -> bool:
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU"))


def dreamer_config(ready: DreamerReadyEnv, config: Any = None, **overrides: Any) -> Any:
    """The DreamerV2 ``Config`` for ``ready``: defaults (or ``config``), derived keys, then overrides.

    Args:
        ready: the Dreamer-ready env (its image and vector keys drive the derived keys).
        config: a DreamerV2 ``Config`` (used as the base) or a dict of overrides of the
            configs.yaml defaults (nested dicts or dotted keys, as ``Config.update`` takes).
        **overrides: applied last.

    Raises:
        SpecError: an unknown key or a value that does not convert to the default's type.
    """
    api = load_dreamerv2()
    if isinstance(config, api.common.Config):
        base, user = config, {}
    elif config is None or isinstance(config, Mapping):
        base, user = api.defaults, _flat(api.defaults, config or {})
    else:
        raise SpecError(
            message(
                "train config",
                "be a DreamerV2 Config, a dict or None",
                type(config).__name__,
                "Pass e.g. {'dataset': {'batch': 4}}",
            )
        )
    user.update(_flat(base, overrides))
    images, vectors = ready.image_keys, ready.vector_keys
    steps = float(user.get("steps", base.steps))
    derived = {
        "encoder.cnn_keys": key_regex(images),
        "decoder.cnn_keys": key_regex(images),
        "encoder.mlp_keys": key_regex(vectors),
        "decoder.mlp_keys": key_regex(vectors),
        "log_keys_video": list(images) or [VIDEO_PLACEHOLDER],
        "precision": base.precision if _gpu_visible() else 32,
        "eval_every": min(float(base.eval_every), max(1.0, steps)),
        "replay.minlen": 1,
    }
    derived = {k: v for k, v in derived.items() if k not in user}
    return _update(_update(base, derived), user)


def _outputs(api: Any, logdir: str, drop_placeholder: bool) -> List[Any]:
    common = api.common

    class _TensorBoard(common.TensorBoardOutput):
        def __call__(self, summaries: Any) -> None:
            kept = [s for s in summaries if s[1] != f"policy_{VIDEO_PLACEHOLDER}"]
            if kept:
                super().__call__(kept)

    board = _TensorBoard(logdir) if drop_placeholder else common.TensorBoardOutput(logdir)
    return [common.TerminalOutput(), common.JSONLOutput(logdir), board]


def train(env: Any, config: Any = None, *, action_bounds: Any = None, **overrides: Any) -> str:
    """Train DreamerV2 2.2.0 (``dreamerv2.api.train``) on ``env``; returns the logdir.

    Args:
        env: a bridge.Env, a registered id or a factory.
        config: a DreamerV2 ``Config`` or a dict of overrides (see :func:`dreamer_config`); set
            ``logdir`` there or in ``overrides``.
        action_bounds: finite ``(low, high)`` for a Box action with infinite bounds.
        **overrides: config keys on top (``steps=1000``, ``logdir="runs/x"``, ``dataset={"batch": 4}``).

    Raises:
        ConversionError: the env cannot be lowered; SpecError: a bad config.
    """
    api = load_dreamerv2()
    ready = to_dreamer_ready(env, action_bounds=action_bounds)  # api.train resizes to 64x64
    cfg = dreamer_config(ready, config, **overrides)
    if str(cfg.logdir) in ("", "/dev/null"):
        raise SpecError(
            message(
                "DreamerV2 config 'logdir'",
                "name a directory for checkpoints, replay and metrics",
                repr(cfg.logdir),
                "Pass logdir='runs/dreamerv2'",
            )
        )
    if float(cfg.steps) <= float(cfg.prefill):
        # api.train's loop (train, log, save variables.pkl) never runs once prefill reaches steps
        raise SpecError(
            message(
                "DreamerV2 config 'steps'",
                "exceed 'prefill' (api.train trains and saves variables.pkl only after the random prefill)",
                f"steps={cfg.steps:g}, prefill={cfg.prefill:g}",
                "Pass more steps or a smaller prefill, e.g. prefill=1000",
            )
        )
    tf = optional_import("tensorflow", "DreamerV2 training")
    from tensorflow.keras import mixed_precision

    previous_policy = mixed_precision.global_policy()
    was_eager = tf.config.functions_run_eagerly()
    try:
        mixed_precision.set_global_policy("mixed_float16" if int(cfg.precision) == 16 else "float32")
        tf.config.run_functions_eagerly(not cfg.jit)
        tf.random.set_seed(int(cfg.seed))
        ready.seed(int(cfg.seed))
        api.train(ready, cfg, _outputs(api, str(cfg.logdir), not ready.image_keys))
    finally:
        mixed_precision.set_global_policy(previous_policy)
        tf.config.run_functions_eagerly(was_eager)
    return str(pathlib.Path(cfg.logdir).expanduser())


def _parse_overrides(pairs: List[str]) -> Dict[str, Any]:
    yaml = optional_import("ruamel.yaml", "envbridge train dreamerv2 --config")
    out: Dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError(message("--config", "be KEY=VALUE", repr(pair), "Pass e.g. --config dataset.batch=4"))
        out[key.strip()] = yaml.YAML(typ="safe", pure=True).load(raw) if raw.strip() else raw
    return out


def train_command(args: argparse.Namespace) -> int:
    """``envbridge train dreamerv2 --env ID --steps N --logdir DIR --config KEY=VALUE ...``."""
    from bridge.loading import load_env

    overrides = _parse_overrides(list(getattr(args, "config", []) or []))
    overrides.setdefault("steps", args.steps)
    overrides.setdefault("logdir", args.logdir)
    logdir = train(load_env(args.env), overrides)
    print(f"DreamerV2 run written to {logdir} (variables.pkl, metrics.jsonl, train_episodes/)")
    return 0


def replay_episodes(logdir: str) -> List[Dict[str, Any]]:
    """The episodes DreamerV2 saved under ``logdir/train_episodes`` (time-ordered), as dicts."""
    import numpy as np

    episodes = []
    for path in sorted(pathlib.Path(logdir, "train_episodes").glob("*.npz")):
        with np.load(path) as data:
            episodes.append({k: data[k] for k in data.files})
    return episodes

"""``train``: run ``dreamerv2.api.train`` on the Dreamer-ready env with a config derived from it.

Layers, later wins: DreamerV2's defaults (or the caller's ``Config``), a preset
(:mod:`~bridge.adapters.dreamerv2.presets`, "tiny" unless named), the derived keys, the caller's keys.
Derived (unless the caller sets the key): encoder/decoder ``cnn_keys`` = the image keys and
``mlp_keys`` = the vector keys, as exact regexes; ``log_keys_video`` = the image keys; ``precision``
32 where no GPU is visible; ``prefill`` at most half of ``steps`` (api.train never trains when
prefill reaches steps); ``eval_every``, ``train_every`` and ``log_every`` fitted to the steps after
the prefill (:mod:`~bridge.adapters.dreamerv2.chunks`: whole chunks that end at ``steps``, at least
two trainings and three loss summaries; a value you set that does not fit is refused);
``replay.minlen`` 1 (DreamerV2's default 50 silently drops shorter episodes, terminations included).
``api.train`` applies neither ``precision`` nor ``jit``; we apply both and restore them afterwards.
Unless ``verbose``, DreamerV2's prints and TensorFlow's warnings go to ``<logdir>/dreamerv2.log``
(:mod:`~bridge.adapters.dreamerv2.quiet`); the learning summary lines stay on the terminal.
"""

from __future__ import annotations

import argparse
import difflib
import pathlib
import shutil
import sys
from typing import IO, Any, Dict, List, Mapping, Optional

from bridge.adapters.dreamerv2.chunks import check_chunks, fitted
from bridge.adapters.dreamerv2.export import DreamerReadyEnv, to_dreamer_ready
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.presets import DEFAULT_PRESET, preset_overrides
from bridge.adapters.dreamerv2.profile import key_regex
from bridge.adapters.dreamerv2.quiet import LOG_NAME, quiet_run, terminal_output
from bridge.adapters.dreamerv2.schema import check_values
from bridge.adapters.gym import loader as gym_loader
from bridge.compat import optional_import

from bridge.config import read as read_config
from bridge.episodes import episode_bound
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


def dreamer_config(
    ready: DreamerReadyEnv, config: Any = None, *, preset: Optional[str] = None, **overrides: Any
) -> Any:
    """The DreamerV2 ``Config`` for ``ready``: base, preset, derived keys, then the caller's keys.

    Args:
        ready: the Dreamer-ready env (its image and vector keys drive the derived keys).
        config: a DreamerV2 ``Config`` (used as the base, no preset unless named) or a dict of
            overrides of the configs.yaml defaults (nested dicts or dotted keys, as
            ``Config.update`` takes).
        preset: "tiny" (the default for a dict or None), "small" or "default" (DreamerV2's own).
        **overrides: applied last.

    Raises:
        SpecError: an unknown preset or key, or a value that does not convert to the default's type.
    """
    api = load_dreamerv2()
    if isinstance(config, api.common.Config):
        base, user = config, {}
    elif config is None or isinstance(config, Mapping):
        base, user = api.defaults, _flat(api.defaults, config or {})
        preset = DEFAULT_PRESET if preset is None else preset
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
    user = check_values(base, user)  # declared kinds and ranges, before Config.update converts anything
    layer = _flat(base, preset_overrides(preset)) if preset is not None else {}
    chosen = {**base.flat, **layer, **user}
    images, vectors = ready.image_keys, ready.vector_keys
    steps = float(chosen["steps"])
    derived = {
        "encoder.cnn_keys": key_regex(images),
        "decoder.cnn_keys": key_regex(images),
        "encoder.mlp_keys": key_regex(vectors),
        "decoder.mlp_keys": key_regex(vectors),
        "log_keys_video": list(images) or [VIDEO_PLACEHOLDER],
        "precision": base.precision if _gpu_visible() else 32,
        "prefill": int(max(1, min(float(chosen["prefill"]), steps // 2))),
        "replay.minlen": 1,
    }
    episode = episode_steps(ready, chosen)
    if episode is not None and "prefill" not in user:
        derived["prefill"] = max(derived["prefill"], episode)  # the random prefill runs one whole episode
    prefill = prefill_steps(int(user.get("prefill", derived["prefill"])), episode)
    derived.update(fitted(chosen, steps, prefill))  # eval/train/log chunks that fit the run
    derived = {k: v for k, v in derived.items() if k not in user}
    cfg = _update(_update(_update(base, layer), derived), user)
    if float(cfg.steps) > prefill:  # else train() refuses the prefill itself
        check_chunks(cfg, user, prefill)
    return cfg


def episode_steps(ready: DreamerReadyEnv, config: Any) -> Optional[int]:
    """The most steps an episode runs in a DreamerV2 run of ``ready``: the env's own bound
    (:func:`bridge.env.episode_bound`) or DreamerV2's ``time_limit`` (0: none), whichever is smaller;
    None when neither says."""
    limit = int(float(config["time_limit"] if isinstance(config, Mapping) else config.time_limit))
    bounds = [b for b in (episode_bound(ready.neutral), limit if limit > 0 else None) if b is not None]
    return min(bounds) if bounds else None


def prefill_steps(prefill: int, episode: Optional[int]) -> int:
    """The steps api.train's random prefill runs: ``driver(random, steps=prefill, episodes=1)`` goes on
    to the end of the first episode, so up to ``episode`` steps when that is longer."""
    return prefill if episode is None else max(prefill, episode)


def _outputs(api: Any, logdir: str, drop_placeholder: bool, terminal: Optional[IO[str]]) -> List[Any]:
    common = api.common

    class _TensorBoard(common.TensorBoardOutput):
        def __call__(self, summaries: Any) -> None:
            kept = [s for s in summaries if s[1] != f"policy_{VIDEO_PLACEHOLDER}"]
            if kept:
                super().__call__(kept)

    board = _TensorBoard(logdir) if drop_placeholder else common.TensorBoardOutput(logdir)
    shown = common.TerminalOutput() if terminal is None else terminal_output(common.TerminalOutput, terminal)
    return [shown, common.JSONLOutput(logdir), board]


def train(
    env: Any,
    config: Any = None,
    *,
    preset: Optional[str] = None,
    verbose: bool = False,
    action_bounds: Any = None,
    **overrides: Any,
) -> str:
    """Train DreamerV2 2.2.0 (``dreamerv2.api.train``) on ``env``; returns the logdir.

    Args:
        env: a bridge.Env, a registered id or a factory.
        config: a DreamerV2 ``Config`` or a dict of overrides (see :func:`dreamer_config`); set
            ``logdir`` there or in ``overrides``.
        preset: "tiny" (default), "small" or "default" (see :mod:`bridge.adapters.dreamerv2.presets`).
        verbose: show everything DreamerV2, TensorFlow and gym print (else it goes to
            ``<logdir>/dreamerv2.log`` and only the learning summary lines are printed).
        action_bounds: finite ``(low, high)`` for a Box action with infinite bounds.
        **overrides: config keys on top (``steps=1000``, ``logdir="runs/x"``, ``dataset={"batch": 4}``).

    Raises:
        ConversionError: the env cannot be lowered; SpecError: a bad preset or config.
    """
    api = load_dreamerv2()
    ready = to_dreamer_ready(env, action_bounds=action_bounds)  # api.train resizes to 64x64
    cfg = dreamer_config(ready, config, preset=preset, **overrides)
    if str(cfg.logdir) in ("", "/dev/null"):
        raise SpecError(
            message(
                "DreamerV2 config 'logdir'",
                "name a directory for checkpoints, replay and metrics",
                repr(cfg.logdir),
                "Pass logdir='runs/dreamerv2'",
            )
        )
    episode = episode_steps(ready, cfg)
    prefill = prefill_steps(int(cfg.prefill), episode)
    if episode is not None and float(cfg.steps) <= episode:
        # the prefill waits for the end of a whole episode: a run that cannot hold one never trains
        raise SpecError(
            message(
                "DreamerV2 config 'steps'",
                f"hold one whole episode of the random prefill ({episode} steps here: api.train's prefill "
                "runs to the end of the first episode) and training after it",
                f"steps={cfg.steps:g}",
                f"Pass steps={2 * episode} or more (--steps {2 * episode}), or cap the episodes with "
                f"time_limit={max(1, int(cfg.steps) // 2)} (--config time_limit={max(1, int(cfg.steps) // 2)})",
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
    logdir = pathlib.Path(cfg.logdir).expanduser()
    if verbose and gym_loader.notice:
        sys.stderr.write(gym_loader.notice)
    if not verbose:
        name = preset or (DEFAULT_PRESET if not isinstance(config, api.common.Config) else "your Config")
        ends = f"episodes of at most {episode} steps" if episode is not None else "episode length not declared"
        sizes = f"{cfg.steps:g} steps (prefill {prefill:g}, {ends}; training every {cfg.train_every:g} steps after it)"
        print(f"DreamerV2: preset {name}, {sizes}; its own output: {logdir / LOG_NAME}")
        if ready.image_keys and shutil.which("ffmpeg") is None:
            print("DreamerV2: no ffmpeg on PATH, so no GIF video summaries in TensorBoard (training is unaffected)")
    tf = optional_import("tensorflow", "DreamerV2 training")
    from tensorflow.keras import mixed_precision

    previous_policy = mixed_precision.global_policy()
    was_eager = tf.config.functions_run_eagerly()
    try:
        mixed_precision.set_global_policy("mixed_float16" if int(cfg.precision) == 16 else "float32")
        tf.config.run_functions_eagerly(not cfg.jit)
        tf.random.set_seed(int(cfg.seed))
        ready.seed(int(cfg.seed))
        with quiet_run(str(logdir), verbose) as terminal:
            outputs = _outputs(api, str(cfg.logdir), not ready.image_keys, None if verbose else terminal)
            api.train(ready, cfg, outputs)
    except BaseException:
        if not verbose:
            _show_tail(logdir / LOG_NAME)
        raise
    finally:
        mixed_precision.set_global_policy(previous_policy)
        tf.config.run_functions_eagerly(was_eager)
    return str(logdir)


def _show_tail(log: pathlib.Path, lines: int = 15) -> None:
    try:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return
    if tail:
        print(f"DreamerV2 stopped; the last lines of {log}:", *tail, sep="\n  ", file=sys.stderr)


def train_command(args: argparse.Namespace) -> int:
    """``envbridge train dreamerv2 --env ID --steps N --logdir DIR [--preset P] [--config KEY=VALUE|FILE.yaml]
    [--verbose]``."""
    from bridge.cli import env_of
    from bridge.loading import load_env

    overrides = read_config(list(getattr(args, "config", []) or []))
    overrides.setdefault("steps", args.steps)
    overrides.setdefault("logdir", args.logdir)
    overrides.setdefault("seed", args.seed)
    verbose = bool(getattr(args, "verbose", False))
    logdir = train(load_env(env_of(args)), overrides, preset=getattr(args, "preset", None), verbose=verbose)
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

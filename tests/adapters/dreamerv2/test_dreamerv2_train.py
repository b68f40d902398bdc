"""Tiny real DreamerV2 runs (CPU, float32, the "tiny" preset): a vector/discrete env through the CLI, an image/continuous env
through ``train``; then what DreamerV2 saved is read back."""

from __future__ import annotations

import json
import pathlib
import shutil
import time

import numpy as np
import pytest
from support import raises_exactly, require

gym = require("gym")
tf = require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import load_dreamerv2, replay_episodes, train  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces as S  # noqa: E402
from bridge.cli import main  # noqa: E402
from bridge.env import Env  # noqa: E402
from bridge.errors import SpecError  # noqa: E402

load_dreamerv2()


class PixelPoint(Env):
    """A dot on a 16x16 image (DreamerV2 resizes it to 64x64); continuous moves; reaching the centre ends."""

    metadata = {"render_modes": [], "render_fps": None}

    def __init__(self):
        self.observation_space = S.Image(16, 16, 3)
        self.action_space = S.Box(-1.0, 1.0, (2,), np.float32)
        self.pos = np.zeros(2)

    def _obs(self):
        frame = np.zeros((16, 16, 3), np.uint8)
        x, y = np.clip(((self.pos + 1) * 7.5).astype(int), 0, 15)
        frame[y, x] = 255
        return frame

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1, 1, 2)
        return self._obs(), {}

    def step(self, action):
        self.pos = np.clip(self.pos + 0.3 * action, -1, 1)
        terminated = bool(np.abs(self.pos).max() < 0.25)
        return self._obs(), 1.0 if terminated else -0.01, terminated, False, {}


def _metrics(logdir):
    rows = [json.loads(line) for line in pathlib.Path(logdir, "metrics.jsonl").read_text().splitlines()]
    return {key for row in rows for key in row}


def _tensorboard_tags(logdir):
    tags = set()
    for path in pathlib.Path(logdir).glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            tags.update(value.tag for value in event.summary.value)
    return tags


def _assert_episode_ends(episodes):
    timeouts = terminations = 0
    for ep in episodes:
        assert ep["is_terminal"].dtype == ep["is_last"].dtype == bool
        assert not np.any(ep["is_terminal"] & ~ep["is_last"]), "is_terminal without is_last"
        if ep["is_last"][-1] and not ep["is_terminal"][-1]:
            timeouts += 1
        if ep["is_last"][-1] and ep["is_terminal"][-1]:
            terminations += 1
    return timeouts, terminations


@pytest.mark.slow
def test_vector_discrete_gridworld_trains_through_the_cli(tmp_path, capsys):
    bridge.register(
        "envbridge-test/SmallGrid-v0", "bridge.examples.gridworld:GridWorld", max_episode_steps=8, kwargs={"size": 3}
    )
    argv = ["train", "dreamerv2", "--env", "envbridge-test/SmallGrid-v0", "--steps", "300", "--logdir", str(tmp_path)]
    started = time.perf_counter()
    assert main(argv + ["--preset", "tiny", "--verbose"]) == 0
    shown = capsys.readouterr().out
    assert "Config:\n" in shown and "Encoder MLP inputs: ['vector']" in shown  # --verbose keeps DreamerV2's prints
    assert not (tmp_path / "dreamerv2.log").exists()
    print(f"\nGridWorld DreamerV2 run (300 steps): {time.perf_counter() - started:.1f}s")
    assert (tmp_path / "variables.pkl").stat().st_size > 0
    assert {"return", "length", "model_loss", "actor_loss"} <= _metrics(tmp_path)
    assert {"scalars/return", "scalars/model_loss"} <= _tensorboard_tags(tmp_path)  # no images, no crash
    saved = load_dreamerv2().common.Config.load(tmp_path / "config.yaml")
    assert (saved.encoder.mlp_keys, saved.encoder.cnn_keys, saved.precision, saved.dataset.batch) == (
        "^(vector)$",
        "^$",
        32,
        4,
    )
    episodes = replay_episodes(str(tmp_path))
    assert episodes and all(ep["vector"].shape[1:] == (4,) and ep["vector"].dtype == np.float32 for ep in episodes)
    timeouts, terminations = _assert_episode_ends(episodes)
    assert timeouts >= 1 and terminations >= 1, (timeouts, terminations)
    for ep in episodes:  # terminal exactly when the agent stands on the goal; a cut-off elsewhere is not
        last = ep["vector"][-1]
        if ep["is_last"][-1]:
            assert bool(ep["is_terminal"][-1]) == bool(np.array_equal(last[:2], last[2:]))


@pytest.mark.slow
def test_image_continuous_env_trains_through_train(tmp_path, capsys):
    started = time.perf_counter()
    logdir = train(bridge.TimeLimit(PixelPoint(), 12), {"steps": 250}, logdir=str(tmp_path), seed=1)
    shown, log = capsys.readouterr().out, (tmp_path / "dreamerv2.log").read_text()
    assert "Resizing keys image to (64, 64)." in log and "Resizing keys" not in shown  # quiet by default
    if shutil.which("ffmpeg") is None:
        assert "GIF summaries require ffmpeg" in log and "GIF summaries" not in shown
        assert (
            "DreamerV2: no ffmpeg on PATH, so no GIF video summaries in TensorBoard (training is unaffected)\n" in shown
        )
    print(f"\nPixelPoint DreamerV2 run (250 steps): {time.perf_counter() - started:.1f}s")
    assert logdir == str(tmp_path) and (tmp_path / "variables.pkl").stat().st_size > 0
    assert {"return", "model_loss", "image_loss"} <= _metrics(tmp_path)
    tags = _tensorboard_tags(tmp_path)
    assert "scalars/return" in tags and any(tag.startswith("policy_image") for tag in tags)
    episodes = replay_episodes(logdir)
    assert all(ep["image"].shape[1:] == (64, 64, 3) and ep["image"].dtype == np.uint8 for ep in episodes)
    assert all(ep["action"].shape[1:] == (2,) and np.abs(ep["action"]).max() <= 1.0 for ep in episodes)
    timeouts, _ = _assert_episode_ends(episodes)
    assert timeouts >= 1


def test_train_refuses_a_missing_logdir_and_unknown_keys_before_training(tmp_path):
    never = tmp_path / "never"
    with raises_exactly(
        SpecError,
        "DreamerV2 config 'logdir' must name a directory for checkpoints, replay and metrics, "
        "got '/dev/null'. Pass logdir='runs/dreamerv2'.",
    ):
        train(bridge.make("envbridge/GridWorld-v0"), {})
    with raises_exactly(
        SpecError,
        "DreamerV2 config key 'stepz' must be a key of dreamerv2/configs.yaml 'defaults', "
        "got 'stepz'. Did you mean 'steps'?",
    ):
        train("envbridge/GridWorld-v0", stepz=10, logdir=str(never))
    with raises_exactly(
        SpecError,
        "DreamerV2 config 'steps' must exceed 'prefill' (api.train trains and saves variables.pkl only after the "
        "random prefill), got steps=1000, prefill=2000. Pass more steps or a smaller prefill, e.g. prefill=1000.",
    ):
        train("envbridge/GridWorld-v0", steps=1000, prefill=2000, logdir=str(never))
    assert not never.exists()


def test_cli_reports_bad_config_pairs(capsys, tmp_path):
    assert main(["train", "dreamerv2", "--logdir", str(tmp_path / "never"), "--config", "batch4"]) == 2
    assert capsys.readouterr().err == (
        "envbridge train dreamerv2: SpecError: --config must be KEY=VALUE or a YAML file (.yaml, .yml), "
        "got 'batch4'. Pass e.g. --config learning_rate=0.001 or --config run.yaml.\n"
    )

"""Quiet DreamerV2 runs: DreamerV2's and TensorFlow's output goes to the logdir, the learning summary
to the terminal; ``verbose`` keeps everything."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings

from support import require

require("gym")
require("tensorflow")
require("dreamerv2")

from bridge.adapters.dreamerv2 import load_dreamerv2  # noqa: E402
from bridge.adapters.dreamerv2.quiet import quiet_run  # noqa: E402


def test_quiet_run_sends_prints_logs_and_warnings_to_the_log_once(tmp_path, capsys):
    root = logging.getLogger()
    handlers = root.handlers[:]
    with quiet_run(str(tmp_path), verbose=False) as terminal:
        print("Resizing keys  to (64, 64).")
        for _ in range(3):
            logging.warning("Distribution subclass %s inherits", "OneHotDist")
        logging.getLogger("tensorflow").warning("a TensorFlow warning")
        warnings.warn("a library warning", UserWarning, stacklevel=1)
        print("[100] model_loss 1", file=terminal)
    assert capsys.readouterr() == ("[100] model_loss 1\n", "")
    assert root.handlers == handlers
    lines = (tmp_path / "dreamerv2.log").read_text().splitlines()
    assert lines[0] == "Resizing keys  to (64, 64)."
    assert lines.count("WARNING:root:Distribution subclass OneHotDist inherits") == 1
    assert "WARNING:tensorflow:a TensorFlow warning" in lines
    assert any(line.endswith("UserWarning: a library warning") for line in lines)


def test_verbose_changes_nothing(tmp_path, capsys):
    with quiet_run(str(tmp_path), verbose=True) as terminal:
        assert terminal is sys.stdout
        print("Config:")
    assert capsys.readouterr().out == "Config:\n"
    assert not (tmp_path / "dreamerv2.log").exists()


def test_the_cli_tiny_run_prints_under_60_lines_with_the_learning_summary(tmp_path):
    """A real 300-step run (~20 s on 2 cores); before quiet runs this printed ~6,900 lines."""
    run = tmp_path / "run.yaml"
    run.write_text("dataset:\n  batch: 3\n")
    logdir = tmp_path / "run"
    argv = ["train", "dreamerv2", "--env", "envbridge/GridWorld-v0", "--preset", "tiny", "--steps", "300"]
    argv += ["--logdir", str(logdir), "--config", str(run)]
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # what a user's shell has
    done = subprocess.run(
        [sys.executable, "-m", "bridge.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        timeout=300,
        cwd=tmp_path,  # outside the checkout, whose bridge/ would shadow the installed package
    )
    shown = done.stdout.decode()
    lines = shown.splitlines()
    assert done.returncode == 0, shown
    assert len(lines) < 60, shown
    assert lines[0] == (
        "DreamerV2: preset tiny, 300 steps (prefill 100, episodes of at most 100 steps; training every 25 steps "
        f"after it); its own output: {logdir}/dreamerv2.log"
    )
    assert lines[-1] == f"DreamerV2 run written to {logdir} (variables.pkl, metrics.jsonl, train_episodes/)"
    summaries = [line for line in lines if line.startswith("[")]
    assert sum(" model_loss " in line and " actor_loss " in line for line in summaries) >= 2, shown
    assert any(" return " in line and " length " in line for line in summaries), shown
    assert all(line.startswith(("DreamerV2", "[")) for line in lines), shown  # nothing else: no banner, no warnings
    log = (logdir / "dreamerv2.log").read_text()
    assert "Config:" in log and "Distribution subclass OneHotDist" in log and " model_loss " in log
    assert load_dreamerv2().common.Config.load(logdir / "config.yaml").dataset.batch == 3

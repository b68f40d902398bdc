"""DreamerV2 runs always train and honour the budget: api.train's random prefill runs to the end of
the first episode, so the prefill and the chunks after it are fitted to the env's episode bound
(a TimeLimit, an imported env's own limit, DreamerV2's ``time_limit``), and a run whose steps cannot
hold one episode and training after it is refused before anything runs. Whole messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import raises_exactly, require

require("dreamerv2")

from bridge.adapters.dreamerv2 import dreamer_config, to_dreamer_ready, train  # noqa: E402

import bridge  # noqa: E402
from bridge.errors import SpecError  # noqa: E402
from bridge.examples import PointMass  # noqa: E402

LONG = """
import bridge
from bridge.examples import PointMass


def long_episodes():
    return bridge.TimeLimit(PointMass(), 1000)   # as dm_control's cartpole-swingup: 1000-step episodes
"""


def test_the_prefill_runs_one_whole_episode_and_the_chunks_end_at_steps():
    cfg = dreamer_config(to_dreamer_ready(bridge.TimeLimit(PointMass(), 200)), {"steps": 300})
    assert (cfg.prefill, cfg.eval_every) == (200, 100)  # was prefill 150: the run went on to step 350
    assert cfg.train_every <= 50 and cfg.log_every <= 33


def test_dreamerv2s_own_time_limit_bounds_the_episodes():
    cfg = dreamer_config(to_dreamer_ready(PointMass()), {"steps": 300, "time_limit": 180})
    assert (cfg.prefill, cfg.eval_every) == (180, 120)


def test_a_run_that_cannot_hold_one_episode_is_refused_before_anything_runs(tmp_path):
    msg = (
        "DreamerV2 config 'steps' must hold one whole episode of the random prefill (1000 steps here: api.train's "
        "prefill runs to the end of the first episode) and training after it, got steps=300. Pass steps=2000 or "
        "more (--steps 2000), or cap the episodes with time_limit=150 (--config time_limit=150)."
    )
    with raises_exactly(SpecError, msg):
        train(bridge.TimeLimit(PointMass(), 1000), {"steps": 300, "logdir": str(tmp_path / "run")})
    assert not (tmp_path / "run").exists()  # nothing ran, nothing written


def _cli(tmp_path, *argv):
    (tmp_path / "longenv.py").write_text(LONG)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    return subprocess.run(
        [sys.executable, "-m", "bridge.cli", "train", "dreamerv2", "--env", "longenv:long_episodes", *argv],
        capture_output=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )


def test_the_cli_refuses_before_running(tmp_path):
    done = _cli(tmp_path, "--steps", "300", "--logdir", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr.decode()
    assert done.stderr.decode() == (
        "envbridge train dreamerv2: SpecError: DreamerV2 config 'steps' must hold one whole episode of the random "
        "prefill (1000 steps here: api.train's prefill runs to the end of the first episode) and training after "
        "it, got steps=300. Pass steps=2000 or more (--steps 2000), or cap the episodes with time_limit=150 "
        "(--config time_limit=150).\n"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.timeout(600)
def test_with_a_time_limit_the_short_run_trains_and_stops_at_steps(tmp_path):
    logdir = tmp_path / "run"
    done = _cli(tmp_path, "--steps", "300", "--logdir", str(logdir), "--config", "time_limit=150")
    shown = done.stdout.decode()
    assert done.returncode == 0, shown + done.stderr.decode()
    first = shown.splitlines()[0]
    assert first.startswith("DreamerV2: preset tiny, 300 steps (prefill 150, episodes of at most 150 steps; "), first
    assert any(line.startswith("[") and " model_loss " in line for line in shown.splitlines()), shown
    steps = [json.loads(line)["step"] for line in (logdir / "metrics.jsonl").read_text().splitlines()]
    assert max(steps) <= 300, steps

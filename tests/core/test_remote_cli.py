"""``--host-python``: the CLI's env commands on an env hosted in the other era's interpreter."""

from __future__ import annotations

import subprocess
import sys

from test_remote import other_python

from bridge.hosted.client import host_python


def test_check_with_host_python_runs_the_env_in_the_other_interpreter(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bridge.cli",
            "check",
            "envbridge/GridWorld-v0",
            "--target",
            "core",
            "--host-python",
            host_python(other_python()),
        ],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == [
        "envbridge check: remote/envbridge_GridWorld-v0",
        "  core       pass  (0 problems)",
    ]


def test_host_python_is_refused_for_rllib(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "bridge.cli", "train", "rllib", "--host-python", sys.executable],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert (out.returncode, out.stderr) == (
        2,
        "envbridge train rllib: SpecError: --host-python must go with check, conform or a single-process train, got "
        "train rllib. Drop --host-python for RLlib (its env runners resolve the env in their own processes).\n",
    )


def test_every_target_checks_a_hosted_env(tmp_path):
    """A registry's keywords (gymnasium passes render_mode) reach the env's entry point in the host."""
    out = subprocess.run(
        [sys.executable, "-m", "bridge.cli", "check", "envbridge/GridWorld-v0", "--host-python", other_python()],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FAIL" not in out.stdout


def _conform(tmp_path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "bridge.cli", "conform", "envbridge/GridWorld-v0", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=str(tmp_path))


def test_a_tape_keeps_its_env_name_whether_recorded_or_verified_through_a_host(tmp_path):
    from bridge.conformance import Tape

    host = ["--host-python", host_python(other_python())]
    # recorded here, verified through the host, under its own name (no --any-env)
    made = _conform(tmp_path, "--record", "here.npz", "--steps", "40")
    assert made.returncode == 0, made.stderr
    hosted = _conform(tmp_path, "--verify", "here.npz", "--view", "neutral", *host)
    assert (hosted.returncode, hosted.stderr) == (0, ""), hosted.stdout
    assert hosted.stdout.splitlines()[1:] == ["  neutral    agrees"]
    # recorded through the host, labelled with the source's name, verified here
    made = _conform(tmp_path, "--record", "there.npz", "--steps", "40", *host)
    assert made.returncode == 0, made.stderr
    assert Tape.load(str(tmp_path / "there.npz")).env_id == "envbridge/GridWorld-v0"
    here = _conform(tmp_path, "--verify", "there.npz", "--view", "neutral")
    assert (here.returncode, here.stderr) == (0, ""), here.stdout
    assert here.stdout.splitlines()[1:] == ["  neutral    agrees"]

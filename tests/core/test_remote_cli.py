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

"""``envbridge check`` and ``envbridge conform`` as a user runs them (exit codes and output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import TESTS, other_kernel

from bridge import runtimes
from bridge.cli import main
from bridge.examples import EXAMPLE_IDS


@pytest.mark.parametrize("env_id", sorted(EXAMPLE_IDS))
def test_check_passes_every_example_on_every_available_target(env_id, capsys):
    assert main(["check", env_id]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"envbridge check: {env_id}\n") and out.rstrip().endswith("OK")
    for target in ["core"] + runtimes.available():
        assert f"  {target:<10} pass" in out


def test_check_names_every_defect_of_a_broken_env_and_fails(capsys):
    assert main(["check", "toy_envs.broken:ManyDefects", "--target", "core", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["targets"] == {"core": False}
    assert [p["message"] for p in report["problems"]] == [
        "step observation must have dtype float32, got dtype float64.",
        "step reward must be a Python float (a numpy scalar is a defect), got numpy float64 1.0.",
        "step terminated must be a Python bool, got numpy bool False.",
        "step info must not use the key 'episode' (reserved for SB3's Monitor), got ['episode'].",
    ]


def test_conform_records_and_verifies_a_tape(tmp_path, capsys):
    tape = os.path.join(tmp_path, "grid.npz")
    assert main(["conform", "envbridge/GridWorld-v0", "--record", tape, "--steps", "60"]) == 0
    assert main(["conform", "envbridge/GridWorld-v0", "--verify", tape]) == 0
    out = capsys.readouterr().out
    assert "  neutral    agrees" in out and "DIVERGES" not in out


STINGY = """
from bridge.examples import GridWorld


class StingyGrid(GridWorld):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward - 0.5, terminated, truncated, info
"""


def test_conform_reports_a_divergence_with_a_non_zero_exit(tmp_path, capsys, monkeypatch):
    tape = os.path.join(tmp_path, "grid.npz")
    main(["conform", "envbridge/GridWorld-v0", "--record", tape, "--steps", "30"])
    # same spaces, other rewards: the replay runs and names the first differing step and field
    (tmp_path / "stingy.py").write_text(STINGY)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["conform", "stingy:StingyGrid", "--verify", tape, "--view", "neutral", "--any-env"]) == 1
    assert "  neutral    DIVERGES  step 0: reward" in capsys.readouterr().out


def test_conform_refuses_a_tape_of_another_env_before_any_view(tmp_path, capsys):
    tape = os.path.join(tmp_path, "grid.npz")
    main(["conform", "envbridge/GridWorld-v0", "--record", tape, "--steps", "30"])
    capsys.readouterr()
    assert main(["conform", "envbridge/PointMass-v0", "--verify", tape]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "envbridge conform: ContractError: tape env id must be 'envbridge/PointMass-v0' (the env it is replayed on), "
        f"got 'envbridge/GridWorld-v0'. {OTHER_ENV_CLI}\n"
    )
    assert main(["conform", "envbridge/PointMass-v0", "--verify", tape, "--any-env"]) == 2  # spaces still checked
    assert capsys.readouterr().err == (
        "envbridge conform: ContractError: tape observation_space must be Box(-1.0, 1.0, (2,), float32) as in the env, "
        "got Box(0.0, 4.0, (4,), float32). Replay a tape on the env it was recorded from, or record one for this env.\n"
    )


OTHER_ENV_CLI = (
    "Replay a tape on the env it was recorded from, or record one for this env "
    "(envbridge conform --any-env replays it anyway: the same env under another name)."
)
# env ids other than the tape's 'envbridge/GridWorld-v0' (the same env spelled otherwise too)
OTHER_IDS = [
    "envbridge/PointMass-v0",
    "envbridge/CartPole-v0",
    "bridge.examples:GridWorld",
    "bridge.examples.gridworld:GridWorld",
    "envbridge/PixelGrid-v0",
    "bridge.examples.pointmass:PointMass",
    "stingy:StingyGrid",
    "bridge.examples:PointMass",
    "bridge.examples:CartPole",
    "bridge.examples.cartpole:CartPole",
]


@pytest.mark.parametrize("env", OTHER_IDS)
def test_verify_refuses_a_tape_recorded_under_another_env_id_unless_any_env(tmp_path, capsys, monkeypatch, env):
    tape = os.path.join(tmp_path, "grid.npz")
    main(["conform", "envbridge/GridWorld-v0", "--record", tape, "--steps", "5"])
    (tmp_path / "stingy.py").write_text(STINGY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["conform", env, "--verify", tape, "--view", "neutral"])
    err = capsys.readouterr().err
    assert (code, err) == (
        2,
        f"envbridge conform: ContractError: tape env id must be {env!r} (the env it is replayed on), "
        f"got 'envbridge/GridWorld-v0'. {OTHER_ENV_CLI}\n",
    )
    assert main(["conform", env, "--verify", tape, "--view", "neutral", "--any-env"]) in (0, 1, 2)
    assert "tape env id" not in capsys.readouterr().err  # the label is no longer checked


def test_conform_verifies_a_tape_recorded_under_another_blas_kernel_by_the_one_rule(tmp_path, capsys, monkeypatch):
    """Another machine, emulated: the tape is recorded in a subprocess under another OpenBLAS kernel."""
    from bridge.conformance import Tape
    from bridge.conformance.machine import describe, differences

    tape = str(tmp_path / "hover.npz")
    record = ["-m", "bridge.cli", "conform", "toy_envs.numeric:DeclaredHover", "--record", tape, "--steps", "60"]
    env = dict(os.environ, OPENBLAS_CORETYPE=other_kernel(), PYTHONPATH=TESTS)
    subprocess.run([sys.executable] + record, env=env, check=True, timeout=120, capture_output=True)
    recorded = Tape.load(tape)
    assert recorded.platform["blas_kernel"] != describe()["blas_kernel"]
    where = "; ".join(differences(recorded.platform, describe()))
    assert (
        where
        == f"recorded with the {recorded.platform['blas_kernel']} BLAS kernel, replayed with {describe()['blas_kernel']}"
    )
    code = main(
        ["conform", "toy_envs.numeric:DeclaredHover", "--verify", tape, "--view", "neutral", "--view", "matlab"]
    )
    out = capsys.readouterr().out.splitlines()
    assert out[1:3] == [
        f"  recorded elsewhere: {where}",
        "  (the env here against the tape within its declared ulps; every export against the env here, bit for bit)",
    ]
    assert out[4] == "  matlab     agrees"
    assert code == 0
    assert out[3] in (  # whether these kernels differ on this tape is the machine's: both verdicts name the rule
        f"  neutral    agrees  bit for bit (DeclaredHover.cross_era_ulps = 4; {where})",
    ) or (
        out[3].startswith("  neutral    agrees  within ")
        and out[3].endswith(f" ulp (DeclaredHover.cross_era_ulps = 4; {where})")
    )

"""`envbridge init tox` for real: a small third-party env package (written here, not one of our
examples) gets the generated tox matrix, which then runs in both eras against THIS checkout
(``ENVBRIDGE_SOURCE``): core-py311 records the Python 3.11 tapes, legacy (gym 0.23, TensorFlow 2.6,
DreamerV2) replays them and records the Python 3.9 tapes, core-py311 again replays those.

Besides the exact Corridor, the package holds the float envs of ``tests/toy_envs/numeric.py``
(copied in as ``corridor_pkg/numeric.py``): Hover (``np.linalg.norm``, ``@``, ``np.exp``/``np.sin``
on arrays, a long ``np.sum``), which declares no tolerance, and the same env declaring
``cross_era_ulps = 4`` (DeclaredHover). The matrix must pass for DeclaredHover, printing the ulps it
measured, and Hover either agrees bit for bit or fails with the message that names what it
measured and both platforms (which leaves differ, and by how many ulps, depends on the CPU and the
BLAS kernel). (The chaotic DoublePendulum's two eras are test_cross_era_numeric.py's, recorded there
while it runs: a fourth env here would cost CI time.)

It builds two tox envs from the package mirror (about 1.5 minutes here), so it runs in the modern tox
env only: ENVBRIDGE_ERA=modern (tox.ini installs tox there). Elsewhere it skips by that condition.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest
from support import ERA

from bridge.cli import main
from bridge.conformance import Tape, verify
from bridge.conformance.machine import differences

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(ERA != "modern", reason="runs a user project's tox matrix: in the modern tox env only"),
]
PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "corridor-pkg"
version = "0.0.1"
dependencies = ["envbridge"]

[tool.setuptools]
packages = ["corridor_pkg"]
"""
PACKAGE = '''\
import numpy as np

import bridge
from bridge import spaces


class Corridor(bridge.Env):
    """Walk right to the far end; start somewhere in the first half (the env's own RNG)."""

    determinism = "strong"

    def __init__(self):
        self.observation_space = spaces.Dict({"pos": spaces.Box(0, 9, (1,), np.float32), "lamp": spaces.Discrete(3)})
        self.action_space = spaces.Discrete(2, start=-1)
        self.pos, self.t = 0, 0

    def _obs(self):
        return {"pos": np.array([self.pos], np.float32), "lamp": int(self.np_random.integers(0, 3))}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = int(self.np_random.integers(0, 5)), 0
        return self._obs(), {}

    def step(self, action):
        self.pos, self.t = min(max(self.pos + (1 if action == 0 else -1), 0), 9), self.t + 1
        return self._obs(), float(self.pos == 9), self.pos == 9, self.t >= 25, {}

    def get_state(self):
        return {"pos": self.pos, "t": self.t}

    def set_state(self, state):
        self.pos, self.t = state["pos"], state["t"]
'''
TAPES = os.path.join("tests", "tapes", "corridor_pkg.Corridor")
PASSED = "PASSED tests/test_conformance_eras.py::TestCorridorAcrossEras::"
NUMERIC = os.path.join(ROOT, "tests", "toy_envs", "numeric.py")
ENVS = ["corridor_pkg:Corridor", "corridor_pkg.numeric:Hover", "corridor_pkg.numeric:DeclaredHover"]
HOVER_FAILS = "FAILED tests/test_conformance_eras.py::TestHoverAcrossEras::test_the_env_is_the_same_in_every_era"
# DeclaredHover declares 4 ulps: more than that on some machine fails it, as measured (checked below)
DECLARED_FAILS = HOVER_FAILS.replace("TestHover", "TestDeclaredHover")
DOCS = "docs/conformance.md, 'Why two platforms can differ in the last bit'"


def _hover(out, theirs, here, platforms):
    """Hover's verdict in a run's output, checked against what that run measured and printed: the
    eras differ in the last bits of some leaves (how many, and which, depends on the CPU and the BLAS
    kernel: nothing here is a figure of one machine) or not at all. True when it diverged."""
    found = re.search(
        rf"the {theirs} tape replayed in {here} must agree within Hover\.cross_era_ulps = 0 ulp \(bit for bit\), "
        r"got (\d+) ulp \((.*?)\) between platforms where (.*?)\. Declare Hover\.cross_era_ulps = (\d+) if a "
        r"difference in the last bits between these platforms is acceptable for this env \((.*?)\); else make the "
        r"env bit-exact across them\.",
        out,
    )
    if found is None:
        assert f"the {theirs} tape in {here}: agrees (Hover.cross_era_ulps = 0)" in out, out[-6000:]
        return False
    ulps, fields, where, declare, docs = found.groups()
    assert (ulps, where, docs) == (declare, "; ".join(platforms), DOCS)
    listed = [part.split(" ")[0] for part in fields.split("; ")]
    assert listed and "observation['exact']" not in listed  # elementwise math: the same bits in both eras
    assert all(int(part.split(" ")[1]) <= int(ulps) for part in fields.split("; "))
    return True


def _tox(project, *envs, failing=(), may_fail=()):
    """Run the user project's tox (outside this tox env: its PATH, pins and markers removed); the
    tests that failed must be ``failing``, plus any of ``may_fail``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOX_", "PIP_CONSTRAINT", "ENVBRIDGE_"))}
    here = os.environ.get("VIRTUAL_ENV")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not (here and p.startswith(here)))
    env.pop("VIRTUAL_ENV", None)
    env.update(PYENV_VERSION="3.11:3.9", ENVBRIDGE_SOURCE=ROOT)  # as .ci/run; envbridge from this checkout
    command = [sys.executable, "-m", "tox", "-e", ",".join(envs), "--", "-rA", "-p", "no:cacheprovider"]
    process = subprocess.Popen(
        command,
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = process.communicate(timeout=280)
    finally:
        if process.poll() is None:  # timed out: stop tox and everything it started
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    failed = sorted(line.split(" - ")[0] for line in out.splitlines() if line.startswith(("FAILED ", "ERROR ")))
    expected = sorted(set(failing) | (set(may_fail) & set(failed)))
    assert (process.returncode, failed) == (1 if expected else 0, expected), out[-6000:]
    return out


@pytest.fixture
def project(tmp_path):
    yield tmp_path
    shutil.rmtree(tmp_path / ".tox", ignore_errors=True)  # its envs: about 1 GB of TensorFlow


def test_init_tox_runs_a_user_project_in_both_eras_and_the_tapes_agree(project):
    tmp_path = project
    import tox  # noqa: F401  (a dependency of the modern env: an ImportError here fails, it never skips)

    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "corridor_pkg").mkdir()
    (tmp_path / "corridor_pkg" / "__init__.py").write_text(textwrap.dedent(PACKAGE))
    shutil.copy(NUMERIC, tmp_path / "corridor_pkg" / "numeric.py")
    assert main(["init", "tox", "--dir", str(tmp_path)] + [a for e in ENVS for a in ("--env", e)]) == 0

    first = _tox(tmp_path, "core-py311")  # no other era's tapes yet: everything passes
    assert f"recorded {tmp_path / TAPES / 'py311-numpy2.npz'}" in first
    # replays the 3.11 tapes through gym 0.23 and DreamerV2 and on numpy 1.19.5, records 3.9's
    legacy = _tox(tmp_path, "legacy", may_fail=[HOVER_FAILS, DECLARED_FAILS])
    assert f"recorded {tmp_path / TAPES / 'py39-numpy1.npz'}" in legacy
    again = _tox(tmp_path, "core-py311", may_fail=[HOVER_FAILS, DECLARED_FAILS])  # now replays the 3.9 tapes
    assert "UserWarning: recorded" not in again
    hover = tmp_path / "tests" / "tapes" / "corridor_pkg.numeric.Hover"
    recorded = {era: Tape.load(str(hover / f"{era}.npz")).platform for era in ("py39-numpy1", "py311-numpy2")}
    for out, theirs, here in ((legacy, "py311-numpy2", "py39-numpy1"), (again, "py39-numpy1", "py311-numpy2")):
        platforms = differences(recorded[theirs], recorded[here])
        assert f"  platforms: {'; '.join(platforms)}" in out
        diverged = _hover(out, theirs, here, platforms)
        assert (HOVER_FAILS in out) == diverged
        declared = re.search(
            rf"the {theirs} tape in {here}: (agrees|agrees within (\d+) ulp|DIVERGES) \(DeclaredHover\.cross_era_ulps = 4\)",
            out,
        )
        assert declared, out[-6000:]
        assert (declared.group(1) == "DIVERGES") == (DECLARED_FAILS in out)
        assert declared.group(2) is None or 1 <= int(declared.group(2)) <= 4
        assert f"the {theirs} tape in {here}: agrees (Corridor.cross_era_ulps = 0)" in out
    for out in (first, legacy, again):
        for test in ("test_every_export_agrees_with_the_neutral_env_here", "test_the_env_is_the_same_in_every_era"):
            assert PASSED + test in out, out[-4000:]
        assert "PASSED tests/test_conformance_eras.py::test_constraints_are_the_installed_envbridges_pins" in out

    # and here, in the modern era: both eras' tapes replay through Gymnasium and SB3 too
    sys.path.insert(0, str(tmp_path))
    try:
        from corridor_pkg import Corridor
        from corridor_pkg.numeric import DeclaredHover

        for name in ("py311-numpy2", "py39-numpy1"):
            tape = Tape.load(str(tmp_path / TAPES / f"{name}.npz"))
            results = verify(Corridor, tape, ["neutral", "gymnasium", "sb3", "matlab"], snapshot_at=30)
            assert all(v.agrees for v in results.values()), results
        # (a) apart from (b): the 3.11 tape of DeclaredHover replays through Gymnasium and SB3 bit for bit
        folder = tmp_path / "tests" / "tapes" / "corridor_pkg.numeric.DeclaredHover"
        results = verify(
            DeclaredHover, Tape.load(str(folder / "py311-numpy2.npz")), ["gymnasium", "sb3"], snapshot_at=30
        )
        assert all(v.agrees for v in results.values()), results
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("corridor_pkg", None)
        sys.modules.pop("corridor_pkg.numeric", None)

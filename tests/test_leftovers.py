"""The suite's own hygiene (tests/conftest.py, issue 34): a pytest session with our conftest sends
temporary files under its basetemp, and fails, naming them, when something still lands in /tmp or
/dev/shm. Each case runs an inner pytest session in a subprocess with a copy of the conftest."""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

INNER = """
import os
import tempfile


def test_writes_a_logger_folder_where_sb3_would_and_maybe_escapes():
    os.makedirs(os.path.join(tempfile.gettempdir(), "SB3-redirected"))  # where SB3's logger puts it
    escape = os.environ.get("INNER_ESCAPE")
    if escape:
        os.makedirs(escape)  # a hard-coded temp path: not redirected
        shm = os.environ["ENVBRIDGE_LEFTOVER_SHM"]  # a segment this process made and did not unlink
        open(os.path.join(shm, f"envbridge_{os.getpid()}_probe"), "wb").close()
"""


def _inner_run(tmp_path, escape: str = "") -> tuple:
    """The inner session's exit status, output and process id. It watches a temp root and a
    shared-memory folder of this test's (``root``, ``shm`` under tmp_path), not /tmp and /dev/shm,
    so its deliberate leftovers never reach a concurrent session's check."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(os.path.join(HERE, "conftest.py"), project / "conftest.py")
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_inner.py").write_text(INNER)
    (tmp_path / "root").mkdir(), (tmp_path / "shm").mkdir()
    env = dict(
        os.environ,
        INNER_ESCAPE=escape,
        ENVBRIDGE_LEFTOVER_ROOTS=str(tmp_path / "root"),
        ENVBRIDGE_LEFTOVER_SHM=str(tmp_path / "shm"),
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'base'}"]
    with subprocess.Popen(
        command, cwd=str(project), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    ) as inner:
        try:
            out, _ = inner.communicate(timeout=300)
        finally:
            inner.kill()
    return inner.returncode, out.decode(), inner.pid


def test_a_session_sends_temporary_files_under_its_basetemp_and_passes(tmp_path):
    code, out, _ = _inner_run(tmp_path)
    assert code == 0, out
    assert (tmp_path / "base" / "tmp" / "SB3-redirected").is_dir()
    assert "leftovers" not in out


def test_a_session_that_leaves_files_in_tmp_or_dev_shm_fails_naming_them(tmp_path):
    escape = str(tmp_path / "root" / f"SB3-envbridge-probe-{secrets.token_hex(4)}")
    code, out, pid = _inner_run(tmp_path, escape)
    segment = str(tmp_path / "shm" / f"envbridge_{pid}_probe")
    assert code == 1 and "1 passed" in out, out
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if " leftovers " in line)) + 1
    # the entries listed (other processes' may be there too: see the conftest)
    listed = list(itertools.takewhile(lambda line: line.startswith("  /"), lines[start + 1 :]))
    assert lines[start] == (
        f"tests must leave nothing new in /tmp or /dev/shm (tests/conftest.py), got the {len(listed)} entries below. "
        "Write them under pytest's tmp_path, or close what made them; each names the tests to look at:"
    )
    assert (
        f"  {segment}  <- a process vector env's batch segment: tests/reliability, tests/core/test_vector.py" in listed
    )
    assert (
        f"  {escape}  <- SB3's logger folder (a model learned with no logger folder): tests/adapters/sb3, tests/upstream"
        in listed
    )

"""Suite-wide settings.

Ray: a Ray instance started by a test is token-protected with a fresh token held in this process's
environment (Ray then writes no ~/.ray/auth_token) and sends no usage stats.

Nothing left behind (issue 34). At the start of the session every temporary file of the run is sent
to one folder under pytest's basetemp, ``<basetemp>/tmp``: ``TMPDIR`` (read by every process a test
starts, and by Ray for its session folder) and ``tempfile.tempdir`` (this process: SB3's logger
folders ``SB3-<date>``, multiprocessing's ``pymp-*``, TensorFlow's and matplotlib's temporary files)
point there, and ``MPLCONFIGDIR`` (matplotlib's font cache, else written to ~/.cache) points to a
folder beside it. This happens in ``pytest_sessionstart``, before any test module is imported;
pytest keeps the folder with its basetemp (the last 3 runs), so a run's files can still be read.
Where that folder's path is too long for Ray's socket paths (AF_UNIX's 107 bytes: a long user name,
or --basetemp), Ray gets ``RAY_TMPDIR``, a short ``envbridge-ray-*`` folder in /tmp (a name no
other session's check watches), removed at the end of the session after stopping a Ray instance a
test left running.

At the end of the session the run FAILS (exit status 1, a "leftovers" section in the summary that
names each entry and the tests to look at) when the temp root it started with (normally /tmp), or
Ray's folder in it, holds a new entry named like one the tools our tests drive create
(``TEMP_LEFTOVERS``, ``RAY_LEFTOVERS``: they escaped the redirect, e.g. through a hard-coded /tmp
path or a subprocess started with an environment of its own), or /dev/shm holds a new
shared-memory segment of ours (``SHM_LEFTOVERS``; an ``envbridge_<pid>_...`` segment counts when
<pid> is this process or is not running any more: a live other process's is still in use). An entry
counts only if it is still there ``SETTLE_SECONDS`` later (a concurrent pip or venv's temporary
folder in use is gone by then). Only those names are compared because other processes on the
machine (pip, another tox env, a user's shell) write in /tmp at the same time and cannot be told
apart from ours: so no ``pip-*`` nor ``envbridge*`` pattern (tests/upstream/run_sb3.py, run beside
the pytest sessions by tox, keeps its cache and scratch folders in /tmp), and a concurrent run of an
older checkout (one without this redirect) can be reported here: run alone.
"""

from __future__ import annotations

import fnmatch
import gc
import os
import secrets
import shutil
import sys
import tempfile
import time
from typing import Dict, List, Set, Tuple

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
if "RAY_AUTH_MODE" not in os.environ:
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

SHM = "/dev/shm"
SETTLE_SECONDS = 5
RAY = "Ray's session folder: tests/adapters/rllib and the rllib rows of tests/conformance"
# (name pattern, what makes it and the tests to look at)
TEMP_LEFTOVERS: List[Tuple[str, str]] = [
    ("SB3-*", "SB3's logger folder (a model learned with no logger folder): tests/adapters/sb3, tests/upstream"),
    ("ray*", RAY),
    ("pymp-*", "multiprocessing's folder: the tests that start worker processes (tests/reliability, SubprocVecEnv)"),
    ("matplotlib-*", "matplotlib's cache: the CLI tests that plot a learning curve (tests/adapters/*/test_*cli*)"),
    ("torchinductor_*", "torch's compile cache (torch makes it on import): the tests that import SB3 or RLlib"),
    # TensorFlow's autograph module (tempfile's 8 random characters); a bare tmp???????? folder is not watched:
    # any process's mkdtemp() makes one (a concurrent tox env's pip build), so it cannot be told apart from ours
    ("tmp????????.py", "TensorFlow's autograph module written past TMPDIR: tests/adapters/dreamerv2"),
]
SHM_LEFTOVERS: List[Tuple[str, str]] = [
    ("envbridge_*", "a process vector env's batch segment: tests/reliability, tests/core/test_vector.py"),
    ("psm_*", "a multiprocessing SharedMemory named by Python: the tests that start worker processes"),
]
# an existing /tmp/ray (another Ray user's) is not new: its new sessions are compared instead
RAY_LEFTOVERS: List[Tuple[str, str]] = [("session_*", RAY)]
# Ray refuses a socket path longer than AF_UNIX allows; its longest one below its temp dir:
RAY_SOCKET = "/ray/session_2026-01-01_00-00-00_000000_4194304/sockets/plasma_store"
AF_UNIX_MAX = 107
_WATCHED = pytest.StashKey[Dict[str, List[Tuple[str, str]]]]()
_BEFORE = pytest.StashKey[Dict[str, Set[str]]]()
_REPORT = pytest.StashKey[List[str]]()
_RAY_TMP = pytest.StashKey[str]()


def _entries(folder: str) -> Set[str]:
    return set(os.listdir(folder)) if os.path.isdir(folder) else set()


def _watched() -> Dict[str, List[Tuple[str, str]]]:
    """The folders compared and what may not appear in them: /tmp (and the temp root pytest started
    with, when TMPDIR names another), Ray's folder in them, and /dev/shm. ``ENVBRIDGE_LEFTOVER_ROOTS``
    (os.pathsep-separated) and ``ENVBRIDGE_LEFTOVER_SHM`` replace them: tests/test_leftovers.py points
    its inner sessions at folders of its own, so its deliberate leftovers never reach another session."""
    listed = [r for r in os.environ.get("ENVBRIDGE_LEFTOVER_ROOTS", "").split(os.pathsep) if r]
    roots = set(listed) or {"/tmp", tempfile.gettempdir()}
    watched = {root: TEMP_LEFTOVERS for root in roots}
    watched.update({os.path.join(root, "ray"): RAY_LEFTOVERS for root in roots})
    watched[os.environ.get("ENVBRIDGE_LEFTOVER_SHM", SHM)] = SHM_LEFTOVERS
    return watched


def pytest_sessionstart(session: pytest.Session) -> None:
    root = tempfile.gettempdir()  # before TMPDIR moves
    watched = session.config.stash[_WATCHED] = _watched()
    session.config.stash[_BEFORE] = {folder: _entries(folder) for folder in watched}
    base = session.config._tmp_path_factory.getbasetemp()  # pytest's own basetemp (no public accessor)
    run_tmp, mpl = base / "tmp", base / "matplotlib"
    run_tmp.mkdir(exist_ok=True), mpl.mkdir(exist_ok=True)
    os.environ["TMPDIR"] = tempfile.tempdir = str(run_tmp)
    os.environ["MPLCONFIGDIR"] = str(mpl)
    if "RAY_TMPDIR" not in os.environ and len(str(run_tmp)) + len(RAY_SOCKET) > AF_UNIX_MAX:
        # a long basetemp (a long user name, --basetemp): Ray would refuse its socket paths there, so it
        # gets a short folder of its own in the temp root, removed at the end of the session
        ray_tmp = session.config.stash[_RAY_TMP] = tempfile.mkdtemp(prefix="envbridge-ray-", dir=root)
        os.environ["RAY_TMPDIR"] = ray_tmp


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _ours(name: str) -> bool:
    """An ``envbridge_<pid>_...`` segment this process made, or one whose maker has exited."""
    pid = name[len("envbridge_") :].split("_")[0]
    if not pid.isdigit():
        return True
    return int(pid) == os.getpid() or not _pid_running(int(pid))


def _new(before: Dict[str, Set[str]], watched: Dict[str, List[Tuple[str, str]]]) -> Dict[str, str]:
    """The new entries named like a leftover: path -> what makes it and the tests to look at."""
    found = {}
    for folder, known in sorted(before.items()):
        for name in sorted(_entries(folder) - known):
            why = next((why for pattern, why in watched[folder] if fnmatch.fnmatch(name, pattern)), None)
            shm = watched[folder] is SHM_LEFTOVERS
            if why is not None and (not shm or not name.startswith("envbridge_") or _ours(name)):
                found[os.path.join(folder, name)] = why
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    ray_tmp = session.config.stash.get(_RAY_TMP, None)
    if ray_tmp is not None:
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():  # a test's instance still runs from there: stop it first
            ray.shutdown()
        shutil.rmtree(ray_tmp, ignore_errors=True)
    before, watched = session.config.stash[_BEFORE], session.config.stash[_WATCHED]
    gc.collect()  # a segment or temporary folder whose last reference is garbage goes now
    found = _new(before, watched)
    if found:  # a concurrent process's temporary file in use (pip, venv) is gone a moment later; a leftover is not
        time.sleep(SETTLE_SECONDS)
        found = {path: why for path, why in _new(before, watched).items() if path in found}
    lines = [f"{path}  <- {why}" for path, why in found.items()]
    session.config.stash[_REPORT] = lines
    if lines and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    lines = config.stash.get(_REPORT, [])
    if lines:
        terminalreporter.section("leftovers", sep="=", red=True, bold=True)
        terminalreporter.line(
            f"tests must leave nothing new in /tmp or /dev/shm (tests/conftest.py), got the {len(lines)} entries "
            "below. Write them under pytest's tmp_path, or close what made them; each names the tests to look at:"
        )
        for line in lines:
            terminalreporter.line(f"  {line}")

"""Every test here runs GNU Octave; none may leave an Octave process behind (checked after each)."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from support import ERA

EXAMPLES = os.path.join(os.path.dirname(__file__), "mfiles")


def octave_children() -> list:
    """Octave processes whose parent is this test process (a concurrent run elsewhere is not ours)."""
    found = []
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if "octave" in name and rest[1] == me:
            found.append(int(pid))
    return found


@pytest.fixture(autouse=True)
def nothing_left_running():
    if shutil.which("octave-cli") is None:
        if ERA:  # a tox env: .ci/run installs Octave; a missing one fails, never skips
            pytest.fail(
                "octave-cli must be installed in tox env " + ERA + ": apt-get install -y --no-install-recommends octave"
            )
        pytest.skip("GNU Octave is not installed (apt-get install -y --no-install-recommends octave)")
    yield
    deadline = time.monotonic() + 2.0
    while octave_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert octave_children() == [], "an Octave process outlived its test"


@pytest.fixture
def mfiles(monkeypatch):
    """The test .m files' folder as the current folder (MATLAB searches it first)."""
    monkeypatch.chdir(EXAMPLES)
    return EXAMPLES

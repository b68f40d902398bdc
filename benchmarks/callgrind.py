"""Instruction counts under valgrind's callgrind: repeatable where wall-clock time on a shared VM is not.

A benchmark re-runs itself as a child (``script --child ARGS... STEPS``) under callgrind twice, with
``STEPS`` and with 0 steps, so start-up and set-up cancel out and the difference is the loop alone.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Sequence

__all__ = ["instructions_per_step"]


def _collected(script: str, child_args: Sequence[str], steps: int) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, script, "--child"]
    cmd += [*child_args, str(steps)]
    # A fixed hash seed and one BLAS thread make the count repeatable from run to run.
    quiet = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=quiet).stderr
    return int(re.search(r"Collected : (\d+)", out).group(1))


def instructions_per_step(script: str, child_args: Sequence[str], steps: int) -> float:
    """Instructions per step of ``script``'s child loop (``steps`` steps minus 0 steps)."""
    return (_collected(script, child_args, steps) - _collected(script, child_args, 0)) / steps

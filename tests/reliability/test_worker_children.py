"""Process hygiene (issue 28, family 7): what an env forks itself is stopped with the pool.

A worker leads its own process group, so closing the pool (or a fault that poisons it) kills the
env's own children too; they used to be orphaned (reparented to init) and outlive the test.
"""

from __future__ import annotations

import functools
import os
import time

import numpy as np
import pytest
from toy_envs.workers import Forker

import bridge


def _gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (gone, or a zombie waiting to be reaped by init)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _wait_gone(pid: int) -> bool:
    for _ in range(100):  # up to ~5 s on a loaded machine; not a timing assertion
        if _gone(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("how", ["close", "fault", "two-envs"])
def test_the_envs_own_child_is_stopped_with_the_pool(tmp_path, how):
    files = [str(tmp_path / f"child{i}.pid") for i in range(2 if how == "two-envs" else 1)]
    fns = [functools.partial(Forker, f) for f in files]
    from bridge.vector.process import ProcessVectorEnv

    vec = ProcessVectorEnv(fns)
    pids = [int(open(f).read()) for f in files]
    try:
        vec.reset(seed=0)
        assert not any(_gone(p) for p in pids)
        if how == "fault":
            with pytest.raises(bridge.errors.ContractError):
                vec.step(np.array([5]))  # refused before any worker moves: the pool stays open
            vec.pool.fault(0, ("answer", "a fault injected by the test", "Nothing"))
    except bridge.errors.ContractError:
        pass
    finally:
        vec.close()
    assert all(_wait_gone(p) for p in pids)

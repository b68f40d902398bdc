"""The shared-memory step wire of bridge.remote (issue 37, item 1): the same values as in-process,
between the two eras; and its faults (a host SIGSTOPped mid-step, garbage in the region, a host
that declares a larger layout than its spaces), each leaving no process and nothing in /dev/shm
(the region is an anonymous memfd: it never has a name there). Client and host SIGKILLed
mid-step: tests/core/test_remote.py::test_host_killed_mid_step and
test_remote_faults.py::test_a_host_ends_when_its_client_dies_mid_step, which step through the
region by default. Hang-prone cases run in a child joined with a deadline.
"""

from __future__ import annotations

import os
import stat
import sys

import numpy as np
import pytest
from support import raises_exactly
from test_remote import other_python
from test_remote_faults import ENVS, in_child

import bridge
import bridge.hosted.protocol
import bridge.hosted.wire
from bridge.errors import ContractError

REGION_FIX = (
    "Point python= at an interpreter with this envbridge installed (its host lays out the region as this side); "
    "every worker of this pool is closed."
)


def _shm_entries(*pids: int) -> list:
    if not os.path.isdir("/dev/shm"):
        return []
    return [name for name in os.listdir("/dev/shm") if any(str(pid) in name for pid in pids)]


def _same(mine, theirs) -> None:
    if isinstance(mine, dict):
        assert sorted(mine) == sorted(theirs)
        for key in mine:
            _same(mine[key], theirs[key])
    elif isinstance(mine, tuple):
        assert type(theirs) is tuple and len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            _same(a, b)
    else:
        assert type(mine) is type(theirs), (mine, theirs)
        assert getattr(mine, "dtype", None) == getattr(theirs, "dtype", None)
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("env_id", ["envbridge/PointMass-v0", "envbridge/PixelGrid-v0", "envbridge/MultiModal-v0"])
def test_steps_through_the_region_match_in_process_across_eras(env_id):
    local = bridge.make(env_id)
    env = bridge.remote(env_id, python=other_python())
    try:
        assert env.wire == {"step": "shared memory", "doorbell": "pipe (an empty frame)", "spin": "5e-05"}
        rng = np.random.default_rng(0)
        space = local.action_space
        _same(env.reset(seed=5), local.reset(seed=5))
        kept = []
        for _ in range(60):
            action = space.sample(rng)
            got, want = env.step(action), local.step(action)
            _same(got[0], want[0])
            assert got[1:] == want[1:]
            kept.append((got[0], want[0]))
            if got[2] or got[3]:
                seed = int(rng.integers(100))
                _same(env.reset(seed=seed), local.reset(seed=seed))
        for got, want in kept:
            _same(got, want)  # what a step returned is never a view of the region
    finally:
        env.close()
        local.close()
    assert env.process.exitcode == 0 and _shm_entries(os.getpid(), env.process.pid) == []


@pytest.mark.timeout(150)
def test_a_host_stopped_mid_step_times_out_and_is_stopped():
    name, message, stopped, entries = in_child(
        """
        env = bridge.remote(ENVS + ":Faulty", python=sys.executable, timeout=2, kwargs={"at": 100})
        env.reset(seed=0)
        env.step(0)
        os.kill(env.process.pid, signal.SIGSTOP)
        print(env.pool.names[0])
        print(said(lambda: env.step(0)))
        print(env.process.exitcode is not None)
        print([n for n in os.listdir("/dev/shm") if str(os.getpid()) in n or str(env.process.pid) in n])
        """
    )
    assert message == (
        f"ContractError: {name} at step 2 must answer a step call within 2 s, got no answer (the worker is still "
        "running). Find where the env blocks, or pass a larger timeout; every worker of this pool is closed."
    )
    assert (stopped, entries) == ("True", "[]")


def _patched_host(tmp_path, patch: str) -> str:
    """An interpreter whose host runs with ``patch`` applied to bridge.hosted.host first."""
    script = tmp_path / "patched_host.py"
    script.write_text("import sys\nfrom bridge.hosted import host, wire\n" + patch + "\nhost.main()\n")
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nshift 2\nexec {sys.executable} {script} "$@"\n')  # drops "-m bridge.hosted.host"
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return str(fake)


GARBAGE = {
    "terminated": ("region.terminated[0] = 7", "write terminated flags of 0 or 1 in the region, got 7 for env 0"),
    "reward": ("region.rewards[0] = float('nan')", "write finite rewards in the region, got nan for env 0"),
    "info flag": (
        "region.has_info[0] = 1 - region.has_info[0]",
        "send an info frame for exactly the envs it flags, got flags of envs [0], and no info frame within 3 s",
    ),
}


@pytest.mark.parametrize("what", sorted(GARBAGE))
def test_garbage_in_the_region_is_refused(tmp_path, what):
    write, said = GARBAGE[what]
    patch = (
        "original = host.Hosted.step_rows\n"
        "def step_rows(self):\n"
        "    out = original(self)\n"
        "    region = self.region\n"
        f"    {write}\n"
        "    return out\n"
        "host.Hosted.step_rows = step_rows\n"
    )
    env = bridge.remote(f"{ENVS}:Liar", python=_patched_host(tmp_path, patch), timeout=3, kwargs={"at": 100})
    try:
        env.reset(seed=0)
        with raises_exactly(ContractError, f"{env.pool.names[0]} at step 1 must {said}. {REGION_FIX}"):
            env.step(0)
    finally:
        env.close()
    assert env.process.exitcode is not None and _shm_entries(os.getpid(), env.process.pid) == []


def test_a_host_that_declares_a_larger_layout_is_refused(tmp_path):
    patch = (
        "original = host.Hosted.attach\n"
        "def attach(self):\n"
        "    said = original(self)\n"
        "    said['layout']['size'] += 4096\n"
        "    return said\n"
        "host.Hosted.attach = attach\n"
    )
    source = f"{ENVS}:Faulty"
    layout = bridge.hosted.wire.Layout(bridge.spaces.Box(-1.0, 1.0, (2,), np.float32), bridge.spaces.Discrete(2), 1)
    ours = layout.describe()
    theirs = dict(ours, size=ours["size"] + 4096)
    shown = bridge.hosted.protocol.shown
    with raises_exactly(
        ContractError,
        f"remote env {source!r} at attach must lay out the shared region as its spaces do ({shown(ours)}), got "
        f"{shown(theirs)}. Run the same envbridge version in both interpreters; every worker of this pool is closed.",
    ):
        bridge.remote(source, python=_patched_host(tmp_path, patch), timeout=10)
    assert _shm_entries(os.getpid()) == []


def test_infos_cross_as_a_frame_only_when_not_empty():
    env = bridge.remote(f"{ENVS}:Faulty", python=sys.executable, kwargs={"at": 100})
    try:
        env.reset(seed=0)
        assert env.wire["step"] == "shared memory"
        assert env.step(1)[4] == {"t": 1}  # Faulty reports its step count in every info
    finally:
        env.close()

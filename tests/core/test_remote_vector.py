"""Hosted vectors (issue 37, item 2): ``bridge.remote_vector`` steps N envs as one batch per round
trip in W hosts of the other era, behind the VectorEnv base: the same batches as the in-process
vector in every autoreset mode; a host that dies is named and stops every host of the vector."""

from __future__ import annotations

import functools
import os
import signal

import numpy as np
import pytest
from support import raises_exactly
from test_remote import other_python

import bridge
from bridge.errors import ContractError, SpecError


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("mode", ["next-step", "same-step"])
@pytest.mark.parametrize("env_id", ["envbridge/PointMass-v0", "envbridge/GridWorld-v0"])
def test_a_hosted_vector_steps_like_the_in_process_one(env_id, mode, workers):
    vec = bridge.remote_vector(env_id, 5, python=other_python(), workers=workers, autoreset_mode=mode)
    local = bridge.vectorize(functools.partial(bridge.make, env_id), 5, autoreset_mode=mode)
    hosts = [host.process for host in vec.hosts]
    try:
        assert vec.wire["step"] == "shared memory" and len(hosts) == workers
        got, want = vec.reset(seed=3), local.reset(seed=3)
        np.testing.assert_array_equal(got[0], want[0])
        rng = np.random.default_rng(0)
        space = vec.action_space
        ends = 0
        for _ in range(120):
            actions = space.sample(rng)
            got, want = vec.step(actions), local.step(actions)
            for mine, theirs in zip(got[:4], want[:4]):
                assert mine.dtype == theirs.dtype
                np.testing.assert_array_equal(mine, theirs)
            assert sorted(got[4]) == sorted(want[4])
            for key in want[4]:
                if key not in ("final_obs", "final_info"):
                    np.testing.assert_array_equal(got[4][key], want[4][key])
            ends += int(np.sum(want[2] | want[3]))
    finally:
        vec.close()
        local.close()
    assert ends > 0 and all(host.exitcode == 0 for host in hosts)


def test_a_host_of_the_vector_killed_stops_every_host():
    vec = bridge.remote_vector("envbridge/PointMass-v0", 4, python=other_python(), workers=2, timeout=30)
    try:
        vec.reset(seed=0)
        victim = vec.hosts[1]
        os.kill(victim.process.pid, signal.SIGKILL)
        victim.process.join(10)
        with pytest.raises(ContractError, match="killed by signal 9"):
            vec.step(np.zeros((4, 2), np.float32))
        assert all(host.process.exitcode is not None for host in vec.hosts)  # stopped by the fault itself
    finally:
        vec.close()
    assert all(host.process.exitcode is not None for host in vec.hosts)


def test_sizes_are_refused_before_a_host_starts():
    with raises_exactly(
        SpecError, "remote_vector workers must be an int in [1, num_envs=2], got 3. Pass e.g. workers=1."
    ):
        bridge.remote_vector("envbridge/PointMass-v0", 2, workers=3)
    with raises_exactly(SpecError, "remote_vector num_envs must be an int >= 1, got 0. Pass e.g. num_envs=1."):
        bridge.remote_vector("envbridge/PointMass-v0", 0)

"""One local Ray instance (2 CPUs) for the RLlib tests that need one; stopped if this started it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ray_local():
    import ray
    from bridge.adapters.rllib.session import ensure_ray

    started = not ray.is_initialized()
    ensure_ray(num_cpus=2)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(autouse=True)
def _one_torch_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny nets: one thread is faster than two contended ones
    yield
    torch.set_num_threads(threads)

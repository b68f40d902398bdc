"""make_vec_env refuses n_envs and seed that SB3 would fail on raw (issue 35, item 13): n_envs=0 was an
IndexError, seed=-1 a Gymnasium error; now a SpecError with the whole message, before anything is built."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

require("stable_baselines3")

from bridge.adapters.sb3 import make_vec_env  # noqa: E402

from bridge.errors import SpecError  # noqa: E402

N_ENVS = "make_vec_env n_envs must be an int >= 1, got {}. Pass e.g. n_envs=4."
SEED = "make_vec_env seed must be a non-negative int or None, got {}. Pass e.g. seed=0 (env i is seeded with seed + i)."


@pytest.mark.parametrize(
    "kwargs, text",
    [
        ({"n_envs": 0}, N_ENVS.format(0)),
        ({"n_envs": -2}, N_ENVS.format(-2)),
        ({"n_envs": 2.0}, N_ENVS.format(2.0)),
        ({"n_envs": True}, N_ENVS.format(True)),
        ({"n_envs": "4"}, N_ENVS.format("'4'")),
        ({"n_envs": 2, "seed": -1}, SEED.format(-1)),
        ({"n_envs": 2, "seed": 1.5}, SEED.format(1.5)),
        ({"n_envs": 2, "seed": "0"}, SEED.format("'0'")),
        ({"n_envs": 2, "seed": False}, SEED.format(False)),
        ({"n_envs": 2, "seed": np.int64(-3)}, SEED.format(repr(np.int64(-3)))),
    ],
)
def test_counts_sb3_would_fail_on_are_refused_first(kwargs, text):
    with raises_exactly(SpecError, text):
        make_vec_env("envbridge/GridWorld-v0", **kwargs)


def test_numpy_counts_are_fine():
    vec = make_vec_env("envbridge/GridWorld-v0", n_envs=np.int64(2), seed=np.int64(3))
    try:
        assert vec.num_envs == 2
    finally:
        vec.close()


@pytest.mark.parametrize(
    "steps, seed, text",
    [
        (2.5, 0, "sb3 train steps must be an int >= 1, got 2.5. Pass a whole number, e.g. steps=20000."),
        (0, 0, "sb3 train steps must be an int >= 1, got 0. Pass a whole number, e.g. steps=20000."),
        (10, -1, "sb3 train seed must be a non-negative int <= 4294967295, got -1. Pass e.g. seed=0."),
        (10, "0", "sb3 train seed must be a non-negative int <= 4294967295, got '0'. Pass e.g. seed=0."),
        (10, None, "sb3 train seed must be a non-negative int <= 4294967295, got None. Pass e.g. seed=0."),
    ],
)
def test_train_types_its_steps_and_seed_before_building_anything(steps, seed, text):
    # issue 40: train(..., steps=2.5) ran SB3 for 2.5 steps; the seed was named as make_vec_env's
    from bridge.adapters.sb3 import train

    with raises_exactly(SpecError, text):
        train("PPO", "envbridge/GridWorld-v0", steps, seed=seed)

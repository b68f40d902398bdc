"""A reset that does not call ``super().reset(seed=seed)`` is named at the first seeded reset, in
every single-env export of every era (the one guard): otherwise seeding silently stops."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from support import raises_exactly, require

import bridge
from bridge import spaces
from bridge.errors import ContractError


class NoReseed(bridge.Env):
    """Draws from self.np_random but never passes the seed on."""

    def __init__(self):
        self.observation_space = spaces.Box(0.0, 9.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return np.array([self.np_random.integers(0, 10)], np.float32), {}

    def step(self, action):
        return np.array([1.0], np.float32), 0.0, False, False, {}


class ReseedsOnce(NoReseed):
    """Seeds on the first reset only (a cached generator): a later reset(seed=0) is not reseeded."""

    def reset(self, *, seed=None, options=None):
        if self.np_random_seed is None:
            bridge.Env.reset(self, seed=seed)
        return np.array([self.np_random.integers(0, 10)], np.float32), {}


def _gymnasium(env: Any) -> Callable[[int], Any]:
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    export = to_gymnasium(env)
    return lambda seed: export.reset(seed=seed)


def _sb3(env: Any) -> Callable[[int], Any]:
    require("stable_baselines3")
    from bridge.adapters.sb3 import make_vec_env

    def reset(seed: int) -> Any:
        vec = make_vec_env(env, n_envs=1, seed=seed)  # SB3 seeds the first reset
        return vec.reset()

    return reset


def _gym(env: Any) -> Callable[[int], Any]:
    require("gym")
    from bridge.adapters.gym import to_gym

    export = to_gym(env)
    return lambda seed: export.reset(seed=seed)


def _dreamerv2(env: Any) -> Callable[[int], Any]:
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import to_dreamerv2

    def reset(seed: int) -> Any:
        return to_dreamerv2(env, seed=seed).reset()  # the chain's first reset carries the seed

    return reset


EXPORTS = {"gymnasium": _gymnasium, "sb3": _sb3, "gym": _gym, "dreamerv2": _dreamerv2}
MESSAGE = (
    "{cls}.reset(seed=0) must seed the env's Generator (env.np_random), got a reset that did not call "
    "super().reset(seed=seed). Call super().reset(seed=seed) first in your reset()."
)


@pytest.mark.parametrize("export", sorted(EXPORTS))
def test_a_reset_without_super_is_named_at_the_first_seeded_reset(export):
    reset = EXPORTS[export](NoReseed())
    with raises_exactly(ContractError, MESSAGE.format(cls="NoReseed")):
        reset(0)


@pytest.mark.parametrize("export", ["gymnasium", "gym"])
def test_a_reset_that_reseeds_only_once_is_named_at_the_second_seeded_reset(export):
    reset = EXPORTS[export](ReseedsOnce())
    reset(0)  # the first seeded reset does reach the Generator: accepted
    with raises_exactly(ContractError, MESSAGE.format(cls="ReseedsOnce")):
        reset(0)

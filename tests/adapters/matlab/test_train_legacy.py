"""Without SB3 (the legacy era) the options still build, and an agent or train is the house error
naming the era and the extra that installs it."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from bridge.adapters.matlab import examples as cp
from bridge.adapters.matlab import (
    rlDQNAgent,
    rlDQNAgentOptions,
    rlPPOAgent,
    rlTrainingOptions,
    train,
)
from support import raises_exactly

from bridge.errors import MissingDependencyError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is not None, reason="SB3 is installed")


def _hint():
    v = sys.version_info
    if v >= (3, 10):  # core-py311: the right era, SB3 just not installed
        return "Run: pip install 'envbridge[sb3]' torch==2.13.0."
    return (
        f"The sb3 runtime belongs to the modern era (Python 3.11); this is Python {v[0]}.{v[1]}. "
        "In a Python 3.11 environment run: pip install 'envbridge[sb3]' torch==2.13.0."
    )


def test_options_build_without_sb3():
    assert rlDQNAgentOptions(MiniBatchSize=32).MiniBatchSize == 32
    assert rlTrainingOptions(MaxEpisodes=3).MaxEpisodes == 3


@pytest.mark.parametrize("make", [rlDQNAgent, rlPPOAgent])
def test_an_agent_is_a_clear_error_naming_the_era_and_extra(make):
    with raises_exactly(
        MissingDependencyError,
        f"the package 'stable_baselines3' must be installed for {make.__name__} (the MATLAB facade trains with "
        f"SB3), got ImportError: No module named 'stable_baselines3'. {_hint()}",
    ):
        make(cp.cartpole_observation_info(), cp.cartpole_action_info())


def test_train_is_a_clear_error_naming_the_era_and_extra():
    with raises_exactly(
        MissingDependencyError,
        "the package 'stable_baselines3' must be installed for train (the MATLAB facade trains with SB3), got "
        f"ImportError: No module named 'stable_baselines3'. {_hint()}",
    ):
        train(None, cp.make_cartpole(), rlTrainingOptions())

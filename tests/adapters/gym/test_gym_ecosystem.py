"""The gym 0.23 export behaves as gym's own envs do (issue 29, gym side): gym's checker passes on
the bare export, ``spec.max_episode_steps`` is the registered cap, and float actions follow the
one exact-cast rule of both eras."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from support import raises_exactly, require

gym = require("gym")
env_checker = require("gym.utils.env_checker")

from bridge.adapters.gym import register, to_gym  # noqa: E402

from bridge.errors import ContractError, OrderError  # noqa: E402
from bridge.examples import EXAMPLE_IDS, PointMass  # noqa: E402


@pytest.mark.parametrize("env_id", list(EXAMPLE_IDS))
def test_gyms_checker_passes_on_the_bare_export_of_every_example(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker's advice (e.g. unnormalized Box) is not the point here
        env_checker.check_env(to_gym(env_id))


def test_a_step_before_reset_is_gyms_own_assertion_and_our_contract_error():
    env = to_gym("envbridge/GridWorld-v0")
    with pytest.raises(OrderError) as caught:
        env.step(0)
    assert isinstance(caught.value, AssertionError) and isinstance(caught.value, ContractError)
    assert str(caught.value) == "Cannot call env.step() before calling reset()"  # gym's words: check_env compares
    assert caught.value.parts == (
        "gym env step()",
        "come after reset()",
        "step() before the first reset()",
        "Call env.reset() first",
    )


def test_register_with_a_cap_shows_it_in_the_spec_and_cuts_once():
    register("envbridge-test/CappedGrid-v0", "bridge.examples.gridworld:GridWorld", max_episode_steps=3)
    env = gym.make("envbridge-test/CappedGrid-v0")
    assert env.spec.max_episode_steps == 3 == gym.spec("envbridge-test/CappedGrid-v0").max_episode_steps
    assert type(env).__name__ == "OrderEnforcing" and type(env.env).__name__ == "GymEnv"  # no gym TimeLimit on top
    env = gym.wrappers.RecordEpisodeStatistics(env)
    env.reset(seed=0)
    dones = [env.step(0)[2] for _ in range(3)]
    assert dones[-1] is True


def test_float64_actions_follow_the_exact_cast_rule_of_both_eras():
    env = to_gym(PointMass())
    env.reset(seed=0)
    env.step(np.array([0.5, -0.25]))  # float64 values float32 holds exactly: taken
    env.step([0.5, 0.0])  # a list, gym's classic rule: the same
    with raises_exactly(
        ContractError,
        "action must hold values float32 represents exactly (a cast that rounds is refused), "
        "got dtype float64 values that round. Round them yourself: .astype(np.float32).",
    ):
        env.step(np.array([0.1, 0.0]))

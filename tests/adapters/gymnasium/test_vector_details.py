"""The vector exports where Gymnasium and SB3 differ from a first guess, each after a reproducer in
their own tests: a reset mask of every env is a whole reset (also the first); one action where a
batch is wanted is a TypeError (Gymnasium's vector envs raise it); Gymnasium's own AutoresetMode
spellings are taken; SB3's ``set_attr(..., indices=i)`` on a batched simulator never sets every env."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")
require("stable_baselines3")

from bridge.adapters.gymnasium.vector import to_gymnasium_vector  # noqa: E402
from bridge.adapters.sb3.export import make_vec_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

from bridge.errors import BatchError, SpecError  # noqa: E402
from bridge.examples import CartPoleVector  # noqa: E402


def test_a_reset_mask_of_every_env_is_a_whole_reset_even_the_first():
    # Gymnasium's tests/vector/test_vector_env.py resets with options={"reset_mask": ...} at any time
    ours = to_gymnasium_vector(CartPoleVector(num_envs=3))
    obs, _ = ours.reset(seed=1, options={"reset_mask": np.ones(3, bool)})
    plain, _ = to_gymnasium_vector(CartPoleVector(num_envs=3)).reset(seed=1)
    np.testing.assert_array_equal(obs, plain)


def test_one_action_where_a_batch_is_wanted_is_gymnasiums_type_error():
    theirs = gymnasium.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
    theirs.reset(seed=0)
    with pytest.raises(TypeError):
        theirs.step(1)
    ours = to_gymnasium_vector(CartPoleVector(num_envs=2))
    ours.reset(seed=0)
    msg = "actions must hold one action per env (2), got 1. Pass one action per env, e.g. env.action_space.sample()."
    with raises_exactly(TypeError, msg) as caught:
        ours.step(1)
    assert isinstance(caught.value, BatchError)  # and still the ValueError of a wrong-sized batch
    ours.step(np.array([0, 1]))  # nothing moved: the batch steps on


@pytest.mark.parametrize(
    "mode, want",
    [
        (AutoresetMode.NEXT_STEP, AutoresetMode.NEXT_STEP),
        ("NextStep", AutoresetMode.NEXT_STEP),
        (AutoresetMode.SAME_STEP, AutoresetMode.SAME_STEP),
        ("SameStep", AutoresetMode.SAME_STEP),
    ],
)
def test_gymnasiums_own_autoreset_mode_spellings(mode, want):
    export = to_gymnasium_vector(CartPoleVector(num_envs=2), autoreset_mode=mode)
    assert export.metadata["autoreset_mode"] is want


def test_sb3_set_attr_of_one_env_of_a_batched_simulator_is_refused_not_applied_to_all():
    # SB3's tests/test_vec_envs.py::test_vecenv_custom_calls sets attributes with indices
    vec = make_vec_env(CartPoleVector, n_envs=4)
    msg = (
        "set_attr('max_episode_steps') must set one value for every env of the batch, got indices [1] of 4 envs "
        "that share one 'max_episode_steps'. Pass indices=None to set it for every env, or hold it per env as an "
        "array with one row per env (CartPoleVector steps all envs as one batch)."
    )
    with raises_exactly(SpecError, msg):
        vec.set_attr("max_episode_steps", 10, indices=1)
    assert vec.get_attr("max_episode_steps") == [500] * 4
    vec.set_attr("max_episode_steps", 10)
    assert vec.get_attr("max_episode_steps", indices=[2]) == [10]
    vec.close()


def test_the_action_of_a_sub_env_a_next_step_autoreset_resets_is_ignored_as_gymnasium_does():
    # Gymnasium's SyncVectorEnv (next-step mode) resets an ended sub-env on the next step and never
    # reads its action; the export checks only the sub-envs that step
    import bridge

    def make(cap):
        return lambda: bridge.TimeLimit(bridge.examples.GridWorld(), cap)

    export = to_gymnasium_vector(bridge.SyncVectorEnv([make(1), make(5)]))
    export.reset(seed=0)
    _, _, _, truncated, _ = export.step(np.array([0, 0]))
    assert truncated.tolist() == [True, False]
    export.step(np.array([99, 0]))  # sub-env 0 resets: its action is not read
    export.step(np.array([0, 0]))
    with raises_exactly(
        bridge.ContractError,
        "actions[1] must lie in [0, 3], got 99. Sample from env.action_space or clip the action into its bounds.",
    ):
        export.step(np.array([0, 99]))  # sub-env 0 resets again, sub-env 1 steps: its action is checked

"""VectorEnv: vectorize() over scalar envs in both autoreset modes, and CartPoleVector's batch
dynamics against scalar CartPoles."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly
from toy_envs.scripted import Countdown

import bridge
from bridge import spaces
from bridge.errors import ContractError, SpecError
from bridge.examples import CartPole, CartPoleVector
from bridge.examples.cartpole import dynamics, fallen


def test_next_step_autoreset_returns_final_obs_then_resets_on_the_following_step():
    venv = bridge.vectorize(lambda: Countdown(2), 2)
    obs, infos = venv.reset(seed=0)
    assert obs.tolist() == [[2], [2]] and infos["fresh"].tolist() == [True, True]
    obs, rewards, terminated, truncated, _ = venv.step(np.array([0, 0]))
    obs, rewards, terminated, truncated, _ = venv.step(np.array([0, 0]))
    assert obs.tolist() == [[0], [0]] and terminated.tolist() == [True, True]
    obs, rewards, terminated, truncated, infos = venv.step(np.array([0, 0]))
    assert obs.tolist() == [[2], [2]] and rewards.tolist() == [0.0, 0.0] and not terminated.any()
    assert rewards.dtype == np.float64 and terminated.dtype == bool


def test_same_step_autoreset_puts_the_final_obs_in_infos():
    venv = bridge.vectorize(lambda: Countdown(2), 2, autoreset_mode="same-step")
    venv.reset(seed=0)
    venv.step(np.array([0, 0]))
    obs, _, terminated, _, infos = venv.step(np.array([0, 0]))
    assert obs.tolist() == [[2], [2]] and terminated.tolist() == [True, True]
    assert infos["_final_obs"].tolist() == [True, True] and infos["final_obs"].tolist() == [[0], [0]]
    final = infos["final_info"]  # the ending step's infos, in Gymnasium's vector layout
    assert final["left"].tolist() == [0, 0] and final["_left"].tolist() == [True, True]


def test_an_exception_in_a_sub_env_names_the_env_and_step():
    venv = bridge.vectorize(lambda: Countdown(2), 2)
    venv.reset(seed=0)
    venv.step(np.array([0, 0]))
    with raises_exactly(
        ContractError,
        "env 1 (<Countdown>) at step 2 must step without raising, got ValueError: bad luck. Fix the error in the env's step().",
    ):
        venv.step(np.array([0, 1]))


def test_vectorize_validates_its_arguments():
    with raises_exactly(SpecError, "vectorize num_envs must be an int >= 1, got 0. Pass e.g. num_envs=4."):
        bridge.vectorize(lambda: Countdown(2), 0)
    with raises_exactly(
        SpecError, "autoreset_mode must be one of ('next-step', 'same-step', 'disabled'), got sometimes. Pick one."
    ):
        bridge.vectorize(lambda: Countdown(2), 2, autoreset_mode="sometimes")


def test_vector_spaces_are_batched():
    venv = bridge.vectorize(CartPole, 3)
    assert venv.observation_space.shape == (3, 4) and venv.action_space == spaces.MultiDiscrete([2, 2, 2])


@pytest.mark.parametrize("mode", ["next-step", "same-step"])
def test_cartpole_vector_matches_scalar_dynamics(mode):
    n = 5
    venv = CartPoleVector(num_envs=n, max_episode_steps=30, autoreset_mode=mode)
    obs, _ = venv.reset(seed=3)
    scalars = [CartPole() for _ in range(n)]
    for i, env in enumerate(scalars):
        env.reset(seed=0)
        env.state = venv.state[i].copy()  # start each scalar twin from the batch's state
    rng = np.random.default_rng(0)
    steps = np.zeros(n, dtype=int)
    for _ in range(100):
        actions = rng.integers(0, 2, size=n)
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        for i, env in enumerate(scalars):
            if env.state is None:  # next-step mode: this step resets the slot
                env.state = venv.state[i].copy()
                steps[i] = 0
                assert rewards[i] == 0.0 and not terminated[i]
                continue
            o, r, term, _, _ = env.step(int(actions[i]))
            steps[i] += 1
            trunc = steps[i] >= 30 and not term
            assert (bool(terminated[i]), bool(truncated[i]), float(rewards[i])) == (term, trunc, r)
            seen = infos["final_obs"][i] if mode == "same-step" and (term or trunc) else obs[i]
            assert np.array_equal(seen, o)
            if term or trunc:
                if mode == "same-step":
                    env.state = venv.state[i].copy()
                    steps[i] = 0
                else:
                    env.state = None


def test_dynamics_batch_equals_rows():
    states = np.random.default_rng(0).uniform(-0.2, 0.2, size=(6, 4))
    force = np.where(np.arange(6) % 2 == 0, 10.0, -10.0)
    batched = dynamics(states, force)
    rows = np.stack([dynamics(s, f) for s, f in zip(states, force)])
    assert np.array_equal(batched, rows)
    assert fallen(np.array([2.5, 0, 0, 0])) and not fallen(np.zeros(4))

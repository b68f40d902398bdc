"""Default agents pick the SB3 policy the observation needs (modern era): several channels ->
MultiInputPolicy, a uint8 image spec -> CnnPolicy, else MlpPolicy; an image SB3's CNN cannot
convolve is refused before any model is built; the choice is said with ``Verbose``."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

require("stable_baselines3")

from bridge.adapters.matlab import (  # noqa: E402
    getAction,
    rlAgentInitializationOptions,
    rlDQNAgent,
    rlFiniteSetSpec,
    rlFunctionEnv,
    rlNumericSpec,
    rlPPOAgent,
    rlPPOAgentOptions,
    rlSACAgent,
    rlTrainingOptions,
    train,
)

from bridge.errors import SpecError  # noqa: E402

SMALL = rlAgentInitializationOptions(NumHiddenUnit=8)
FINITE = rlFiniteSetSpec([1, 2, 3])
NUMERIC = rlNumericSpec([1, 1], LowerLimit=-1, UpperLimit=1)


def image(side, name="camera", DataType="uint8"):
    spec = rlNumericSpec([side, side, 3], LowerLimit=0, UpperLimit=255, DataType=DataType)
    spec.Name = name
    return spec


def vector(dims=(2, 1), name="state"):
    spec = rlNumericSpec(list(dims))
    spec.Name = name
    return spec


@pytest.mark.parametrize(
    "observation, policy",
    [
        (vector(), "MlpPolicy"),
        (vector((1, 2)), "MlpPolicy"),
        ([vector(), vector((1, 2), "row")], "MultiInputPolicy"),
        ([image(36), vector()], "MultiInputPolicy"),
        ([image(16, DataType="double"), vector()], "MultiInputPolicy"),
        (image(36), "CnnPolicy"),
        (image(16, DataType="double"), "MlpPolicy"),  # not an image to SB3: flattened into the MLP
    ],
    ids=["column", "row", "two-vectors", "image-and-vector", "double-image-and-vector", "image", "double-image"],
)
@pytest.mark.parametrize("make, action", [(rlPPOAgent, FINITE), (rlDQNAgent, FINITE), (rlSACAgent, NUMERIC)])
def test_the_policy_follows_the_observation(observation, policy, make, action):
    agent = make(observation, action, SMALL, seed=0)
    assert agent.policy == policy
    sample = (
        [np.zeros(s.Dimension) for s in observation]
        if isinstance(observation, list)
        else [np.zeros(observation.Dimension)]
    )
    assert len(getAction(agent, sample)) == 1


@pytest.mark.parametrize(
    "observation, path", [(image(16), "observation"), ([image(16), vector()], "observation['camera']")]
)
def test_an_image_too_small_for_sb3s_cnn_is_refused_before_a_model_is_built(observation, path):
    policy = "MultiInputPolicy" if isinstance(observation, list) else "CnnPolicy"
    with raises_exactly(
        SpecError,
        f"rlPPOAgent {path} for SB3's {policy!r} must be at least 36x36 pixels (the smallest image SB3's NatureCNN "
        "convolves: 8x8 stride 4, 4x4 stride 2, 3x3 stride 1), got 16x16: Box(0, 255, (16, 16, 3), uint8). "
        'Declare a larger image spec, or one with DataType="double" (SB3 then flattens it into the MLP).',
    ):
        rlPPOAgent(observation, FINITE, SMALL)


def _dict_env():
    """A camera image and a [2 1] state; three actions; five steps an episode."""
    observation = [image(36), vector()]

    def step(action, info):
        info = info + 1
        return [np.full((36, 36, 3), 10 * info, np.uint8), np.array([[info], [action]], float)], 1.0, info >= 5, info

    def reset():
        return [np.zeros((36, 36, 3), np.uint8), np.zeros((2, 1))], 0

    return rlFunctionEnv(observation, FINITE, step, reset)


def test_a_multi_channel_agent_trains_and_says_its_policy(capsys):
    env = _dict_env()
    agent = rlPPOAgent(
        env.observationInfo, env.actionInfo, SMALL, rlPPOAgentOptions(ExperienceHorizon=8, MiniBatchSize=8)
    )
    opts = rlTrainingOptions(MaxEpisodes=2, MaxStepsPerEpisode=5, Plots="none", Verbose=True)
    stats = train(agent, env, opts, seed=0)
    assert list(stats.EpisodeSteps) == [5, 5]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "rlPPOAgent: SB3 PPO with 'MultiInputPolicy' (a Dict observation)"
    assert len(lines) == 3 and lines[1].startswith("Episode:    1/2 |")

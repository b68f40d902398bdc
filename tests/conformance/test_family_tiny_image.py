"""Family 4 (issue 30): a 16x16 image env trained with a custom features extractor: the check
passes with the policy_kwargs training uses, SB3 trains through the CLI with ``--policy-kwargs
MODULE:ATTR``, the MATLAB default agent is refused before training with the fix, the
ConformanceSuite passes with ``check_options``, and every view replays the tape."""

from __future__ import annotations

import pytest
from family_steps import check_passes, conform, train_sb3_cli
from support import raises_exactly, require
from toy_envs.families import tiny_treasure

from bridge.conformance.suite import ConformanceSuite
from bridge.errors import SpecError

ENTRY = "toy_envs.families:tiny_treasure"


def _sb3_options():
    require("stable_baselines3")
    from toy_envs.small_cnn import SMALL_CNN_KWARGS

    return {"sb3": {"policy_kwargs": SMALL_CNN_KWARGS}}


def test_check_passes_with_the_extractor_training_uses():
    from bridge import runtimes

    check_passes(tiny_treasure, options=_sb3_options() if "sb3" in runtimes.available() else None)


def test_without_the_extractor_the_sb3_check_names_the_fix():
    require("stable_baselines3")
    report = __import__("bridge").check(tiny_treasure, targets=["sb3"])
    (error,) = report.errors
    assert error.message.startswith("observation for SB3's 'CnnPolicy' must be at least 36x36 pixels")
    assert "envbridge train sb3 --policy-kwargs MODULE:ATTR" in error.fix


def test_sb3_trains_through_the_cli_with_policy_kwargs(tmp_path):
    require("stable_baselines3")
    train_sb3_cli(ENTRY, str(tmp_path), "--policy-kwargs", "toy_envs.small_cnn:SMALL_CNN_KWARGS")


def test_the_matlab_default_agent_is_refused_before_training_with_the_fix():
    require("stable_baselines3")
    from bridge.adapters.matlab import getActionInfo, getObservationInfo, rlDQNAgent

    env = tiny_treasure()
    with raises_exactly(
        SpecError,
        "rlDQNAgent observation for SB3's 'CnnPolicy' must be at least 36x36 pixels (the smallest image SB3's "
        "NatureCNN convolves: 8x8 stride 4, 4x4 stride 2, 3x3 stride 1), got 16x16: Box(0, 255, (16, 16, 3), uint8). "
        'Declare a larger image spec, or one with DataType="double" (SB3 then flattens it into the MLP).',
    ):
        rlDQNAgent(getObservationInfo(env), getActionInfo(env))


class TestTinyTreasureSuite(ConformanceSuite):
    """The user's mixin on the valid small-image env, with the check options training uses."""

    steps = 40

    @property
    def check_options(self):
        from bridge import runtimes

        return _sb3_options() if "sb3" in runtimes.available() else None

    def make_env(self):
        return tiny_treasure()


def test_every_view_replays_the_tape():
    conform(tiny_treasure)


@pytest.mark.parametrize("policy", ["MlpPolicy"])
def test_mlp_policy_needs_no_extractor(policy):
    require("stable_baselines3")
    assert __import__("bridge").check(tiny_treasure, targets=["sb3"], options={"sb3": {"policy": policy}}).ok


def test_rllib_is_told_and_given_the_connector_its_module_needs():
    require("ray")
    from bridge.adapters.rllib.export import to_rllib
    from bridge.adapters.rllib.lowering import needs_flatten

    export = to_rllib(tiny_treasure())
    assert needs_flatten(export.observation_space)  # train rllib and the view add FlattenObservations
    (note,) = [p for p in __import__("bridge").check(tiny_treasure, targets=["rllib"]).problems if p.check == "cnn"]
    assert note.message == (
        "RLlib's default CNN has no filters for images of 16x16: add RLlib's FlattenObservations connector (an MLP "
        "reads the image) or your own conv_filters."
    )

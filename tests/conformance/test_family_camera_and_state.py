"""Family 3 (issue 30): a Dict of a 36x36 RGB image and a vector with a ``Discrete(3, start=1)``
action: check -> train (SB3 via the CLI: MultiInputPolicy; the MATLAB default agent: MultiInputPolicy)
-> conform."""

from __future__ import annotations

from family_steps import check_passes, conform, train_matlab_default_agent, train_sb3_cli
from toy_envs.families import camera_and_state

ENTRY = "toy_envs.families:camera_and_state"


def test_check_passes_on_every_runtime_here():
    check_passes(camera_and_state)


def test_sb3_trains_through_the_cli(tmp_path):
    train_sb3_cli(ENTRY, str(tmp_path))


def test_the_matlab_default_agent_trains():
    train_matlab_default_agent(camera_and_state, "rlDQNAgent", "MultiInputPolicy")


def test_every_view_replays_the_tape():
    conform(camera_and_state)

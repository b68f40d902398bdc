"""Family 2 (issue 30): a `[2 1]` column observation and a `[1 2]` row action (MATLAB-shaped Boxes):
check -> train (SB3 via the CLI, the MATLAB default agent) -> conform."""

from __future__ import annotations

from family_steps import check_passes, conform, train_matlab_default_agent, train_sb3_cli
from toy_envs.families import column_and_row

ENTRY = "toy_envs.families:column_and_row"
REFUSED = {"dreamerv2": "ConversionError: the dreamerv2 view's action space must be a Box of float32 or narrower"}


def test_check_passes_on_every_runtime_here():
    env = column_and_row()
    assert (env.observation_space.shape, env.action_space.shape) == ((2, 1), (1, 2))
    check_passes(column_and_row)


def test_sb3_trains_through_the_cli(tmp_path):
    train_sb3_cli(ENTRY, str(tmp_path))


def test_the_matlab_default_agent_trains():
    train_matlab_default_agent(column_and_row, "rlPPOAgent", "MlpPolicy")


def test_every_view_replays_the_tape():
    conform(column_and_row, refused=REFUSED)

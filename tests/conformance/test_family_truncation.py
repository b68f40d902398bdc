"""Family 5 (issue 30): an env that never terminates, only its TimeLimit truncates: check -> train
(SB3 via the CLI, the MATLAB default agent) -> conform; every episode ends truncated, none terminated."""

from __future__ import annotations

from family_steps import check_passes, conform, train_matlab_default_agent, train_sb3_cli
from toy_envs.families import STEPS, tracker

ENTRY = "toy_envs.families:tracker"


def test_check_passes_on_every_runtime_here():
    check_passes(tracker)


def test_sb3_trains_through_the_cli(tmp_path):
    train_sb3_cli(ENTRY, str(tmp_path))


def test_the_matlab_default_agent_trains_on_truncated_episodes():
    from support import require

    require("stable_baselines3")
    from bridge.adapters.matlab import IS_DONE, sim

    agent = train_matlab_default_agent(tracker, "rlTD3Agent", "MlpPolicy")
    (experience,) = sim(tracker(), agent, seed=0)
    assert experience.NumSteps == STEPS and experience.IsDone[-1] == IS_DONE["truncated"]


def test_every_view_replays_the_tape():
    conform(tracker, steps=3 * STEPS)

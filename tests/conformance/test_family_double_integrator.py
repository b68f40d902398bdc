"""Family 1 (issue 30): a MATLAB double integrator, `rlFunctionEnv` with a `[2 1]` state and MATLAB's
usual continuous action `rlNumericSpec([1 1])`: check -> train (SB3 via the CLI, the MATLAB default
agent) -> conform. (DreamerV2's `train` on a `[1 1]` action: tests/adapters/dreamerv2/test_matlab_shapes_train.py.)"""

from __future__ import annotations

from family_steps import check_passes, conform, train_matlab_default_agent, train_sb3_cli
from toy_envs.families import double_integrator

ENTRY = "toy_envs.families:double_integrator"
# the float64 [1 1] action cannot be replayed bit for bit by DreamerV2's float32 actions (it trains on it)
REFUSED = {"dreamerv2": "ConversionError: the dreamerv2 view's action space must be a Box of float32 or narrower"}


def test_check_passes_on_every_runtime_here():
    assert double_integrator().action_space.shape == (1, 1)
    check_passes(double_integrator)


def test_sb3_trains_through_the_cli(tmp_path):
    train_sb3_cli(ENTRY, str(tmp_path))


def test_the_matlab_default_agent_trains():
    train_matlab_default_agent(double_integrator, "rlSACAgent", "MlpPolicy")


def test_every_view_replays_the_tape():
    conform(double_integrator, refused=REFUSED)

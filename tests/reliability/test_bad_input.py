"""The bad-input table (docs/bad-input.md): one test per row, the whole message, state unchanged.

The rows live in ``bad_input_table.py`` (neutral env, rlFunctionEnv: every era),
``bad_input_modern.py`` (to_gymnasium) and ``bad_input_legacy.py`` (to_gym, the DreamerV2 chain);
a row that needs a framework requires it inside the row, so this module runs in every era.
"""

from __future__ import annotations

import os

import bad_input_legacy  # noqa: F401  (registers its rows)
import bad_input_modern  # noqa: F401  (registers its rows)
import pytest
from bad_input_legacy import _gym
from bad_input_table import BOX, ROWS, Probe, Row
from support import probe_export, raises_exactly

import bridge
from bridge.errors import ContractError

# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ROWS, ids=[r.id for r in ROWS])
def test_bad_input_raises_the_whole_message_and_changes_nothing(case: Row):
    bad, state = case.build()
    before = state()
    with raises_exactly(case.error, case.message) as caught:
        bad()
    assert state() == before
    if case.cause is not None:
        assert type(caught.value.__cause__) is case.cause


def test_docs_table_lists_every_row_with_its_whole_message():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "bad-input.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    table = {line.split("|")[1].strip(" `"): line for line in lines if line.startswith("| `")}
    missing = [r.id for r in ROWS if r.id not in table]
    assert not missing, f"docs/bad-input.md lacks rows {missing}"
    for r in ROWS:
        shown = r.message.replace("|", "\\|").replace("\n", "\\n")
        assert shown in table[r.id], f"docs/bad-input.md row {r.id} does not show its message {shown!r}"
        assert f"`{r.error.__name__}`" in table[r.id], r.id
        assert ("yes" if r.strict else "no") == table[r.id].split("|")[4].strip(), r.id


def test_the_guard_state_machine_without_any_framework():
    env = Probe(end_at=2)
    guard = probe_export(env)
    guard.reset(seed=0)
    assert guard.step(BOX)[2:4] == (False, False)
    assert guard.step(BOX)[2] is True
    with raises_exactly(
        ContractError,
        "probe env step() must come after reset() once an episode has ended, got step() after terminated=True at "
        "step 2. Call env.reset() when terminated or truncated is True.",
    ):
        guard.step(BOX)
    guard.reset()  # reset recovers
    assert guard.steps == 0 and guard.step(BOX)[2] is False


def test_a_refused_output_ends_the_episode_until_reset():
    env = Probe("numpy_reward")
    guard = probe_export(env)
    guard.reset(seed=0)
    with pytest.raises(ContractError):
        guard.step(BOX)
    with raises_exactly(
        ContractError,
        "probe env step() must come after reset() once an episode has ended, got step() after a refused step() "
        "output at step 1. Call env.reset() when terminated or truncated is True.",
    ):
        guard.step(BOX)
    env.fault = None
    guard.reset()
    assert type(guard.step(BOX)[1]) is float


def test_a_bridge_error_from_inside_the_env_passes_through_unchanged():
    inner = bridge.TimeLimit(Probe(), 3)

    class Restoring(bridge.Wrapper):
        def step(self, action):
            inner.restore_state({"class": None})

    guard = probe_export(Restoring(inner))
    guard.reset(seed=0)
    text = "snapshot must come from bridge.env.TimeLimit, got None. Restore snapshots only into the wrapper stack that made them."
    with raises_exactly(ContractError, text) as caught:
        guard.step(BOX)
    assert caught.value.__cause__ is None


def test_gym_warns_on_a_step_past_the_end_by_default_like_gyms_own_envs():
    _gym_export = _gym(Probe(end_at=1), 1)
    text = (
        "gym env step() must come after reset() once an episode has ended, got step() after terminated=True at "
        "step 1. Call env.reset() when terminated or truncated is True."
    )
    with pytest.warns(UserWarning) as warned:
        _gym_export.step(BOX)
    assert [str(w.message) for w in warned] == [text]

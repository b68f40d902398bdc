"""CrossEraSuite, the cross-era half of the user-facing mixin: each era records its tape once into
``tapes_dir``, every era's tape replays through every export here, and the eras' tapes must hold the
same stream. Another era is simulated by a tape saved under another era's name."""

from __future__ import annotations

import os

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge.conformance import record
from bridge.conformance.eras import CrossEraSuite, compare_tapes, era_stamp, required_views
from bridge.errors import SpecError
from bridge.examples import GridWorld


def _grid():
    return bridge.TimeLimit(GridWorld(), 20)


def _suite(folder):
    class TestGrid(CrossEraSuite):
        steps = 60
        tapes_dir = str(folder)

        def make_env(self):
            return _grid()

    return TestGrid()


def test_the_first_run_of_an_era_records_its_tape_and_says_so(tmp_path):
    suite = _suite(tmp_path)
    mine = tmp_path / f"{era_stamp()}.npz"
    with pytest.warns(UserWarning, match=f"^recorded {mine} \\(\\+ .json\\): commit it, so the other era replays it$"):
        suite.test_every_eras_tape_replays_through_every_export_here()
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name, mine.name + ".json"]
    before = mine.read_bytes()
    suite.test_the_eras_recorded_the_same_stream()  # no second recording, no warning
    assert mine.read_bytes() == before


def test_another_eras_equal_tape_agrees(tmp_path):
    record(_grid, seed=0, steps=60).save(str(tmp_path / "py00-numpy0.npz"))
    suite = _suite(tmp_path)
    with pytest.warns(UserWarning):
        suite.test_the_eras_recorded_the_same_stream()
    suite.test_every_eras_tape_replays_through_every_export_here()


def test_another_eras_different_stream_is_named_at_its_first_step(tmp_path):
    theirs = record(_grid, seed=0, steps=60)
    theirs.entries[3].obs = np.array([2.0, 3.0, 2.0, 7.0], np.float32)
    theirs.save(str(tmp_path / "py00-numpy0.npz"))
    suite = _suite(tmp_path)
    with pytest.warns(UserWarning), pytest.raises(AssertionError) as caught:
        suite.test_the_eras_recorded_the_same_stream()
    assert str(caught.value).splitlines()[1] == (
        f"the {era_stamp()} tape must equal the py00-numpy0 tape, got the py00-numpy0 tape: step 2: "
        "observation[3] expected 1.0, got 7.0. Make the env depend on its seed and actions only "
        "(env.np_random, no global RNG)."
    )
    with pytest.raises(AssertionError) as caught:
        suite.test_every_eras_tape_replays_through_every_export_here()
    assert str(caught.value).splitlines()[1] == (
        "the py00-numpy0 tape through view 'neutral' must agree, got neutral: step 2: observation[3] expected 7.0, "
        "got 1.0. If the env changed on purpose, delete its tapes folder and record again; else the env differs here."
    )


def test_other_actions_from_the_same_seed_are_named():
    mine, theirs = record(_grid, seed=0, steps=30), record(_grid, seed=0, steps=30, action_seed=1)
    verdict = compare_tapes(mine, theirs, "the py00-numpy0 tape")
    assert verdict.kind == "FAILS"
    assert verdict.detail.startswith("at step 0: ContractError: the py00-numpy0 tape action at step 0 must be ")
    assert verdict.detail.endswith(
        ". The eras sampled different actions from one seed: the action space's sample() is not era-stable."
    )


def test_a_required_view_that_cannot_run_here_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVBRIDGE_VIEWS", "neutral, nosuch")
    assert required_views() == ["neutral", "nosuch"]
    suite = _suite(tmp_path)
    with pytest.warns(UserWarning), pytest.raises(AssertionError) as caught:
        suite.test_every_eras_tape_replays_through_every_export_here()
    assert (
        str(caught.value)
        .splitlines()[1]
        .startswith(
            f"the {era_stamp()} tape through view 'nosuch' must agree, got nosuch: unavailable no view is called 'nosuch'"
        )
    )


def test_without_envbridge_views_only_the_neutral_view_is_required(monkeypatch):
    monkeypatch.delenv("ENVBRIDGE_VIEWS", raising=False)
    assert required_views() == ["neutral"]


def test_a_suite_without_tapes_dir_says_what_to_set(tmp_path):
    suite = _suite(tmp_path)
    suite.tapes_dir = ""
    fix = "Set tapes_dir = os.path.join(os.path.dirname(__file__), 'tapes', '<env name>') in the class."
    with raises_exactly(SpecError, f"TestGrid.tapes_dir must name a folder, got ''. {fix}"):
        suite.test_the_eras_recorded_the_same_stream()
    assert not os.listdir(tmp_path)

"""CrossEraSuite, the cross-era half of the user-facing mixin: each era records its tape (with the
env's snapshots) once into ``tapes_dir``; this era's tape replays through every export here bit for
bit, and every other era's tape through the neutral env here, measured in ulps against the declared
``cross_era_ulps`` with the episode structure exact. Another era is simulated by a tape saved under
another era's name and said to come from another platform (the real other eras and BLAS kernels:
test_cross_era_numeric.py and test_init_tox_matrix.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge.conformance import record
from bridge.conformance.across import compare_eras
from bridge.conformance.eras import CrossEraSuite, era_stamp, required_views
from bridge.conformance.machine import describe
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


OTHER = dict(describe(), python="0.0.0 CPython", numpy="0.0.0")  # a platform of another era
ELSEWHERE = (
    "recorded with Python 0.0.0 CPython, replayed with {python}; recorded with numpy 0.0.0, replayed with {numpy}"
)
ELSEWHERE = ELSEWHERE.format(**describe())


def _elsewhere(tape):
    tape.platform = dict(OTHER)
    return tape


def test_the_first_run_of_an_era_records_its_tape_and_says_so(tmp_path):
    suite = _suite(tmp_path)
    mine = tmp_path / f"{era_stamp()}.npz"
    with pytest.warns(UserWarning, match=f"^recorded {mine} \\(\\+ .json\\): commit it, so the other era replays it$"):
        suite.test_every_export_agrees_with_the_neutral_env_here()
    names = [mine.name, mine.name + ".json", mine.name + ".states"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    before = mine.read_bytes()
    suite.test_the_env_is_the_same_in_every_era()  # no second recording, no warning, no other era yet
    assert mine.read_bytes() == before


def test_another_eras_equal_tape_agrees_bit_for_bit(tmp_path, capsys):
    _elsewhere(record(_grid, seed=0, steps=60, states=True)).save(str(tmp_path / "py00-numpy0.npz"))
    suite = _suite(tmp_path)
    with pytest.warns(UserWarning):
        suite.test_the_env_is_the_same_in_every_era()
    assert capsys.readouterr().out.splitlines()[:4] == [
        f"the py00-numpy0 tape in {era_stamp()}: agrees (GridWorld.cross_era_ulps = 0)",
        f"  platforms: {ELSEWHERE}",
        "  compared step by step from the recorded state: the tape's snapshot restored before each of its 65 "
        "entries (determinism 'strong'), so no difference compounds",
        "  episode structure: identical (terminated at steps 7, 13; truncated at steps 33, 53; discrete "
        "observations, dtypes, shapes and actions exact)",
    ]
    suite.test_every_export_agrees_with_the_neutral_env_here()


def _one_ulp_off(tape, entry, index):
    obs = tape.entries[entry].obs.copy()
    obs[index] = np.nextafter(obs[index], np.float32(np.inf))
    tape.entries[entry].obs = obs
    return obs


def test_another_eras_tape_one_ulp_off_diverges_unless_declared_and_the_export_question_is_apart(tmp_path, capsys):
    theirs = _elsewhere(record(_grid, seed=0, steps=60, states=True))
    _one_ulp_off(theirs, 3, 1)
    theirs.save(str(tmp_path / "py00-numpy0.npz"))
    suite = _suite(tmp_path)
    with pytest.warns(UserWarning), pytest.raises(AssertionError) as caught:
        suite.test_the_env_is_the_same_in_every_era()
    assert str(caught.value).splitlines()[1] == (
        f"the py00-numpy0 tape replayed in {era_stamp()} must agree within GridWorld.cross_era_ulps = 0 ulp "
        f"(bit for bit), got 1 ulp (observation 1 ulp first at step 2) between platforms where {ELSEWHERE}. Declare "
        "GridWorld.cross_era_ulps = 1 if a difference in the last bits between these platforms is acceptable for this "
        "env (docs/conformance.md, 'Why two platforms can differ in the last bit'); else make the env bit-exact across "
        "them."
    )
    assert capsys.readouterr().out.splitlines()[4] == (
        "  observation: 1 ulp at most (at step 2; abs 2.38e-07, rel 7.95e-08), first at step 2, in 1 of 65 comparisons"
    )
    suite.test_every_export_agrees_with_the_neutral_env_here()  # (a) is this era's tape only: it holds
    capsys.readouterr()  # what (a)'s exports printed (DreamerV2: "Resizing keys ...")
    suite.cross_era_ulps = 1
    suite.test_the_env_is_the_same_in_every_era()
    assert capsys.readouterr().out.startswith(
        f"the py00-numpy0 tape in {era_stamp()}: agrees within 1 ulp (TestGrid.cross_era_ulps = 1)\n"
    )


def test_flags_and_discrete_values_are_exact_whatever_the_tolerance(tmp_path):
    theirs = _elsewhere(record(_grid, seed=0, steps=60, states=True))
    shorter = lambda: bridge.TimeLimit(GridWorld(), 19)  # noqa: E731  (an env that ends its episodes earlier)
    found = compare_eras(shorter, theirs, name="the py00-numpy0 tape", here="py99", tolerance=1000)
    assert found.kind == "DIVERGES"
    assert found.failure() == (
        "the py00-numpy0 tape replayed in py99 must have the same episode structure, got step 32: truncated is False "
        "on the tape, True here. Flags, discrete observations, shapes and actions are exact across eras; find why "
        "they differ here."
    )
    other = compare_eras(
        _grid,
        record(_grid, seed=0, steps=30, action_seed=1),
        name="t",
        here="h",
        actions=record(_grid, seed=0, steps=30).actions,
    )
    assert other.structure.startswith("action 0 is array(") and other.structure.endswith("sampled here from the seed")


def test_without_snapshots_the_eras_are_compared_in_a_free_run_and_the_report_says_so():
    theirs = record(_grid, seed=0, steps=30)  # no states=True: what an older envbridge recorded
    found = compare_eras(_grid, theirs, name="t", here="h")
    assert found.kind == "agrees"
    assert found.method == (
        "in a free run from the seed (the tape holds no snapshots; determinism 'strong'): a difference may "
        "compound over an episode"
    )


def test_a_declared_tolerance_must_be_a_non_negative_int(monkeypatch):
    monkeypatch.setattr(GridWorld, "cross_era_ulps", 0.5, raising=False)
    fix = (
        "Set GridWorld.cross_era_ulps to the largest difference in ulps the env may show across eras and machines (0: "
        "bit for bit)."
    )
    with raises_exactly(SpecError, f"GridWorld.cross_era_ulps must be an int >= 0, got 0.5. {fix}"):
        compare_eras(_grid, record(_grid, seed=0, steps=5), name="t", here="h")


def test_a_required_view_that_cannot_run_here_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVBRIDGE_VIEWS", "neutral, nosuch")
    assert required_views() == ["neutral", "nosuch"]
    suite = _suite(tmp_path)
    with pytest.warns(UserWarning), pytest.raises(AssertionError) as caught:
        suite.test_every_export_agrees_with_the_neutral_env_here()
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
        suite.test_the_env_is_the_same_in_every_era()
    assert not os.listdir(tmp_path)


def test_a_weak_env_is_compared_from_its_recorded_checkpoints_and_the_report_says_so():
    def weak():
        env = GridWorld()
        env.determinism = "weak"
        return bridge.TimeLimit(env, 20)

    theirs = record(weak, seed=0, steps=60, states=True)
    found = compare_eras(weak, theirs, name="t", here="h")
    assert found.kind == "agrees"
    assert found.method == (
        f"from the recorded checkpoints: the tape's snapshot restored at {len(theirs.states)} of its 65 entries "
        "(determinism 'weak'); a difference may compound between them"
    )

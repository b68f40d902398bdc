"""Is the env the same across eras, for float envs whose last bits differ between numpy 1.19 and 2?

The tapes under ``tapes/across/<env>/`` were recorded once under each era's interpreter (with the
env's snapshots) and are committed, so every tox env replays the *other* era's recording here:
Python 3.9 + numpy 1.19.5 checks what Python 3.11 + numpy 2 recorded, and back. The numbers in the
expected messages are what this project's CI machine (x86-64 with AVX-512) measures; they are the
same in both directions. The init-tox matrix test (test_init_tox_matrix.py) does the same with
tapes recorded in the test session. Re-record (only when an env here deliberately changes):
``PYTHONPATH=tests python tests/conformance/test_cross_era_numeric.py --write`` under each era.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
from toy_envs.numeric import DeclaredHover, DoublePendulum, Hover

from bridge.conformance.across import compare_eras
from bridge.conformance.eras import CrossEraSuite, era_stamp
from bridge.conformance.tape import Tape, record

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tapes", "across")
ERAS = ("py39-numpy1", "py311-numpy2")
OTHER = {"py39-numpy1": "py311-numpy2", "py311-numpy2": "py39-numpy1"}.get(era_stamp(), "")
pytestmark = pytest.mark.skipif(not OTHER, reason=f"no other era's tapes for {era_stamp()} (they are {ERAS})")
DOCS = "docs/conformance.md, 'Why two eras can differ in the last bit'"


def _suite(env, **options):
    options.update(tapes_dir=os.path.join(HERE, env.__name__), steps=200, make_env=lambda self: env())
    return type(f"Test{env.__name__}", (CrossEraSuite,), options)()


def _tape(env, era):
    return Tape.load(os.path.join(HERE, env.__name__, f"{era}.npz"))


def test_both_eras_have_a_tape_with_snapshots_of_every_env():
    for env in (Hover, DeclaredHover, DoublePendulum):
        for era in ERAS:
            with open(os.path.join(HERE, env.__name__, f"{era}.npz.json")) as f:
                manifest = json.load(f)
            assert manifest["states"]["entries"] == list(range(len(manifest["kinds"]) - 1)), (env, era)


def test_an_env_without_a_declared_tolerance_diverges_with_the_measured_numbers(capsys):
    with pytest.raises(AssertionError) as caught:
        _suite(Hover).test_the_env_is_the_same_in_every_era()
    assert str(caught.value).splitlines()[1] == (
        f"the {OTHER} tape replayed in {era_stamp()} must agree within Hover.cross_era_ulps = 0 ulp (bit for bit), "
        "got 1 ulp (observation['distance'] 1 ulp first at step 20; observation['cost'] 1 ulp first at step 8; "
        "observation['gust'] 1 ulp first at step 0; reward 1 ulp first at step 20). Declare Hover.cross_era_ulps = 1 "
        f"if a difference in the last bits between the numpy eras is acceptable for this env ({DOCS}); else make the "
        "env bit-exact across eras there."
    )
    report = capsys.readouterr().out.splitlines()
    assert report[0] == f"the {OTHER} tape in {era_stamp()}: DIVERGES (Hover.cross_era_ulps = 0)"
    assert report[1] == (
        "  compared step by step from the recorded state: the tape's snapshot restored before each of its 206 "
        "entries (determinism 'strong'), so no difference compounds"
    )
    assert report[2] == (
        "  episode structure: identical (terminated at no step; truncated at steps 39, 79, 119, 159, 199; "
        "discrete observations, dtypes, shapes and actions exact)"
    )
    # np.sum over 4,096 elements and the same quantities written elementwise with math: bit for bit
    assert report[6:8] == [
        "  observation['total']: bit for bit in all 206 comparisons",
        "  observation['exact']: bit for bit in all 206 comparisons",
    ]
    assert report[3] == (
        "  observation['distance']: 1 ulp at most (at step 20; abs 4.44e-16, rel 2.13e-16), first at step 20, "
        "in 19 of 206 comparisons"
    )


def test_the_same_env_declaring_its_tolerance_agrees_within_the_measured_ulps(capsys):
    _suite(DeclaredHover).test_the_env_is_the_same_in_every_era()
    report = capsys.readouterr().out.splitlines()
    print("\n".join(report))
    assert report[0] == f"the {OTHER} tape in {era_stamp()}: agrees within 1 ulp (DeclaredHover.cross_era_ulps = 4)"


def test_a_suite_option_smaller_than_the_measured_difference_diverges_and_names_itself():
    with pytest.raises(AssertionError) as caught:
        _suite(DeclaredHover, cross_era_ulps=0).test_the_env_is_the_same_in_every_era()
    line = str(caught.value).splitlines()[1]
    assert line.startswith(
        f"the {OTHER} tape replayed in {era_stamp()} must agree within TestDeclaredHover.cross_era_ulps = 0 ulp (bit "
        "for bit), got 1 ulp (observation['distance'] 1 ulp first at step 20; "
    )
    assert "Declare TestDeclaredHover.cross_era_ulps = 1 if a difference" in line


def test_a_chaotic_env_separates_across_eras_but_differs_per_step_in_the_last_bits_only(capsys):
    ours, theirs = _tape(DoublePendulum, era_stamp()), _tape(DoublePendulum, OTHER)
    apart = np.array([np.abs(a.obs - b.obs).max() for a, b in zip(ours.entries, theirs.entries)])
    print(
        "free-run separation of the two eras' trajectories at steps 25, 50, 100, 150, 200:",
        apart[[25, 50, 100, 150, 200]],
    )
    assert apart[:26].max() < 1e-9 and apart[100:].max() > 1.0  # 1e-13 apart at step 25, O(1) after ~100 steps
    found = compare_eras(DoublePendulum, theirs, name=f"the {OTHER} tape", here=era_stamp(), actions=ours.actions)
    print(found)
    assert found.ok and 0 < found.ulps <= 4, str(found)  # step by step: a few ulps, not the separation
    assert str(found).splitlines()[0] == (
        f"the {OTHER} tape in {era_stamp()}: agrees within {int(found.ulps)} ulp (DoublePendulum.cross_era_ulps = 4)"
    )
    assert max(f.max_abs for f in found.fields.values()) < 1e-13


def test_this_eras_own_tape_replayed_from_its_snapshots_is_bit_for_bit():
    for env in (Hover, DoublePendulum):
        tape = _tape(env, era_stamp())
        found = compare_eras(env, tape, name="this era's tape", here=era_stamp(), actions=tape.actions)
        assert found.kind == "agrees", str(found)


if __name__ == "__main__" and "--write" in sys.argv:
    for env in (Hover, DeclaredHover, DoublePendulum):
        os.makedirs(os.path.join(HERE, env.__name__), exist_ok=True)
        path = os.path.join(HERE, env.__name__, f"{era_stamp()}.npz")
        record(env, seed=0, steps=200, states=True).save(path)
        print("wrote", path)

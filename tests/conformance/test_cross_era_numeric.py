"""Is the env the same on another platform, for float envs whose last bits depend on it?

Bit for bit is a promise of one interpreter on one machine. Another era (Python 3.9 + numpy 1.19
against 3.11 + numpy 2) or another machine (another CPU, another BLAS kernel) may round the last
bits of the same float computation differently, and by how much depends on the machine the suite
runs on. So nothing here is a committed figure: each test makes both platforms while it runs, on
this machine (the other era's interpreter from tox's host venv; another OpenBLAS kernel through
``OPENBLAS_CORETYPE`` in a subprocess, the cheap way to emulate another machine), measures them
independently (restore the recorded state, step, compare the bits), and asserts that the verdict
and its printed message say what was measured. Where a test must see a difference whatever the
machine, it makes one exactly (a recorded value moved by a known number of ulps).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Dict, Tuple

import numpy as np
import pytest
from support import TESTS, other_kernel, raises_exactly
from toy_envs.numeric import DeclaredHover, DoublePendulum, Hover

from bridge.conformance import Tape, record, verify
from bridge.conformance.across import compare_eras
from bridge.conformance.eras import CrossEraSuite, era_stamp
from bridge.conformance.machine import describe, differences
from bridge.conformance.tape import leaves
from bridge.conformance.ulps import ulps

DOCS = "docs/conformance.md, 'Why two platforms can differ in the last bit'"
ENVS = {"Hover": Hover, "DeclaredHover": DeclaredHover, "DoublePendulum": DoublePendulum}
RECORD = (
    "import sys; sys.path.insert(0, sys.argv[1]); import toy_envs.numeric as n; "
    "from bridge.conformance.recording import record; "
    "record(getattr(n, sys.argv[2]), seed=0, steps=int(sys.argv[3]), states=True).save(sys.argv[4])"
)


def _other_era_python() -> str:
    """The other era's interpreter tox built for hosted envs (numpy and this checkout installed)."""
    for variable in ("ENVBRIDGE_PYTHON_OTHER", "ENVBRIDGE_PYTHON_LEGACY", "ENVBRIDGE_PYTHON_MODERN"):
        if os.environ.get(variable):
            return os.environ[variable]
    pytest.fail("set ENVBRIDGE_PYTHON_OTHER to the other era's python (tox sets it)", pytrace=False)
    raise AssertionError  # unreachable


def _record_in(python: str, env: str, path: str, steps: int, kernel: str = "") -> Tape:
    variables = dict(os.environ)  # this process's kernel choice too, unless another is asked for
    if kernel:
        variables["OPENBLAS_CORETYPE"] = kernel
    subprocess.run([python, "-c", RECORD, TESTS, env, str(steps), path], env=variables, check=True, timeout=120)
    return Tape.load(path)


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory):
    """Tapes of every env recorded here, under the other era's interpreter and under another BLAS kernel."""
    folder = tmp_path_factory.mktemp("elsewhere")
    made: Dict[Tuple[str, str], Tape] = {}
    for env in ENVS:
        for where, python, kernel in (
            ("here", sys.executable, ""),
            ("era", _other_era_python(), ""),
            ("kernel", sys.executable, other_kernel()),
        ):
            made[env, where] = _record_in(python, env, str(folder / f"{env}-{where}.npz"), 200, kernel)
        if made[env, "kernel"].platform == describe():  # this BLAS ignores OPENBLAS_CORETYPE (not x86 OpenBLAS):
            tape = made[env, "kernel"]  # the same bits, said to come from another kernel (the rule still applies)
            tape.platform = dict(tape.platform, blas_kernel=f"{other_kernel()} (emulated)")
    return made


def measured(env_class, tape: Tape) -> Dict[str, Tuple[int, float]]:
    """Independently of the comparison under test: per float field, the first step where the env
    here, restored to the tape's state before each step, differs from the tape in any bit, and the
    largest exact distance in ulps there (the comparison counts ulps at the field's scale: never more)."""
    env, found, step = env_class(), {}, 0
    env.reset(seed=tape.seed)
    for k, entry in enumerate(tape.entries):
        if entry.kind == "reset":
            continue
        env.restore_state(tape.states[k - 1])
        obs, reward, _, _, _ = env.step(tape.actions[step])
        pairs = {
            f"observation{p}": (v, leaves(tape.observation_space, obs)[p])
            for p, v in leaves(tape.observation_space, entry.obs).items()
        }
        pairs["reward"] = (np.array(entry.reward), np.array(float(reward)))
        for field, (want, have) in pairs.items():
            if want.dtype.kind == "f" and want.tobytes() != np.asarray(have).tobytes():
                first, most = found.get(field, (step, 0.0))
                found[field] = (first, max(most, float(ulps(want, np.asarray(have)).max())))
        step += 1
    return found


def _expected_failure(subject, owner, tolerance, found, counted, platforms):
    """The DIVERGES message for what ``found`` (the independent measurement) and ``counted`` measured:
    the fields over ``tolerance``, with their first step."""
    over = {f: v for f, v in found.items() if counted.fields[f].max_ulps > tolerance}
    worst = "; ".join(f"{f} {int(counted.fields[f].max_ulps)} ulp first at step {s}" for f, (s, _) in over.items())
    declared = int(counted.ulps)
    bit = " (bit for bit)" if tolerance == 0 else ""
    return (
        f"{subject} must agree within {owner}.cross_era_ulps = {tolerance} ulp{bit}, got {declared} ulp "
        f"({worst}) between platforms where {'; '.join(platforms)}. Declare {owner}.cross_era_ulps = {declared} if a "
        f"difference in the last bits between these platforms is acceptable for this env ({DOCS}); else make the env "
        "bit-exact across them."
    )


def _ordered(counted, found):
    """The measured fields in the order the comparison reports them (its fields' order)."""
    return {f: found[f] for f in counted.fields if f in found}


@pytest.mark.parametrize("where", ["kernel", "era"])
def test_a_tape_from_another_platform_agrees_within_declared_ulps_and_undeclared_names_both(elsewhere, where):
    tape = elsewhere["Hover", where]
    platforms = differences(tape.platform, describe())
    assert platforms, "the tape must say it was recorded elsewhere"
    if where == "kernel":
        assert (
            f"recorded with the {tape.platform['blas_kernel']} BLAS kernel, replayed with {describe()['blas_kernel']}"
            in platforms
        )
    found = measured(Hover, tape)
    counted = compare_eras(Hover, tape, name="the tape", here=era_stamp())
    print(f"{where}: {counted}")
    assert found.get("observation['exact']") is None  # elementwise math: the same bits on every platform
    assert set(f for f, d in counted.fields.items() if d.max_ulps > 0) == set(found)
    for field, (_, exact) in found.items():
        assert 1 <= counted.fields[field].max_ulps <= exact
    undeclared = verify(Hover, tape, ["neutral"])["neutral"]
    declared = verify(DeclaredHover, _as(tape, DeclaredHover), ["neutral"])["neutral"]
    if not found:  # these two platforms happen to compute Hover alike: bit for bit, both named
        assert str(undeclared) == f"neutral: agrees bit for bit (Hover.cross_era_ulps = 0; {'; '.join(platforms)})"
        return
    subject = f"the tape replayed in {era_stamp()}"
    expected = _expected_failure(subject, "Hover", 0, _ordered(counted, found), counted, platforms)
    assert str(undeclared) == f"neutral: DIVERGES {expected}"
    shown = int(counted.ulps)
    if shown <= 4:  # within what DeclaredHover declares (on this machine; another may differ by more)
        assert str(declared) == (
            f"neutral: agrees within {shown} ulp (DeclaredHover.cross_era_ulps = 4; {'; '.join(platforms)})"
        )
    else:
        over = _expected_failure(subject, "DeclaredHover", 4, _ordered(counted, found), counted, platforms)
        assert str(declared) == f"neutral: DIVERGES {over}"


def _copy(tape: Tape, **changes) -> Tape:
    """``tape`` with some of its entries, states or platform replaced."""
    kept = {"entries": tape.entries, "states": tape.states, "platform": tape.platform}
    kept.update(changes)
    spaces_and_seed = (tape.env_id, tape.observation_space, tape.action_space, tape.seed, tape.actions)
    return Tape(*spaces_and_seed, kept["entries"], states=kept["states"], platform=kept["platform"])


def _as(tape: Tape, env_class) -> Tape:
    """The same recording, as if ``env_class`` had made it (its snapshots name their class)."""
    maker = f"{env_class.__module__}.{env_class.__qualname__}"
    return _copy(tape, states={k: dict(s, **{"class": maker}) for k, s in tape.states.items()})


def _largest(tape: Tape) -> Tuple[int, int]:
    """(entry index, step number) of the step whose observation['distance'] is the tape's largest:
    there a move by n ulps is n ulps at the field's scale too."""
    steps = [k for k, e in enumerate(tape.entries) if e.kind == "step"]
    step = int(np.argmax([tape.entries[k].obs["distance"][0] for k in steps]))
    return steps[step], step


def _nudged(tape: Tape, platform, by: int) -> Tape:
    """``tape`` with its largest step's observation['distance'] moved up by ``by`` ulps of the field's
    scale (its largest magnitude on the tape, resets included: what the comparison counts in), said
    to come from ``platform``. (Powers of two: the moved value is exact.)"""
    entries = list(tape.entries)
    index = _largest(tape)[0]
    scale = max(abs(e.obs["distance"][0]) for e in entries)
    obs = dict(entries[index].obs)
    obs["distance"] = obs["distance"] + by * np.spacing(scale)
    entries[index] = type(entries[index])(
        "step", obs, entries[index].reward, entries[index].terminated, entries[index].truncated
    )
    return _copy(tape, entries=entries, platform=platform)


def test_one_rule_the_same_platform_is_bit_for_bit_another_is_within_the_declared_ulps():
    """Deterministic on every machine: a recorded value moved by exactly 2 ulps."""
    here = describe()
    recorded = record(DeclaredHover, seed=0, steps=40, states=True)
    assert recorded.platform == here
    assert str(verify(DeclaredHover, recorded, ["neutral"])["neutral"]) == "neutral: agrees"

    moved = _nudged(recorded, here, 2)  # the same platform: the declared 4 ulps do not apply
    index, step = _largest(recorded)
    assert str(verify(DeclaredHover, moved, ["neutral"])["neutral"]) == (
        f"neutral: step {step}: observation['distance'][0] expected "
        f"{float(moved.entries[index].obs['distance'][0])!r}, got {float(recorded.entries[index].obs['distance'][0])!r}"
    )
    found = compare_eras(DeclaredHover, moved, name="the tape", here=era_stamp())
    assert found.failure() == (
        f"the tape replayed in {era_stamp()} must agree bit for bit (it was recorded on this platform: Python, numpy, "
        f"BLAS kernel, CPU, OS), got 2 ulp (observation['distance'] 2 ulp first at step {step}) on the same platform. One "
        "interpreter on one machine repeats an env exactly: if the env changed on purpose, record the tape again; else "
        "find what differs between two runs of it."
    )

    other = dict(here, blas_kernel="Elsewhere")  # another machine: the declared ulps apply
    moved = _nudged(recorded, other, 2)
    kernel = f"recorded with the Elsewhere BLAS kernel, replayed with {here['blas_kernel']}"
    results = verify(DeclaredHover, moved, ["neutral", "matlab"])
    assert str(results["neutral"]) == f"neutral: agrees within 2 ulp (DeclaredHover.cross_era_ulps = 4; {kernel})"
    assert str(results["matlab"]) == "matlab: agrees"  # the exports against the env here, bit for bit
    undeclared = _as(moved, Hover)
    assert str(verify(Hover, undeclared, ["neutral"])["neutral"]) == (
        f"neutral: DIVERGES the tape replayed in {era_stamp()} must agree within Hover.cross_era_ulps = 0 ulp (bit for "
        f"bit), got 2 ulp (observation['distance'] 2 ulp first at step {step}) between platforms where {kernel}. Declare "
        f"Hover.cross_era_ulps = 2 if a difference in the last bits between these platforms is acceptable for this env "
        f"({DOCS}); else make the env bit-exact across them."
    )
    suite = type("TestDeclaredHover", (CrossEraSuite,), {"make_env": lambda self: DeclaredHover()})()
    assert str(verify(DeclaredHover, moved, ["neutral"], tolerance=1, owner="TestDeclaredHover")["neutral"]).startswith(
        f"neutral: DIVERGES the tape replayed in {era_stamp()} must agree within TestDeclaredHover.cross_era_ulps = 1 "
        f"ulp, got 2 ulp (observation['distance'] 2 ulp first at step {step}) between platforms where"
    )
    assert suite.cross_era_ulps is None


def test_a_tape_without_a_platform_record_loads_and_counts_as_elsewhere(tmp_path):
    tape = record(Hover, seed=0, steps=10, states=True)
    tape.platform = None
    tape.save(str(tmp_path / "old.npz"))
    loaded = Tape.load(str(tmp_path / "old.npz"))
    assert loaded.platform is None
    assert str(verify(Hover, loaded, ["neutral"])["neutral"]) == (
        "neutral: agrees bit for bit (Hover.cross_era_ulps = 0; recorded on a platform the tape does not name (it "
        "predates platform records))"
    )


def _suite(env, folder, **options):
    options.update(tapes_dir=str(folder), steps=200, make_env=lambda self: env())
    return type(f"Test{env.__name__}", (CrossEraSuite,), options)()


def _era_folder(tmp_path, elsewhere, env):
    """A suite's tapes folder: the other era's tape under its era name (this era's is recorded by the suite)."""
    folder = tmp_path / env
    folder.mkdir()
    theirs = "py39-numpy1" if era_stamp() != "py39-numpy1" else "py311-numpy2"
    elsewhere[env, "era"].save(str(folder / f"{theirs}.npz"))
    return folder, theirs


def test_the_cross_era_suite_prints_and_fails_with_what_it_measured(tmp_path, elsewhere, capsys):
    folder, theirs = _era_folder(tmp_path, elsewhere, "Hover")
    tape = elsewhere["Hover", "era"]
    found, platforms = measured(Hover, tape), differences(tape.platform, describe())
    with pytest.warns(UserWarning, match="recorded .*: commit it"):
        suite = _suite(Hover, folder)
        suite._era_tapes()
    if not found:
        suite.test_the_env_is_the_same_in_every_era()
        assert (
            capsys.readouterr().out.splitlines()[0]
            == f"the {theirs} tape in {era_stamp()}: agrees (Hover.cross_era_ulps = 0)"
        )
        return
    with pytest.raises(AssertionError) as caught:
        suite.test_the_env_is_the_same_in_every_era()
    counted = compare_eras(Hover, tape, name=f"the {theirs} tape", here=era_stamp())
    subject = f"the {theirs} tape replayed in {era_stamp()}"
    assert str(caught.value).splitlines()[1] == _expected_failure(
        subject, "Hover", 0, _ordered(counted, found), counted, platforms
    )
    report = capsys.readouterr().out.splitlines()
    assert report[0] == f"the {theirs} tape in {era_stamp()}: DIVERGES (Hover.cross_era_ulps = 0)"
    assert report[1] == f"  platforms: {'; '.join(platforms)}"
    assert report[2] == (
        "  compared step by step from the recorded state: the tape's snapshot restored before each of its "
        f"{len(tape.entries)} entries (determinism 'strong'), so no difference compounds"
    )
    assert "  observation['exact']: bit for bit in all" in "\n".join(report)
    # (a) of the suite: this era's own tape, recorded here, through every export here
    suite.test_every_export_agrees_with_the_neutral_env_here()


def test_the_same_env_declaring_its_tolerance_agrees_within_what_it_measured(tmp_path, elsewhere, capsys):
    folder, theirs = _era_folder(tmp_path, elsewhere, "DeclaredHover")
    counted = compare_eras(DeclaredHover, elsewhere["DeclaredHover", "era"], name="x", here=era_stamp())
    with pytest.warns(UserWarning, match="recorded"):
        suite = _suite(DeclaredHover, folder)
        suite._era_tapes()
    if counted.ok:
        suite.test_the_env_is_the_same_in_every_era()
    else:  # more than the declared 4 ulps on this machine: the suite fails, as measured
        with pytest.raises(AssertionError):
            suite.test_the_env_is_the_same_in_every_era()
    head = capsys.readouterr().out.splitlines()[0]
    assert head == f"the {theirs} tape in {era_stamp()}: {counted.kind} (DeclaredHover.cross_era_ulps = 4)"


def test_a_suite_option_smaller_than_the_measured_difference_diverges_and_names_itself(tmp_path, elsewhere):
    folder, theirs = _era_folder(tmp_path, elsewhere, "DeclaredHover")
    found = measured(DeclaredHover, elsewhere["DeclaredHover", "era"])
    with pytest.warns(UserWarning, match="recorded"):
        suite = _suite(DeclaredHover, folder, cross_era_ulps=0)
        suite._era_tapes()
    if not found:
        suite.test_the_env_is_the_same_in_every_era()
        return
    with pytest.raises(AssertionError) as caught:
        suite.test_the_env_is_the_same_in_every_era()
    line = str(caught.value).splitlines()[1]
    assert line.startswith(
        f"the {theirs} tape replayed in {era_stamp()} must agree within TestDeclaredHover.cross_era_ulps = 0 ulp (bit "
        "for bit), got "
    )
    assert "Declare TestDeclaredHover.cross_era_ulps = " in line


def test_a_chaotic_env_compared_step_by_step_differs_in_the_last_bits_only(elsewhere, capsys):
    ours = elsewhere["DoublePendulum", "here"]
    for where in ("era", "kernel"):
        theirs = elsewhere["DoublePendulum", where]
        apart = np.array([np.abs(a.obs - b.obs).max() for a, b in zip(ours.entries, theirs.entries)])
        found = compare_eras(DoublePendulum, theirs, name=f"the {where} tape", here=era_stamp(), actions=ours.actions)
        print(f"{where}: free-run separation at steps 25, 50, 100, 150, 200: {apart[[25, 50, 100, 150, 200]]}\n{found}")
        # step by step from the recorded state: the verdict is what it measured against the declared 4 ulps
        assert found.ok == (found.ulps <= 4) and found.structure is None, str(found)
        if found.ulps == 0:  # these platforms solve alike: the free runs are the same trajectory
            assert apart.max() == 0.0
        else:  # a last-bit difference at one step stays in a free run (and grows: the printed separation)
            assert apart.max() > 0.0


def test_this_platforms_own_tape_replayed_from_its_snapshots_is_bit_for_bit(elsewhere):
    for env in ("Hover", "DoublePendulum"):
        tape = elsewhere[env, "here"]
        assert tape.platform == describe()
        found = compare_eras(ENVS[env], tape, name="this platform's tape", here=era_stamp(), actions=tape.actions)
        assert found.kind == "agrees", str(found)
        assert str(found).splitlines()[0] == (
            f"this platform's tape in {era_stamp()}: agrees (recorded on this platform: bit for bit)"
        )


def test_a_stranger_platform_record_is_refused_by_its_shape(tmp_path):
    tape = record(Hover, seed=0, steps=5)
    tape.platform = {"python": "x" * 2000}
    tape.save(str(tmp_path / "t.npz"))
    with raises_exactly(
        Exception,
        "tape manifest 'platform' must be a dict of at most 32 short strings (python, numpy, blas, blas_kernel, cpu, "
        f"simd, os), got {repr(tape.platform)[:60]}. Record the tape again with envbridge conform --record.",
    ):
        Tape.load(str(tmp_path / "t.npz"))

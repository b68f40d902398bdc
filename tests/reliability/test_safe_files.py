"""Files from strangers: well-formed but crafted snapshots and tapes are refused with a named reason.

Here: ``.npz`` / JSON whose container is sound but whose content is crafted (members outside the
layout, references past the arrays, object dtypes in JSON, manifests with unexpected types,
members that disagree with the manifest) -- each a ContractError, not an IndexError, a silent
wrong value or an object array. Broken containers (bombs, truncation, lying sizes and headers):
test_crafted_files.py. A pickled member: tests/core/test_env.py, tests/conformance/test_faults.py.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
from support import raises_exactly

from bridge import snapshot
from bridge.conformance import Tape
from bridge.conformance.recording import record
from bridge.errors import ContractError
from bridge.examples import GridWorld

RESAVE = "Recreate it with bridge.snapshot.save."
RECORD = "Record the tape again with envbridge conform --record."


def _npz(path: str, **members: np.ndarray) -> str:
    with open(path, "wb") as f:
        np.savez(f, **members)
    return path


def _tree(value: object) -> np.ndarray:
    return np.array(json.dumps(value))


# -- snapshots -----------------------------------------------------------------------------------
def test_a_saved_snapshot_still_round_trips(tmp_path):
    env = GridWorld()
    env.reset(seed=3)
    path = os.path.join(tmp_path, "ok.npz")
    snapshot.save(path, env.clone_state())
    twin = GridWorld()
    twin.restore_state(snapshot.load(path))
    assert np.array_equal(twin.step(1)[0], env.step(1)[0])


@pytest.mark.parametrize("reference", [1, -1, True, "0", None, 0.0])
def test_a_tree_reference_outside_its_arrays_is_refused(tmp_path, reference):
    # -1 and True would silently pick an array by Python indexing; 1 is past the end
    path = _npz(os.path.join(tmp_path, "crafted.npz"), tree=_tree({"x": {"__ndarray__": reference}}), a0=np.zeros(2))
    got = json.dumps({"__ndarray__": reference})
    with raises_exactly(
        ContractError, f"snapshot file tree must reference only its arrays a0..a0, got {got}. {RESAVE}"
    ):
        snapshot.load(path)


@pytest.mark.parametrize(
    "members, listed",
    [
        ({"a0": np.zeros(1), "../../etc/passwd": np.zeros(1)}, ["../../etc/passwd", "a0", "tree"]),
        ({"a1": np.zeros(1)}, ["a1", "tree"]),  # a gap: a0 missing
    ],
)
def test_members_outside_the_saved_layout_are_refused(tmp_path, members, listed):
    path = _npz(os.path.join(tmp_path, "crafted.npz"), tree=_tree({"__ndarray__": 0}), **members)
    with raises_exactly(ContractError, f"snapshot file members must be 'tree' and a0..aN, got {listed!r}. {RESAVE}"):
        snapshot.load(path)


def test_a_missing_tree_is_refused(tmp_path):
    path = _npz(os.path.join(tmp_path, "crafted.npz"), a0=np.zeros(1), a1=np.zeros(1))
    with raises_exactly(ContractError, f"snapshot file members must be 'tree' and a0..aN, got ['a0', 'a1']. {RESAVE}"):
        snapshot.load(path)


def test_a_tree_that_is_not_one_json_string_is_refused(tmp_path):
    path = _npz(os.path.join(tmp_path, "numbers.npz"), tree=np.arange(3))
    with raises_exactly(
        ContractError,
        f"snapshot file tree must be one JSON string, got a {np.arange(3).dtype} array of shape (3,). {RESAVE}",
    ):
        snapshot.load(path)
    path = _npz(os.path.join(tmp_path, "text.npz"), tree=np.array("{'x': 1}"))
    with raises_exactly(ContractError, f"snapshot file tree must be JSON text, got \"{{'x': 1}}\". {RESAVE}"):
        snapshot.load(path)


@pytest.mark.parametrize("dtype", ["|O", "object", "V8", "(2,)f8"])
def test_a_json_snapshot_cannot_make_an_object_or_void_array(dtype):
    text = json.dumps({"x": {"__ndarray__": [1], "dtype": dtype, "shape": [1]}})
    with raises_exactly(
        ContractError,
        f"snapshot JSON array dtype must be numeric, bool or string (no objects), got {np.dtype(dtype)}. "
        "Recreate it with bridge.snapshot.to_json.",
    ):
        snapshot.from_json(text)


def test_a_json_snapshot_array_must_match_its_shape():
    crafted = {"__ndarray__": [1, 2, 3], "dtype": "<f8", "shape": [2, 2]}
    with raises_exactly(
        ContractError,
        f"snapshot JSON array must have values, a dtype and a matching shape, got {json.dumps(crafted)}. "
        "Recreate it with bridge.snapshot.to_json.",
    ):
        snapshot.from_json(json.dumps({"x": crafted}))


# -- tapes ---------------------------------------------------------------------------------------
@pytest.fixture
def saved_tape(tmp_path):
    path = os.path.join(tmp_path, "walk.npz")
    record("envbridge/GridWorld-v0", seed=0, steps=12).save(path)
    return path


def _edit_manifest(path: str, **changes: object) -> None:
    with open(path + ".json") as f:
        manifest = json.load(f)
    manifest.update(changes)
    with open(path + ".json", "w") as f:
        json.dump(manifest, f)


def _rewrite_npz(path: str, **changes: np.ndarray) -> None:
    """Change members and fix the manifest's hash, as a careful attacker would."""
    with np.load(path) as data:
        members = {k: data[k] for k in data.files}
    members.update(changes)
    _npz(path, **members)
    with open(path, "rb") as f:
        _edit_manifest(path, npz_sha256=hashlib.sha256(f.read()).hexdigest())


def test_a_recorded_tape_still_loads(saved_tape):
    assert Tape.load(saved_tape).env_id == "envbridge/GridWorld-v0"


@pytest.mark.parametrize(
    "key, value, expectation",
    [
        ("seed", "0; rm -rf /", "an int >= 0"),
        ("seed", 1.5, "an int >= 0"),
        ("seed", -1, "an int >= 0"),
        ("kinds", 42, "a str of 'r' (reset) and 's' (step)"),
        ("kinds", "rsx", "a str of 'r' (reset) and 's' (step)"),
        ("env", ["envbridge/GridWorld-v0"], "a str"),
        ("npz_sha256", None, "64 lowercase hex digits"),
        ("observation_space", "Box", "a space dict (Space.to_dict())"),
    ],
)
def test_a_manifest_with_unexpected_types_is_refused(saved_tape, key, value, expectation):
    _edit_manifest(saved_tape, **{key: value})
    with raises_exactly(ContractError, f"tape manifest {key!r} must be {expectation}, got {value!r}. {RECORD}"):
        Tape.load(saved_tape)


def test_a_manifest_space_that_is_not_a_space_is_refused(saved_tape):
    _edit_manifest(saved_tape, action_space={"type": "Box"})
    with raises_exactly(
        ContractError,
        f"tape manifest 'action_space' must be a space dict (Space.to_dict()), got {{'type': 'Box'}}. {RECORD}",
    ):
        Tape.load(saved_tape)


def test_a_manifest_that_is_not_an_object_is_refused(saved_tape):
    with open(saved_tape + ".json", "w") as f:
        json.dump(["envbridge-tape/1"], f)
    with raises_exactly(ContractError, f"tape manifest must be a JSON object, got list. {RECORD}"):
        Tape.load(saved_tape)


def test_a_member_outside_the_layout_is_refused_even_with_a_fixed_hash(saved_tape):
    _rewrite_npz(saved_tape, **{"../../../etc/passwd": np.zeros(3)})
    with raises_exactly(
        ContractError,
        f"tape walk.npz must hold only the members its manifest declares (act, obs, reward, terminated, truncated), got a member '../../../etc/passwd'. {RECORD}",
    ):
        Tape.load(saved_tape)


@pytest.mark.parametrize(
    "member, array, text",
    [
        (  # fewer rows than the manifest's entries
            "reward",
            np.zeros(2),
            "tape walk.npz member 'reward.npy' must be float64 of shape (14,), as its manifest declares, got float64 of shape (2,).",
        ),
        (  # structured, no pickle: still not a plain array
            "terminated",
            np.zeros(1, dtype=[("a", "<f8")]),
            "tape walk.npz member 'terminated.npy' must have a plain dtype (bool, int, uint, float), got dtype [('a', '<f8')].",
        ),
        (
            "act",
            np.array(["up"] * 12),
            "tape walk.npz member 'act.npy' must have a plain dtype (bool, int, uint, float), got dtype <U2.",
        ),
        (  # float actions for the Discrete(4) action space
            "act",
            np.zeros(12),
            "tape walk.npz member 'act.npy' must be int64 of shape (12,), as its manifest declares, got float64 of shape (12,).",
        ),
    ],
)
def test_a_member_of_the_wrong_kind_or_length_is_refused(saved_tape, member, array, text):
    assert len(Tape.load(saved_tape).entries) == 14
    _rewrite_npz(saved_tape, **{member: array})
    with raises_exactly(ContractError, f"{text} {RECORD}"):
        Tape.load(saved_tape)


def test_a_missing_member_is_refused(saved_tape):
    with np.load(saved_tape) as data:
        members = {k: data[k] for k in data.files if k != "reward"}
    _npz(saved_tape, **members)
    with open(saved_tape, "rb") as f:
        _edit_manifest(saved_tape, npz_sha256=hashlib.sha256(f.read()).hexdigest())
    with raises_exactly(
        ContractError,
        f"tape walk.npz must hold reward, terminated, truncated and one member per leaf of its spaces, got no member 'reward'. {RECORD}",
    ):
        Tape.load(saved_tape)

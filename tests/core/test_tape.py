"""Tapes: format 2 carries the env id, both spaces and the step API; committed format-1 tapes still
load; ``Tape.check_replayable`` refuses a tape that cannot speak about an env (whole messages)."""

from __future__ import annotations

import glob
import json
import os
import sys

import numpy as np
import pytest
from support import raises_exactly
from toy_envs import matrix

import bridge
from bridge import spaces
from bridge.conformance import Tape, record
from bridge.conformance.tape import FORMAT, STEP_API, Entry
from bridge.errors import ContractError, SpecError
from bridge.examples import EXAMPLE_IDS

TAPES = os.path.join(os.path.dirname(__file__), "..", "conformance", "tapes")
STAMP = f"py{sys.version_info[0]}{sys.version_info[1]}-numpy{np.__version__.split('.')[0]}"
RECORD = "Record the tape again with envbridge conform --record"
matrix.register()  # the committed tapes of the matrix sources replay on their ids
OTHER_ENV = "Replay a tape on the env it was recorded from, or record one for this env."


@pytest.fixture(scope="module")
def grid_tape():
    return record("envbridge/GridWorld-v0", seed=0, steps=12)


def test_a_saved_tape_is_format_2_with_the_step_api_and_round_trips(tmp_path, grid_tape):
    path = os.path.join(tmp_path, "walk.npz")
    grid_tape.save(path)
    with open(path + ".json") as f:
        manifest = json.load(f)
    assert (manifest["format"], manifest["env"], manifest["step_api"]) == (FORMAT, "envbridge/GridWorld-v0", STEP_API)
    assert spaces.from_dict(manifest["observation_space"]) == grid_tape.observation_space
    again = Tape.load(path)
    assert again.step_api == STEP_API and again.seed == 0
    assert [int(a) for a in again.actions] == [int(a) for a in grid_tape.actions]
    assert all(np.array_equal(a.obs, b.obs) for a, b in zip(again.entries, grid_tape.entries))
    again.check_replayable(grid_tape.observation_space, grid_tape.action_space, env_id="envbridge/GridWorld-v0")
    grid_tape.save(os.path.join(tmp_path, "twin.npz"))  # fixed timestamps: the same bytes, the same hash
    with open(os.path.join(tmp_path, "twin.npz"), "rb") as a, open(path, "rb") as b:
        assert a.read() == b.read()


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(TAPES, "*", "*.npz"))), ids=os.path.basename)
def test_committed_format_1_tapes_load_and_are_replayable_on_their_env(path):
    with open(path + ".json") as f:
        assert json.load(f)["format"] == "envbridge-tape/1"
    tape = Tape.load(path)
    env = bridge.make(tape.env_id)
    tape.check_replayable(env.observation_space, env.action_space, env_id=tape.env_id)


@pytest.mark.skipif(not os.path.isdir(os.path.join(TAPES, STAMP)), reason=f"no committed tapes of era {STAMP}")
@pytest.mark.parametrize("env_id", sorted(EXAMPLE_IDS))
def test_recording_again_gives_this_era_s_committed_tape(env_id):
    # sample() and every example draw exactly what they drew when the tapes were committed
    committed = Tape.load(os.path.join(TAPES, STAMP, env_id.replace("/", "__") + ".npz"))
    fresh = record(env_id, seed=0, steps=150)
    assert [np.asarray(a).tobytes() for a in fresh.actions] == [np.asarray(a).tobytes() for a in committed.actions]
    assert [(e.kind, e.reward, e.terminated, e.truncated) for e in fresh.entries] == [
        (e.kind, e.reward, e.terminated, e.truncated) for e in committed.entries
    ]


def _tape(**changes):
    base = record("envbridge/GridWorld-v0", seed=0, steps=12)
    fields = dict(
        env_id=base.env_id,
        observation_space=base.observation_space,
        action_space=base.action_space,
        seed=0,
        actions=base.actions,
        entries=base.entries,
    )
    fields.update(changes)
    return Tape(**fields), base


@pytest.mark.parametrize(
    "kwargs, text",
    [
        ({"steps": 2.5}, "conformance.record steps must be an int >= 1, got 2.5. Pass a whole number, e.g. steps=200."),
        ({"steps": 0}, "conformance.record steps must be an int >= 1, got 0. Pass a whole number, e.g. steps=200."),
        (
            {"steps": "20"},
            "conformance.record steps must be an int >= 1, got '20'. Pass a whole number, e.g. steps=200.",
        ),
        ({"seed": -1}, "conformance.record seed must be a non-negative int, got -1. Pass e.g. seed=0."),
        ({"seed": None}, "conformance.record seed must be a non-negative int, got None. Pass e.g. seed=0."),
        ({"seed": 1.0}, "conformance.record seed must be a non-negative int, got 1.0. Pass e.g. seed=0."),
        ({"seed": True}, "conformance.record seed must be a non-negative int, got True. Pass e.g. seed=0."),
        (
            {"action_seed": "3"},
            "conformance.record action_seed must be a non-negative int or None, got '3'. Pass e.g. action_seed=0.",
        ),
    ],
    ids=[
        "fractional-steps",
        "no-steps",
        "string-steps",
        "negative-seed",
        "none-seed",
        "float-seed",
        "bool-seed",
        "string-action-seed",
    ],
)
def test_record_types_its_seed_and_steps_before_building_the_env(kwargs, text):
    built = []
    with raises_exactly(SpecError, text):
        record(lambda: built.append(1) or bridge.make("envbridge/GridWorld-v0"), **kwargs)
    assert built == []  # refused before the factory ran


def test_an_empty_tape_is_refused():
    tape, base = _tape(actions=[], entries=[Entry("reset", np.zeros(4, np.float32))])
    with raises_exactly(
        ContractError,
        "tape must hold at least one step (an empty tape agrees with any env), got 1 entry and no step. Record it again with envbridge conform ENV --record TAPE --steps N (N >= 1).",
    ):
        tape.check_replayable(base.observation_space, base.action_space)
    tape, _ = _tape(actions=[], entries=[])
    with raises_exactly(
        ContractError,
        "tape must hold at least one step (an empty tape agrees with any env), got 0 entries and no step. Record it again with envbridge conform ENV --record TAPE --steps N (N >= 1).",
    ):
        tape.check_replayable(base.observation_space, base.action_space)


def test_entries_and_actions_that_disagree_are_refused():
    tape, base = _tape()
    tape.actions = tape.actions[:-1]
    with raises_exactly(ContractError, f"tape must hold one action per step, got 11 actions for 12 steps. {RECORD}."):
        tape.check_replayable(base.observation_space, base.action_space)
    tape, base = _tape()
    tape.entries = tape.entries[1:]
    with raises_exactly(
        ContractError,
        f"tape must start with a reset and reset exactly after each episode end, got a step at entry 0 before any reset. {RECORD}.",
    ):
        tape.check_replayable(base.observation_space, base.action_space)


def test_a_tape_of_another_env_id_is_refused(grid_tape):
    with raises_exactly(
        ContractError,
        "tape env id must be 'envbridge/PointMass-v0' (the env it is replayed on), got 'envbridge/GridWorld-v0'. "
        f"{OTHER_ENV[:-1]} (envbridge conform --any-env replays it anyway: the same env under another name).",
    ):
        grid_tape.check_replayable(grid_tape.observation_space, grid_tape.action_space, env_id="envbridge/PointMass-v0")


def test_a_tape_for_other_spaces_names_what_differs(grid_tape):
    point = bridge.make("envbridge/PointMass-v0")
    with raises_exactly(
        ContractError,
        f"tape observation_space must be {point.observation_space!r} as in the env, got Box(0.0, 4.0, (4,), float32). {OTHER_ENV}",
    ):
        grid_tape.check_replayable(point.observation_space, point.action_space)
    nested, _ = _tape(observation_space=spaces.Dict(pos=spaces.Box(0, 4, (4,)), goal=spaces.Discrete(3)))
    with raises_exactly(
        ContractError,
        f"tape observation_space['goal'] must be Discrete(4) as in the env, got Discrete(3). {OTHER_ENV}",
    ):
        nested.check_replayable(
            spaces.Dict(pos=spaces.Box(0, 4, (4,)), goal=spaces.Discrete(4)), grid_tape.action_space
        )
    with raises_exactly(
        ContractError,
        f"tape action_space must be Discrete(5) as in the env, got Discrete(4). {OTHER_ENV}",
    ):
        grid_tape.check_replayable(grid_tape.observation_space, spaces.Discrete(5))


def test_every_recorded_action_is_checked_against_the_action_space():
    tape, base = _tape()
    floats = list(tape.actions)
    floats[3] = 2.0  # a float action for the Discrete(4) space "agreed" before
    tape.actions = floats
    with raises_exactly(
        ContractError,
        f"tape action 3 must be an integer scalar, got 2.0. {RECORD} (the env cannot take it).",
    ):
        tape.check_replayable(base.observation_space, base.action_space)
    tape.actions = [np.int64(7)] + list(base.actions[1:])
    with raises_exactly(ContractError, f"tape action 0 must lie in [0, 3], got 7. {RECORD} (the env cannot take it)."):
        tape.check_replayable(base.observation_space, base.action_space)


def _weak_grid():
    env = bridge.examples.GridWorld()
    env.determinism = "weak"
    return bridge.TimeLimit(env, 20)


def test_a_tape_with_states_keeps_a_snapshot_per_entry_strong_or_per_checkpoint_weak(tmp_path):
    strong = record(lambda: bridge.TimeLimit(bridge.examples.GridWorld(), 20), seed=0, steps=60, states=True)
    assert sorted(strong.states) == list(range(len(strong.entries) - 1))
    weak = record(_weak_grid, seed=0, steps=60, states=True)
    resets = [i for i, e in enumerate(weak.entries) if e.kind == "reset"]
    ends = [i - 1 for i in resets[1:]]  # the step before each later reset
    assert (
        set(resets) <= set(weak.states) and set(ends) <= set(weak.states) and len(weak.states) < len(weak.entries) // 2
    )
    path = str(tmp_path / "strong.npz")
    strong.save(path)
    again = Tape.load(path)
    assert sorted(again.states) == sorted(strong.states)
    assert np.array_equal(again.states[10]["env"]["state"]["agent"], strong.states[10]["env"]["state"]["agent"])
    assert again.states[10]["env"]["rng"] == strong.states[10]["env"]["rng"]


def test_a_changed_snapshot_file_of_a_tape_is_refused(tmp_path):
    path = str(tmp_path / "t.npz")
    record(lambda: bridge.TimeLimit(bridge.examples.GridWorld(), 20), seed=0, steps=10, states=True).save(path)
    other = str(tmp_path / "u.npz")
    record(lambda: bridge.TimeLimit(bridge.examples.GridWorld(), 20), seed=1, steps=10, states=True).save(other)
    os.replace(other + ".states", path + ".states")
    with open(path + ".json") as f:
        declared = json.load(f)["states"]["sha256"]
    with pytest.raises(ContractError) as caught:
        Tape.load(path)
    assert str(caught.value).startswith(f"tape snapshots t.npz.states must have sha256 {declared[:12]}..., got ")
    assert str(caught.value).endswith(". Record the tape again.")


def test_a_malformed_states_entry_in_a_tape_manifest_is_refused(tmp_path):
    path = str(tmp_path / "t.npz")
    record(lambda: bridge.TimeLimit(bridge.examples.GridWorld(), 20), seed=0, steps=10, states=True).save(path)
    with open(path + ".json") as f:
        manifest = json.load(f)
    manifest["states"]["entries"] = [3, 1]
    with open(path + ".json", "w") as f:
        json.dump(manifest, f)
    shown = repr(manifest["states"])[:60]
    expectation = "be {'entries': [increasing entry indices below 12], 'sha256': hex}"
    with raises_exactly(ContractError, f"tape manifest 'states' must {expectation}, got {shown}. {RECORD}."):
        Tape.load(path)

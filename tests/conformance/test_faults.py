"""Injected faults: deliberately broken "adapters" (views) must be caught, naming step and field."""

from __future__ import annotations

import json
import os
import shlex

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge import spaces
from bridge.conformance import Divergence, NeutralView, Tape, record, replay
from bridge.errors import ContractError


class Walker(bridge.Env):
    """Moves by the action value (Discrete(3, start=-1)); episodes of 4 steps start at a random spot."""

    determinism = "strong"

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-100.0, 100.0, (2,), np.float32)
        self.action_space = spaces.Discrete(3, start=-1)
        self.pos = np.zeros(2, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = np.array([self.np_random.integers(-5, 5), 0.0], dtype=np.float32)
        return self.pos.copy(), {}

    def step(self, action):
        self.pos = self.pos + np.array([int(action), 1.0], dtype=np.float32)
        return self.pos.copy(), float(action), bool(self.pos[0] > 3), False, {}

    def get_state(self):
        return {"pos": self.pos.copy()}

    def set_state(self, state):
        self.pos = np.array(state["pos"], dtype=np.float32)


def make_walker():
    return bridge.TimeLimit(Walker(), 4)


class DropsTruncation(NeutralView):
    name = "drops-truncation"

    def step(self, action):
        obs, reward, terminated, _ = super().step(action)
        return obs, reward, terminated, False


class ForgetsDiscreteStart(NeutralView):
    """Lowers Discrete(3, start=-1) to Discrete(3) but forgets to add start back when decoding."""

    name = "forgets-start"

    def step(self, action):
        return super().step(np.int64(int(action) - self.env.action_space.start))


class ReusesObservationBuffer(NeutralView):
    name = "reuses-buffer"

    def __init__(self, env):
        super().__init__(env)
        self.buffer = np.zeros(2, dtype=np.float32)

    def _out(self, obs):
        self.buffer[:] = obs
        return self.buffer

    def reset(self, seed):
        return self._out(super().reset(seed))

    def step(self, action):
        obs, reward, terminated, truncated = super().step(action)
        return self._out(obs), reward, terminated, truncated


class LosesRngOnRestore(NeutralView):
    name = "loses-rng"

    def clone_state(self):
        return self.env.clone_state(include_rng=False)


@pytest.fixture(scope="module")
def tape():
    return record(make_walker, seed=0, steps=40)


def test_the_honest_view_agrees_through_a_snapshot_detour(tape):
    assert replay(NeutralView(make_walker()), tape, snapshot_at=10).agrees


@pytest.mark.parametrize(
    "view_cls, expected",
    [
        (DropsTruncation, "drops-truncation: step 4: truncated expected True, got False"),
        (ForgetsDiscreteStart, "forgets-start: step 0: observation[0] expected 4.0, got 5.0"),
        (
            ReusesObservationBuffer,
            "reuses-buffer: reset(seed): observation[0] (mutated after it was returned) expected 3.0, got 0.0",
        ),
        (
            LosesRngOnRestore,
            "loses-rng: reset after step 12 (after restore_state of the snapshot at step 10): "
            "observation[0] expected -2.0, got 1.0",
        ),
    ],
)
def test_each_fault_is_named_by_step_and_field(tape, view_cls, expected):
    divergence = replay(view_cls(make_walker()), tape, snapshot_at=10)
    assert isinstance(divergence, Divergence)
    assert str(divergence) == expected


class GoalAtReset(bridge.Env):
    """A goal drawn at reset, seen in the reward only; get_state() forgets it. Long episodes."""

    determinism = "strong"

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1000.0, 1000.0, (1,), np.float32)
        self.action_space = spaces.Discrete(3, start=-1)
        self.pos, self.goal = 0.0, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.goal = 0.0, int(self.np_random.integers(-50, 50))
        return np.array([self.pos], np.float32), {}

    def step(self, action):
        self.pos += int(action)
        return np.array([self.pos], np.float32), -abs(self.pos - self.goal), False, False, {}

    def get_state(self):
        return {"pos": self.pos}

    def set_state(self, state):
        self.pos = float(state["pos"])


def test_a_snapshot_that_forgets_what_reset_drew_diverges_after_the_restore():
    # the detour ends with a reset (a new goal is drawn) before the restore: the same instance no
    # longer continues the recorded episode by luck of still holding the old goal
    tape = record(GoalAtReset, seed=0, steps=200)
    results = bridge.conformance.verify(GoalAtReset, tape, ["neutral"], snapshot_at=66)
    assert str(results["neutral"]) == (
        "neutral: step 66 (after restore_state of the snapshot at step 66): reward expected -31.0, got -9.0"
    )
    assert bridge.conformance.verify(GoalAtReset, tape, ["neutral"])["neutral"].agrees  # no detour: agrees


def test_a_tape_round_trips_through_its_files(tmp_path, tape):
    path = os.path.join(tmp_path, "walker.npz")
    tape.save(path)
    again = Tape.load(path)
    assert again.env_id == tape.env_id and again.action_space == tape.action_space
    assert [int(a) for a in again.actions] == [int(a) for a in tape.actions]
    assert replay(NeutralView(make_walker()), again).agrees


def test_a_changed_tape_is_refused(tmp_path, tape):
    path = os.path.join(tmp_path, "walker.npz")
    tape.save(path)
    with open(path, "ab") as f:
        f.write(b"\0")
    with open(path + ".json") as f:
        digest = json.load(f)["npz_sha256"]
    with pytest.raises(
        ContractError,
        match=rf"^tape walker.npz must have sha256 {digest[:12]}\.\.\., got [0-9a-f]{{12}}\.\.\. The \.npz was changed after recording; record it again\.$",
    ):
        Tape.load(path)


class _Payload:
    """Unpickling it runs ``touch <marker>``: the marker file says the payload ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {shlex.quote(self.marker)}",))


def test_a_tape_with_a_pickled_member_is_refused_not_executed(tmp_path, tape):
    path = os.path.join(tmp_path, "evil.npz")
    tape.save(path)
    with np.load(path) as data:
        members = {k: data[k] for k in data.files}
    marker = os.path.join(tmp_path, "pwned")
    members["obs"] = np.array([_Payload(marker)], dtype=object)
    with open(path, "wb") as f:
        np.savez(f, **members)
    with open(path + ".json") as f:
        manifest = json.load(f)
    from bridge.conformance.tape import _sha256

    manifest["npz_sha256"] = _sha256(path)  # a careful attacker also fixes the hash
    with open(path + ".json", "w") as f:
        json.dump(manifest, f)
    with raises_exactly(
        ContractError,
        "tape evil.npz member 'obs.npy' must hold a plain array (no pickled objects), got dtype object. Record the tape again with envbridge conform --record.",
    ):
        Tape.load(path)
    assert not os.path.exists(marker)

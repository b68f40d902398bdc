"""A snapshot of an imported env never runs a stranger's code (issue 35, item 1).

The default snapshot of ``from_gymnasium`` is the env pickled; it is signed with a key that lives only
in this process, and unpickled only when the signature matches. Each test builds the attack the issue
found: pickle bytes whose unpickling would create a file under tmp_path, restored from a snapshot file
(``bridge.snapshot.save`` / ``load``), directly and through ``to_gymnasium``; the file must not exist
and the env must be exactly as it was (the same foreign object, the same state)."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")

import bridge  # noqa: E402
from bridge import snapshot  # noqa: E402
from bridge.errors import ContractError  # noqa: E402

SUBJECT = "from_gymnasium snapshot state"
FIX = (
    "Restore a pickled snapshot only in the process that took it; for snapshots that go through a file "
    "or another process, pass snapshot=(get_state, set_state) hooks that return plain data."
)
SIGNED_ELSEWHERE = (
    f"{SUBJECT} must carry the signature of this process (it unpickles only the snapshots it took), "
    f"got a signature made elsewhere (another process, or changed bytes); nothing was unpickled. {FIX}"
)


class CreatesAFile:
    """Unpickling this opens (creates) ``path``: the stand-in for ``os.system``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _payload(path) -> np.ndarray:
    return np.frombuffer(pickle.dumps(CreatesAFile(path)), np.uint8).copy()


def _stepped(env, steps=3):
    env.reset(seed=4)
    for _ in range(steps):
        env.step(1)
    return env


def _state_bytes(env) -> bytes:
    return env.clone_state()["state"]["env"].tobytes()


def _forged_file(tmp_path, snap, state) -> str:
    """``snap`` with its foreign state replaced by ``state``, written as a stranger's snapshot file."""
    inner = snap["env"] if "adapter" in snap else snap
    inner["state"] = state
    path = str(tmp_path / "stranger.npz")
    snapshot.save(path, snap)
    return path


@pytest.mark.parametrize("signature", ["keep", "zeros", "non-ascii"])
def test_a_stranger_s_pickle_in_a_snapshot_file_runs_no_code_and_leaves_the_env_as_it_was(tmp_path, signature):
    env = _stepped(bridge.from_gymnasium("CartPole-v1"))
    snap = env.clone_state()
    signed = snap["state"]["signature"]  # a genuine signature of other bytes: it must not pass either
    forged = {"keep": signed, "zeros": "0" * 64, "non-ascii": "é" * 64}[signature]
    path = _forged_file(tmp_path, snap, {"env": _payload(tmp_path / "pwned"), "signature": forged})
    env.step(0)
    foreign, before = env.env, _state_bytes(env)
    with raises_exactly(ContractError, SIGNED_ELSEWHERE):
        env.restore_state(snapshot.load(path))
    assert not (tmp_path / "pwned").exists()
    assert env.env is foreign and _state_bytes(env) == before
    env.step(0)  # still usable


def test_the_same_attack_through_to_gymnasium_is_refused_before_anything_changes(tmp_path):
    exported = bridge.to_gymnasium(bridge.from_gymnasium("CartPole-v1"))
    _stepped(exported)
    snap = exported.clone_state()
    path = _forged_file(tmp_path, snap, {"env": _payload(tmp_path / "pwned"), "signature": "0" * 64})
    neutral = exported.neutral
    foreign, before = neutral.unwrapped.env, _state_bytes(neutral.unwrapped)
    with raises_exactly(ContractError, SIGNED_ELSEWHERE):
        exported.restore_state(snapshot.load(path))
    assert not (tmp_path / "pwned").exists()
    assert neutral.unwrapped.env is foreign and _state_bytes(neutral.unwrapped) == before


def test_the_old_bare_pickle_state_is_refused_unread(tmp_path):
    # what the attack wrote: the state as the bare bytes of a pickle
    env = _stepped(bridge.from_gymnasium("CartPole-v1"))
    path = _forged_file(tmp_path, env.clone_state(), _payload(tmp_path / "pwned"))
    expectation = "be a dict of 'env' (the env pickled, a 1-D uint8 array) and 'signature' (a str)"
    with raises_exactly(ContractError, f"{SUBJECT} must {expectation}, got ndarray. {FIX}"):
        env.restore_state(snapshot.load(path))
    assert not (tmp_path / "pwned").exists()
    with raises_exactly(ContractError, f"{SUBJECT} must {expectation}, got a dict with the keys ['env']. {FIX}"):
        env.set_state({"env": _payload(tmp_path / "pwned")})
    with raises_exactly(
        ContractError,
        f"{SUBJECT} must {expectation}, got 'env' array of dtype int64, shape (2,) and 'signature' str. {FIX}",
    ):
        env.set_state({"env": np.zeros(2, np.int64), "signature": "0"})
    assert not (tmp_path / "pwned").exists()


def test_a_snapshot_file_from_another_process_is_refused(tmp_path):
    path = str(tmp_path / "theirs.npz")
    code = (
        "import bridge\nfrom bridge import snapshot\n"
        "env = bridge.from_gymnasium('CartPole-v1'); env.reset(seed=1); env.step(0)\n"
        f"snapshot.save({path!r}, env.clone_state())\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=tmp_path)  # not the checkout's bridge/
    env = _stepped(bridge.from_gymnasium("CartPole-v1"))
    with raises_exactly(ContractError, SIGNED_ELSEWHERE):
        env.restore_state(snapshot.load(path))


def test_this_process_s_own_snapshot_survives_a_file_and_restores(tmp_path):
    env = _stepped(bridge.from_gymnasium("CartPole-v1"))
    path = str(tmp_path / "mine.npz")
    snapshot.save(path, env.clone_state())
    ahead = [env.step(1)[0] for _ in range(3)]
    env.restore_state(snapshot.load(path))
    again = [env.step(1)[0] for _ in range(3)]
    assert all(np.array_equal(a, b) for a, b in zip(ahead, again))
    assert env.np_random is env.env.unwrapped.np_random  # still one Generator


def test_inside_a_host_a_stranger_s_snapshot_is_refused_and_the_hosted_env_stays_usable(tmp_path):
    env = bridge.remote("gymnasium:CartPole-v1", timeout=60)  # hosted by this interpreter, in another process
    try:
        env.reset(seed=2)
        own = env.clone_state()
        env.step(1)
        env.restore_state(own)  # the host's own snapshot: it signed it
        forged = snapshot.from_json(snapshot.to_json(own))
        forged["state"] = {"env": _payload(tmp_path / "pwned"), "signature": own["state"]["signature"]}
        with raises_exactly(ContractError, SIGNED_ELSEWHERE):
            env.restore_state(forged)
        here = bridge.from_gymnasium("CartPole-v1")  # signed by this process, not the host's
        here.reset(seed=2)
        with raises_exactly(ContractError, SIGNED_ELSEWHERE):
            env.restore_state(here.clone_state())
        assert not (tmp_path / "pwned").exists()
        assert env.step(1)[1] == 1.0
    finally:
        env.close()


def test_a_tape_of_an_imported_env_keeps_no_process_bound_snapshots_and_replays_in_another_process(tmp_path):
    from bridge.conformance import record

    tape = record(lambda: bridge.from_gymnasium("CartPole-v1"), seed=0, steps=30, states=True)
    assert tape.states == {}  # its default snapshots restore only in this process: none on the tape
    tape.save(str(tmp_path / "cartpole.npz"))
    compare = (
        "import sys, bridge; from bridge.conformance import Tape; from bridge.conformance.across import compare_eras; "
        "found = compare_eras(lambda: bridge.from_gymnasium('CartPole-v1'), Tape.load(sys.argv[1]), name='t', here='h'); "
        "print(found.kind); print(found.method)"
    )
    done = subprocess.run(
        [sys.executable, "-c", compare, str(tmp_path / "cartpole.npz")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # not the checkout's folder: its bridge/ would shadow the installed package
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "agrees",
        "in a free run from the seed (the tape holds no snapshots; determinism 'weak'): a difference may compound "
        "over an episode",
    ]

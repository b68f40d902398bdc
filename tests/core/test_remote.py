"""bridge.remote: an env hosted in the other era's interpreter (3.9 <-> 3.11), driven from this one.

The other interpreter is $ENVBRIDGE_PYTHON_OTHER (tox sets it), else the sibling core venv of this
one (core-py39 <-> core-py311), else the other era's README venv (.venv-legacy <-> .venv, found by
bridge.hosted.pythons); a missing one fails, never skips.
"""

from __future__ import annotations

import functools
import os
import stat
import subprocess
import sys

import numpy as np
import pytest
from support import raises_exactly

import bridge
import bridge.hosted.client
import bridge.loading
import bridge.snapshot
from bridge.errors import ContractError, SpecError

HERE = os.path.dirname(os.path.abspath(__file__))
ENVS = os.path.join(HERE, "remote_envs.py")


def other_python() -> str:
    if os.environ.get("ENVBRIDGE_PYTHON_OTHER"):
        return "other"  # an era name: resolved through $ENVBRIDGE_PYTHON_OTHER
    other = "core-py39" if sys.version_info >= (3, 10) else "core-py311"
    path = os.path.join(os.path.dirname(sys.prefix), other, "bin", "python")
    if os.path.exists(path):
        return path
    # the README's venvs (.venv, .venv-legacy): the other era's name finds its venv, or says how to
    return "legacy" if sys.version_info >= (3, 10) else "modern"


def faulty(how: str, timeout: float = 30.0) -> bridge.RemoteEnv:
    return bridge.remote(f"{ENVS}:Faulty", python=other_python(), timeout=timeout, kwargs={"how": how})


def stopped(env: bridge.RemoteEnv) -> None:
    assert env.process.exitcode is not None  # the host is gone, not an orphan
    with raises_exactly(
        ContractError,
        f"remote env {env.source!r} must be open to step or reset, got a pool "
        f"poisoned by: {env.pool.failure}. Build a new one.",
    ):
        env.step(0)


def test_gridworld_hosted_in_the_other_era_matches_it_here():
    local = bridge.make("envbridge/GridWorld-v0")
    env = bridge.remote("envbridge/GridWorld-v0", python=other_python())
    try:
        assert env.peer["python"] != ".".join(map(str, sys.version_info[:3]))
        assert (env.observation_space, env.action_space) == (local.observation_space, local.action_space)
        assert env.determinism == "strong" and env.metadata == local.metadata
        for seed in (0, 7):
            obs, info = env.reset(seed=seed)
            want, want_info = local.reset(seed=seed)
            assert obs.dtype == want.dtype and np.array_equal(obs, want) and info == want_info
            for action in [0, 3, 1, 2, 3, 3, 1, 1]:
                got, want = env.step(action), local.step(action)
                assert np.array_equal(got[0], want[0]) and got[1:] == want[1:]
            snapshot = env.clone_state()
            assert bridge.snapshot.to_json(snapshot) == bridge.snapshot.to_json(local.clone_state())
            after = env.step(0)
            env.restore_state(snapshot)
            assert np.array_equal(env.step(0)[0], after[0])
        with raises_exactly(ContractError, str(_refusal(local))):
            env.restore_state({"class": "nope"})
        env.step(1)  # a refused snapshot leaves the host env usable
    finally:
        env.close()
    assert env.process.exitcode == 0


def _refusal(local):
    try:
        local.restore_state({"class": "nope"})
    except ContractError as e:
        return e


def test_env_raises_in_the_host_names_env_step_and_traceback():
    env = faulty("raise")
    env.reset(seed=0)
    env.step(0)
    line = next(i for i, text in enumerate(open(ENVS), 1) if "the pole broke" in text)
    with raises_exactly(
        ContractError,
        f"{env.pool.names[0]} at step 2 must step without raising, got ValueError: the pole broke "
        f"(File \"{ENVS}\", line {line}, in step). Fix the error in the env's step() (the host's traceback "
        "is on RemoteEnv.host_traceback); every worker of this pool is closed.",
    ):
        env.step(0)
    assert "Traceback (most recent call last)" in env.host_traceback
    stopped(env)


def test_host_killed_mid_step():
    env = faulty("die")
    env.reset(seed=0)
    env.step(0)
    with raises_exactly(
        ContractError,
        f"{env.pool.names[0]} at step 2 must keep its host process alive, got the host died (killed by signal 9). "
        f"Run {env.python} -m bridge.hosted.host to see it start, or find what ends it in the env; every worker "
        "of this pool is closed.",
    ):
        env.step(0)
    stopped(env)


def test_host_hangs_past_the_timeout():
    env = faulty("hang", timeout=0.5)
    env.reset(seed=0)
    env.step(0)
    with raises_exactly(
        ContractError,
        f"{env.pool.names[0]} at step 2 must answer a step call within 0.5 s, got no answer (the worker is still "
        "running). Find where the env blocks, or pass a larger timeout; every worker of this pool is closed.",
    ):
        env.step(0)
    stopped(env)


def test_host_cannot_import_the_source():
    with pytest.raises(SpecError) as here:  # what the resolver says in this interpreter, said there too
        bridge.loading.resolve("no_such_module_xyz:Env")
    with raises_exactly(
        ContractError,
        "remote env 'no_such_module_xyz:Env' in the host must build the env without raising, got SpecError: "
        f"{here.value} Fix what it says (the host's traceback is on RemoteEnv.host_traceback); every worker of "
        "this pool is closed.",
    ):
        bridge.remote("no_such_module_xyz:Env", python=other_python())


def _fake_python(tmp_path, body: str) -> str:
    script = tmp_path / "fake_host.py"
    script.write_text(body)
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return str(fake)


def test_protocol_garbage_from_a_fake_host(tmp_path):
    python = _fake_python(tmp_path, "import os, time\nos.write(1, b'\\xff' * 8 + b'HTTP/1.1 200 OK')\ntime.sleep(60)\n")
    size, first = int.from_bytes(b"\xff" * 8, "big"), repr(b"\xff" * 8)
    with raises_exactly(
        ContractError,
        "remote env 'envbridge/GridWorld-v0' at start must answer build with an envbridge host frame, got "
        "ProtocolError: remote frame must be at most 1,140,850,688 bytes (Limits.max_total_bytes + "
        f".max_json_bytes), got a frame of {size:,} bytes (first bytes {first}). Run the same envbridge "
        "version in both interpreters (pip install -e . in each venv). Point python= at an interpreter with "
        "this envbridge installed (its host speaks the frames); every worker of this pool is closed.",
    ):
        bridge.remote("envbridge/GridWorld-v0", python=python, timeout=5)


def test_version_mismatch_is_refused(tmp_path):
    hello = "('hello', {'envbridge': '9.9.9', 'protocol': 1, 'python': '3.9.0', 'numpy': '1.19.5'})"
    body = (
        f"import os, time\nfrom bridge.hosted import protocol\nos.write(1, protocol.encode({hello}))\ntime.sleep(60)\n"
    )
    python = _fake_python(tmp_path, body)
    with raises_exactly(
        ContractError,
        f"remote env 'envbridge/GridWorld-v0' at start must run envbridge {bridge.__version__} (protocol 1) as this "
        "side does, got envbridge 9.9.9 (protocol 1) on Python 3.9.0, numpy 1.19.5. Install this envbridge into "
        f"{python} (pip install -e /path/to/envbridge); every worker of this pool is closed.",
    ):
        bridge.remote("envbridge/GridWorld-v0", python=python, timeout=5)


def test_an_era_name_without_its_variable():
    os.environ.pop("ENVBRIDGE_PYTHON_NOSUCHERA", None)
    with raises_exactly(
        SpecError,
        "remote python 'nosuchera' must name a venv through $ENVBRIDGE_PYTHON_NOSUCHERA, got it unset. Set "
        "ENVBRIDGE_PYTHON_NOSUCHERA=/path/to/that/venv/bin/python, or pass the interpreter's path.",
    ):
        bridge.remote("envbridge/GridWorld-v0", python="nosuchera")


def test_a_tape_recorded_in_the_host_era_replays_through_the_remote_env(tmp_path):
    from bridge.conformance import Tape, verify

    python = bridge.hosted.client.host_python(other_python())
    tape_path = str(tmp_path / "tape.npz")
    recorded = subprocess.run(
        [python, "-m", "bridge.cli", "conform", "envbridge/GridWorld-v0", "--record", tape_path, "--steps", "40"],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert recorded.returncode == 0, recorded.stderr
    tape = Tape.load(tape_path)
    results = verify(lambda: bridge.remote("envbridge/GridWorld-v0", python=python), tape, ["neutral"], snapshot_at=13)
    assert results["neutral"].agrees, results["neutral"].detail


def test_n_remote_copies_behind_the_vector_interface():
    make = functools.partial(bridge.remote, "envbridge/GridWorld-v0", python=other_python())
    vec = bridge.vectorize(make, 2)
    local = bridge.vectorize(functools.partial(bridge.make, "envbridge/GridWorld-v0"), 2)
    try:
        assert np.array_equal(vec.reset(seed=3)[0], local.reset(seed=3)[0])
        for actions in ([1, 2], [3, 3], [0, 1]):
            got, want = vec.step(np.array(actions)), local.step(np.array(actions))
            assert all(np.array_equal(g, w) for g, w in zip(got[:4], want[:4]))
        hosts = [env.process for env in vec.envs]
    finally:
        vec.close()
        local.close()
    assert all(host.exitcode == 0 for host in hosts)


@pytest.mark.parametrize(
    "given, text",
    [
        (
            {"kwargs": [1]},
            "remote kwargs must be a dict, got list [1]. Pass kwargs as a dict of keyword names to plain values, e.g. "
            "kwargs={}.",
        ),
        (
            {"import_options": [1]},
            "remote import_options must be a dict, got list [1]. Pass import_options as a dict of keyword names to plain "
            "values, e.g. import_options={}.",
        ),
        (
            {"shared_memory": "no"},
            "remote shared_memory must be True or False, got 'no'. Pass shared_memory=True (steps through a shared "
            "region) or False (frames only).",
        ),
    ],
    ids=["kwargs", "import_options", "shared_memory"],
)
def test_remote_arguments_of_the_wrong_type_are_refused_before_a_host_starts(given, text):
    with raises_exactly(SpecError, text):
        bridge.remote("envbridge/GridWorld-v0", **given)


def test_reset_options_that_are_not_a_dict_are_refused_and_the_hosted_env_stays_usable():
    env = bridge.remote("envbridge/GridWorld-v0")  # hosted in this interpreter
    try:
        text = "remote reset options must be a dict or None, got [1]. Pass options as a dict (or None), as Gymnasium's reset takes them."
        with raises_exactly(SpecError, text):
            env.reset(seed=0, options=[1])
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)
    finally:
        env.close()


def test_an_empty_host_python_on_the_command_line_is_refused_as_in_the_api(capsys):
    from bridge.cli import main

    assert main(["check", "envbridge/GridWorld-v0", "--host-python", ""]) == 2
    err = capsys.readouterr().err
    assert "remote python must be an interpreter path or an era name, got ''." in err

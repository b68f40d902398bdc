"""bridge.remote against a host that misbehaves and a caller that errs (issue 35, the hosted items).

Every wait has a deadline (a frame begun and not finished, a request the host stops taking); a
peer's JSON is bounded by what it expands to; a caller's value that cannot cross is refused before
it is sent, the env still usable; the host checks the env's outputs as a local export does; nothing
leaks (a dropped env, a crashed host's child, a host whose client died, a garbled build reply, a
chatty host's stderr). Hang reproducers run in a child process joined with a deadline, so a
regression fails the test instead of hanging the suite; hosts here run in this interpreter.
"""

from __future__ import annotations

import gc
import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import textwrap
import time
from typing import List

import numpy as np
import pytest
from support import raises_exactly

import bridge
from bridge.errors import ContractError, SpecError
from bridge.hosted import host, protocol
from bridge.hosted.client import host_python
from bridge.safe_files import Limits

HERE = os.path.dirname(os.path.abspath(__file__))
ENVS = os.path.join(HERE, "remote_envs.py")
STALLED_FIX = (
    "Find where the worker stops (is it stopped, busy, or not speaking our frames?), or pass a larger timeout; "
    "every worker of this pool is closed."
)
PLAIN = "be plain data (dict, list, tuple, ndarray, numpy scalar, str, int, float, bool or None)"
PLAIN_FIX = "Pass plain data: only that crosses to the host (the env is unchanged and still usable)."

# a host that speaks the frames, then misbehaves on "step" (MISBEHAVE: code with `frame` and `out`)
FAKE_HOST = """
import os, sys, threading, time
from bridge.hosted import host, protocol
lifeline = int(sys.argv[sys.argv.index("--lifeline") + 1])
threading.Thread(target=host.watch, args=(lifeline,), daemon=True).start()  # ends with its client
out = os.dup(1)
os.dup2(2, 1)
reader = protocol.FrameReader(0)
protocol.write_frame(out, protocol.encode(("hello", protocol.hello())))
hosted = None
while True:
    command, payload = protocol.decode(reader.read())
    if command == "build":
        envs, result = host.build(payload)
        hosted = host.Hosted(envs, None)
        reply = ("ok", BUILT)
    elif command == "step":
        frame = protocol.encode(("ok", hosted.answer(command, payload)))
        MISBEHAVE
        time.sleep(600)
    else:
        reply = ("ok", hosted.answer(command, payload))
    protocol.write_frame(out, protocol.encode(reply))
"""

PRELUDE = """
import os, signal, sys, time
import numpy as np
import bridge
ENVS = {envs!r}
def said(call):
    try:
        call()
    except Exception as e:
        return f"{{type(e).__name__}}: {{e}}"
    return "no error"
"""


def fake_python(tmp_path, misbehave: str = "pass", built: str = "result") -> str:
    script = tmp_path / "fake_host.py"
    script.write_text(FAKE_HOST.replace("MISBEHAVE", misbehave).replace("BUILT", built))
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return str(fake)


def in_child(body: str, deadline: float = 120.0) -> List[str]:
    """Run ``body`` in a child interpreter joined with a deadline; its stdout lines."""
    code = PRELUDE.format(envs=ENVS) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=deadline)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def _step_reply() -> bytes:
    """The frame of Faulty's first step reply, as a host sends it."""
    return protocol.encode(("ok", (np.zeros(2, np.float32), 0.0, False, False, {"t": 1})))


STEP_IN_CHILD = """
env = bridge.remote(ENVS + ":Faulty", python=os.environ["FAKE"], timeout=2, kwargs={"at": 100}, shared_memory=False)
env.reset(seed=0)
print(env.pool.names[0])
print(said(lambda: env.step(0)))
print(env.process.exitcode is not None)
"""


@pytest.mark.timeout(150)
@pytest.mark.parametrize("part", ["half", "length only", "three bytes"])
def test_a_partial_frame_fails_within_the_timeout(tmp_path, monkeypatch, part):
    frame = _step_reply()
    cut = {"half": len(frame) // 2, "length only": 8, "three bytes": 3}[part]
    monkeypatch.setenv("FAKE", fake_python(tmp_path, f"os.write(out, frame[:{cut}])"))
    name, message, stopped = in_child(STEP_IN_CHILD)
    if cut < 8:
        got = f"{cut} of the 8 bytes of a frame's length"
    else:
        got = f"{cut - 8:,} of the {len(frame) - 8:,} bytes of a frame"
    assert message == (
        f"ContractError: {name} at step 1 must send its step reply whole, got {got}, then silence until 2 s had "
        f"passed (the worker is still running). {STALLED_FIX}"
    )
    assert stopped == "True"


@pytest.mark.timeout(150)
def test_a_frame_that_trickles_in_fails_within_the_timeout(tmp_path, monkeypatch):
    trickle = "for i in range(len(frame)):\n            os.write(out, frame[i : i + 1]); time.sleep(0.4)"
    monkeypatch.setenv("FAKE", fake_python(tmp_path, trickle))
    name, message, stopped = in_child(STEP_IN_CHILD)
    pattern = (
        re.escape(f"ContractError: {name} at step 1 must send its step reply whole, got ")
        + r"\d of the 8 bytes of a frame's length"
        + re.escape(f", then silence until 2 s had passed (the worker is still running). {STALLED_FIX}")
    )
    assert re.fullmatch(pattern, message), message
    assert stopped == "True"


@pytest.mark.timeout(150)
def test_a_large_request_to_a_stopped_host_fails_within_the_timeout():
    name, message, stopped = in_child(
        """
        env = bridge.remote(ENVS + ":Wide", python=sys.executable, timeout=2, shared_memory=False)
        env.reset(seed=0)
        os.kill(env.process.pid, signal.SIGSTOP)
        print(env.pool.names[0])
        print(said(lambda: env.step(np.zeros(200_000))))
        print(env.process.exitcode is not None)
        """
    )
    size = len(protocol.encode(("step", np.zeros(200_000))))
    pattern = (
        re.escape(f"ContractError: {name} at step 1 must take the whole step request, got ")
        + r"[\d,]+"
        + re.escape(
            f" of the {size:,} bytes of a frame taken, then nothing more until 2 s had passed (the worker is still "
            f"running). {STALLED_FIX}"
        )
    )
    assert re.fullmatch(pattern, message), message
    assert stopped == "True"


def test_a_callers_value_that_cannot_cross_is_refused_and_the_env_stays_usable():
    source = f"{ENVS}:Faulty"
    env = bridge.remote(source, python=sys.executable, timeout=30, kwargs={"at": 100})
    try:
        env.reset(seed=0)
        with raises_exactly(SpecError, f"remote env {source!r} step action must {PLAIN}, got object. {PLAIN_FIX}"):
            env.step(object())
        with raises_exactly(SpecError, f"remote env {source!r} reset options must {PLAIN}, got object. {PLAIN_FIX}"):
            env.reset(options={"o": object()})
        assert env.step(0)[4] == {"t": 1}  # the host and the pool are fine
    finally:
        env.close()
    assert env.process.exitcode == 0
    with raises_exactly(SpecError, f"remote env {source!r} kwargs must {PLAIN}, got function. {PLAIN_FIX}"):
        bridge.remote(source, python=sys.executable, kwargs={"f": lambda: 1})  # no host is started


LIES = {
    "str-reward": "Liar step reward must be a Python float, got str '0.25'. Return float(reward).",
    "str-flag": "Liar step terminated must be a Python bool, got str 'no'. Return bool(terminated).",
    "numpy-reward": "Liar step reward must be a Python float (a numpy scalar is a defect), got numpy float32 0.25. "
    "Return float(reward).",
    "unseeded": "Liar.reset(seed=3) must seed the env's Generator (env.np_random), got a reset that did not call "
    "super().reset(seed=seed). Call super().reset(seed=seed) first in your reset().",
}


@pytest.mark.parametrize("how", sorted(LIES))
def test_the_host_refuses_what_a_local_export_refuses(how):
    env = bridge.remote(f"{ENVS}:Liar", python=sys.executable, timeout=30, kwargs={"how": how})
    try:
        with raises_exactly(ContractError, LIES[how]):
            env.reset(seed=3)
            env.step(0)
            env.step(0)
        env.reset()  # a refusal, as locally: the episode ended, the env is usable
        assert env.step(0)[1:] == (0.0, False, False, {})
    finally:
        env.close()
    assert env.process.exitcode == 0


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _gone(pid: int, wait: float = 10.0) -> bool:
    """True once ``pid`` no longer runs (gone or a zombie), polling up to ``wait`` seconds."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
def test_envs_dropped_without_close_leave_no_host_and_no_fd():
    env = bridge.remote(f"{ENVS}:Faulty", python=sys.executable)  # warm: imports and caches
    env.close()
    before = _fds()
    pids = []
    for _ in range(3):
        env = bridge.remote(f"{ENVS}:Faulty", python=sys.executable)
        pids.append(env.process.pid)
        del env
    gc.collect()
    assert all(_gone(pid) for pid in pids)
    assert _fds() == before


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
def test_a_crashed_hosts_own_child_is_stopped(tmp_path):
    pid_file = str(tmp_path / "child.pid")
    env = bridge.remote(f"{ENVS}:Crasher", python=sys.executable, kwargs={"how": "kill", "pid_file": pid_file})
    child = int(open(pid_file).read())
    try:
        env.reset(seed=0)
        with pytest.raises(ContractError, match="killed by signal 9"):
            env.step(0)
        assert _gone(child)
    finally:
        env.close()
        if not _gone(child, 0.0):
            os.kill(child, signal.SIGKILL)


@pytest.mark.timeout(120)
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
def test_a_host_ends_when_its_client_dies_mid_step():
    code = PRELUDE.format(envs=ENVS) + textwrap.dedent(
        """
        env = bridge.remote(ENVS + ":Crasher", python=sys.executable, kwargs={"how": "spin"})
        env.reset(seed=0)
        print(env.process.pid, flush=True)
        env.step(0)  # spins in the host until this process is killed
        """
    )
    client = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = None
    try:
        assert select.select([client.stdout], [], [], 90)[0], "the client never started its host"
        pid = int(client.stdout.readline())
        time.sleep(0.5)  # the host is in step() now
        client.kill()
        client.wait(30)
        assert _gone(pid)
    finally:
        client.kill()
        client.wait(30)
        client.stdout.close()
        client.stderr.close()
        if pid is not None and not _gone(pid, 0.0):
            os.killpg(pid, signal.SIGKILL)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
def test_a_build_reply_of_the_wrong_shape_is_named_and_leaves_nothing(tmp_path):
    python = fake_python(tmp_path, built="{'observation_space': 1}")
    bridge.remote(f"{ENVS}:Faulty", python=sys.executable).close()  # warm
    before = _fds()
    source = f"{ENVS}:Faulty"
    keys = ["action_space", "determinism", "max_episode_steps", "metadata", "name", "observation_space", "render_mode"]
    with raises_exactly(
        ContractError,
        f"remote env {source!r} in the host must answer build with an envbridge host frame, got ValueError: a build "
        f'reply without exactly {keys}: {{"observation_space": 1}}. Point python= at an interpreter with this '
        "envbridge installed (its host speaks the frames); every worker of this pool is closed.",
    ):
        bridge.remote(source, python=python, timeout=10, shared_memory=False)
    gc.collect()
    assert _fds() == before


def test_a_chatty_hosts_stderr_stays_capped():
    env = bridge.remote(f"{ENVS}:Wide", python=sys.executable, kwargs={"n": 2, "chatter": 3_000_000})
    try:
        env.reset(seed=0)
        for _ in range(3):
            env.step(np.zeros(2))
            assert os.fstat(env.process.stderr.fileno()).st_size <= host.STDERR_CAP
        assert env.process.stderr_tail().endswith("x" * 100)
    finally:
        env.close()


def test_a_keyboard_interrupt_in_the_host_is_named():
    env = bridge.remote(f"{ENVS}:Crasher", python=sys.executable, kwargs={"how": "interrupt"})
    env.reset(seed=0)
    with raises_exactly(
        ContractError,
        f"{env.pool.names[0]} at step 1 must keep its host process alive, got the host died (killed by signal "
        f"{int(signal.SIGINT)}); its stderr ends: envbridge host: interrupted (KeyboardInterrupt). Run "
        f"{env.python} -m bridge.hosted.host to see it start, or find what ends it in the env; every worker of "
        "this pool is closed.",
    ):
        env.step(0)


def test_a_command_on_path_names_an_interpreter(tmp_path, monkeypatch):
    link = tmp_path / "python3.x"
    link.symlink_to(sys.executable)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    assert host_python("python3.x") == str(link)
    with raises_exactly(
        SpecError,
        "remote python must be an interpreter path, a command on PATH or an era name, got 'nosuch3.9' (no such "
        "command). Pass e.g. python='/path/to/venv/bin/python' or python='legacy' with $ENVBRIDGE_PYTHON_LEGACY set.",
    ):
        host_python("nosuch3.9")


def test_a_hello_that_only_looks_the_same_is_shown_as_it_is(tmp_path):
    hello = dict(protocol.hello(), protocol=str(protocol.PROTOCOL))
    script = tmp_path / "hello.py"
    script.write_text(
        f"import os, time\nfrom bridge.hosted import protocol\nos.write(1, protocol.encode(('hello', {hello!r})))\n"
        "time.sleep(60)\n"
    )
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with raises_exactly(
        ContractError,
        f"remote env 'envbridge/GridWorld-v0' at start must run envbridge {bridge.__version__} (protocol 1) as this "
        f"side does, got envbridge {bridge.__version__!r} (protocol '1') on Python {hello['python']}, numpy "
        f"{hello['numpy']}. Install this envbridge into {fake} (pip install -e /path/to/envbridge); every worker "
        "of this pool is closed.",
    ):
        bridge.remote("envbridge/GridWorld-v0", python=str(fake), timeout=10)


def _frame_body(header: dict, data: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return protocol._HEADER.pack(len(text)) + text + data


FRAME_FIX = "Run the same envbridge version in both interpreters (pip install -e . in each venv)."


def test_declared_array_sizes_are_named_by_the_limit_they_break():
    body = _frame_body({"tree": {"__ndarray__": 0}, "arrays": [["<f8", [262144]]]})
    with raises_exactly(
        ContractError,
        "remote frame must hold the 2,097,152 bytes it declares for array 0, got only 0 bytes after the arrays "
        f"before it. {FRAME_FIX}",
    ):
        protocol.decode(body)
    small = Limits(max_member_bytes=1000)
    with raises_exactly(
        ContractError,
        "remote frame must declare arrays of at most 1,000 bytes (Limits.max_member_bytes), got 2,097,152 bytes "
        f"for array 0. {FRAME_FIX}",
    ):
        protocol.decode(body, small)


def test_a_header_that_expands_past_its_limits_is_refused_before_parsing():
    text = "[" + "{}," * 1_100_000 + "{}]"
    body = protocol._HEADER.pack(len(text)) + text.encode()
    with raises_exactly(
        ContractError,
        "remote frame header must open at most 1,048,576 lists and dicts (Limits.max_json_containers), got "
        f"1,100,002. {FRAME_FIX}",
    ):
        protocol.decode(body)

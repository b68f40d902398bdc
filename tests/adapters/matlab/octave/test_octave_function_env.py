"""rlFunctionEnv with .m step and reset functions run by GNU Octave: names on the MATLAB path,
handle text with workspace variables, LoggedSignals kept in Octave, snapshots, seeding, and what
the facade does with any env (validateEnvironment, sim, the checker with every export here)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from bridge.adapters.matlab import (
    addpath,
    rlFiniteSetSpec,
    rlFunctionEnv,
    rlNumericSpec,
    rlSimulationOptions,
    rmpath,
    sim,
    validateEnvironment,
)
from bridge.adapters.matlab import functions as matlab_functions
from conftest import EXAMPLES

import bridge

OBS, ACT = rlNumericSpec([2, 1]), rlFiniteSetSpec([-1.0, 1.0])
PROBE = "@(Action,LoggedSignals) probe_step(Action,LoggedSignals,Mode)"


def probe(mode: str = "ok", **kwargs) -> rlFunctionEnv:
    return rlFunctionEnv(OBS, ACT, PROBE, "probe_reset", workspace={"Mode": mode}, **kwargs)


def test_a_name_is_found_in_the_current_folder(mfiles):
    env = rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset")
    try:
        obs, _ = env.reset(seed=0)
        assert obs.tolist() == [[0.0], [0.0]]
        obs, reward, terminated, truncated, _ = env.step(np.int64(1))  # element 1.0
        assert (obs.tolist(), reward, terminated, truncated) == ([[1.0], [1.0]], -1.0, False, False)
        obs, *_ = env.step(np.int64(0))  # element -1.0
        assert obs.tolist() == [[0.0], [2.0]]
    finally:
        env.close()


def test_a_name_is_found_on_the_path_given_to_addpath(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    addpath(EXAMPLES)
    try:
        env = rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset")
        env.reset(seed=0)
        assert env.step(np.int64(1))[0].tolist() == [[1.0], [1.0]]
        env.close()
    finally:
        rmpath(EXAMPLES)


def test_a_path_to_the_m_file_needs_no_addpath(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    step, reset = os.path.join(EXAMPLES, "counter_step.m"), os.path.join(EXAMPLES, "probe_reset.m")
    env = rlFunctionEnv(OBS, ACT, step, reset)
    env.reset(seed=0)
    assert env.step(np.int64(1))[0].tolist() == [[1.0], [1.0]]
    env.close()


def test_a_bare_name_is_the_m_file_and_module_function_is_python(mfiles, monkeypatch):
    monkeypatch.syspath_prepend(mfiles)  # counter_step.py sits beside counter_step.m
    python = matlab_functions.resolve_function("counter_step:counter_step", "rlFunctionEnv StepFcn")
    assert callable(python) and python.__module__ == "counter_step"
    env = rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset")  # the .m one: the Python one would raise
    env.close()


def test_handle_text_sees_the_workspace_variables(mfiles):
    env = probe("ok")
    try:
        env.reset(seed=0)
        obs, reward, *_ = env.step(np.int64(1))
        assert (obs.tolist(), reward) == ([[1.0], [1.0]], -1.0)
        env.step(np.int64(0))
        state = env.get_state()["Info"]
        assert state["Position"] == 0.0 and state["Count"] == np.int32(2)
    finally:
        env.close()


def test_logged_signals_cross_as_plain_data_of_their_matlab_classes(mfiles):
    env = probe()
    try:
        env.reset(seed=0)
        env.step(np.int64(1))
        info = env.get_state()["Info"]
        assert sorted(info) == ["Count", "Flags", "History", "Name", "Noise", "Position"]
        assert (info["Position"], info["Count"], info["Name"], info["History"]) == (1.0, np.int32(1), "probe", [1.0])
        assert type(info["Count"]) is np.int32 and info["Flags"].dtype == bool and info["Flags"].shape == (1, 2)
        plain = {
            "Position": 2.0,
            "Count": np.int32(7),
            "Name": "put back",
            "History": [1.0, "two", {"three": np.arange(6.0).reshape(2, 3)}],
            "Flags": np.array([[False, True]]),
            "Noise": 0.25,
            "Grid": {"@size": [2, 1], "@cell": [1.0, "x"]},
            "Empty": None,
        }
        env.set_state({"Info": plain})
        back = env.get_state()["Info"]
        assert back["History"][2]["three"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        assert back["Grid"] == {"@size": [2, 1], "@cell": [1.0, "x"]}
        assert back["Empty"].shape == (0, 0) and back["Name"] == "put back" and back["Count"] == np.int32(7)
        obs, *_ = env.step(np.int64(1))  # the step starts from what was put back
        assert obs.tolist() == [[3.0], [8.0]]
    finally:
        env.close()


def test_a_snapshot_restores_logged_signals_and_octaves_generators(mfiles):
    env = probe()
    try:
        env.reset(seed=3)
        env.step(np.int64(1))
        snapshot = env.clone_state()
        env.step(np.int64(0))
        first = env.get_state()["Info"]["Noise"]
        env.step(np.int64(1))
        after = env.get_state()["Info"]
        env.restore_state(snapshot)
        env.step(np.int64(0))
        assert env.get_state()["Info"]["Noise"] == first  # rand() in the step drew the same number again
        env.step(np.int64(1))
        assert env.get_state()["Info"]["Noise"] == after["Noise"]
        assert env.get_state()["Info"]["Count"] == after["Count"] == np.int32(3)
    finally:
        env.close()


def test_reset_with_a_seed_seeds_octave_reproducibly(mfiles):
    runs = []
    for seed in (5, 5, 6):
        env = probe()
        env.reset(seed=seed)
        env.step(np.int64(1))
        runs.append(env.get_state()["Info"]["Noise"])
        env.close()
    assert runs[0] == runs[1] != runs[2]


def test_a_refused_step_leaves_logged_signals_as_they_were(mfiles):
    env = probe()
    try:
        env.reset(seed=0)
        env.step(np.int64(1))
        env.StepFcn = PROBE.replace("Mode)", "'nan')")  # the same function, a NaN reward
        with pytest.raises(bridge.ContractError):
            env.step(np.int64(1))
        assert env.get_state()["Info"]["Count"] == np.int32(1)  # Octave went back to before the step
    finally:
        env.close()


def test_validate_environment_and_sim_run_on_it(mfiles):
    env = bridge.TimeLimit(probe(), 6)
    try:
        validateEnvironment(env)
        experiences = sim(env, lambda obs: 1.0, rlSimulationOptions(MaxSteps=4), seed=0)
        assert len(experiences) == 1
    finally:
        env.close()


def test_the_checker_passes_it_for_every_runtime_here(mfiles):
    report = bridge.check(lambda: bridge.TimeLimit(probe(), 20), seed=0)
    assert report.ok, str(report)


def test_nothing_is_left_running_when_python_exits(mfiles):
    code = (
        "from bridge.adapters.matlab import rlFunctionEnv, rlNumericSpec, rlFiniteSetSpec\n"
        "env = rlFunctionEnv(rlNumericSpec([2, 1]), rlFiniteSetSpec([-1.0, 1.0]), 'counter_step', 'probe_reset')\n"
        "print(env._host.session.process.pid, flush=True)\n"  # exits without close()
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=mfiles, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 5.0
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}")


def test_an_env_dropped_without_close_stops_its_octave(mfiles):
    import gc

    env = rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset")
    process = env._host.session.process
    del env
    gc.collect()
    assert process.exitcode is not None  # stopped and reaped when the env was collected

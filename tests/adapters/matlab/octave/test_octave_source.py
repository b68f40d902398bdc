"""``path/to/createEnv.m`` as an env source: the MATLAB function that creates an rlFunctionEnv, run
by Octave with envbridge's stand-ins for the spec and env constructors, for every command."""

from __future__ import annotations

import contextlib
import io
import os

import numpy as np
from bridge.adapters.matlab import rlFunctionEnv, rmpath
from bridge.adapters.matlab.octave import ports
from conftest import EXAMPLES
from support import raises_exactly

from bridge.cli import main
from bridge.conformance import record
from bridge.conformance.across import compare_eras
from bridge.errors import ContractError
from bridge.loading import load_env


def test_the_cartpole_file_builds_the_env_its_port_matches(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = os.path.join(ports.EXAMPLES, "createCartPoleEnv.m")
    try:
        env = load_env(path)
        try:
            assert isinstance(env, rlFunctionEnv)
            assert (env.observationInfo, env.actionInfo) == ports.cartpole_specs()
            assert env.observationInfo.Name == "CartPole States"
        finally:
            env.close()
        tape = record(lambda: load_env(path), seed=1, steps=120, states=True)
        found = compare_eras(lambda: ports.make_py_cartpole(None), tape, name=path, here="the port")
        assert found.ok and found.structure is None, str(found)
    finally:
        rmpath(ports.EXAMPLES)


def test_two_channels_and_function_handles(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        env = load_env(os.path.join(ports.EXAMPLES, "createReachEnv.m"))
        try:
            assert [s.Name for s in env.observationInfo] == ["State", "Goal"]
            assert env.observationInfo[1].UpperLimit == 1.0 and env.actionInfo.LowerLimit == -1.0
            assert (env.StepFcn, env.ResetFcn) == ("reach_step", "reach_reset")
            obs, _ = env.reset(seed=2)
            assert sorted(obs) == ["Goal", "State"] and obs["State"].shape == (2, 1)
        finally:
            env.close()
    finally:
        rmpath(ports.EXAMPLES)


def test_an_anonymous_function_brings_the_variables_it_captured(mfiles):
    try:
        env = load_env("createProbeEnv.m")
        try:
            assert env.StepFcn == "@(Action, LoggedSignals) probe_step (Action, LoggedSignals, Mode)"
            env.reset(seed=0)
            assert env.step(np.int64(1))[0].tolist() == [[1.0], [1.0]]
        finally:
            env.close()
    finally:
        rmpath(mfiles)


def test_an_error_in_the_file_names_its_line(mfiles):
    text = (
        "env file createBrokenEnv.m must run without error, got Error in createBrokenEnv (line 3 of "
        f"{os.path.join(EXAMPLES, 'createBrokenEnv.m')}): 'ActionInfo' undefined near line 3, column 38. Fix the error in the file "
        "(Octave ran it with envbridge's rlNumericSpec, rlFiniteSetSpec, rlFunctionEnv)."
    )
    with raises_exactly(ContractError, text):
        load_env("createBrokenEnv.m")


def test_envbridge_check_takes_the_file(mfiles):
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = main(["check", "createProbeEnv.m", "--target", "core"])
        assert code == 0, out.getvalue()
    finally:
        rmpath(mfiles)

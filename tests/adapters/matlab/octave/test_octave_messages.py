"""Every way a .m env can go wrong, in MATLAB's terms, asserted whole; no Octave is left running
after any of them (the autouse fixture of conftest.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from bridge.adapters.matlab import rlFiniteSetSpec, rlFunctionEnv, rlNumericSpec
from conftest import EXAMPLES
from support import raises_exactly

import bridge
from bridge.errors import ContractError, SpecError

OBS, ACT = rlNumericSpec([2, 1]), rlFiniteSetSpec([-1.0, 1.0])
PROBE = "@(Action,LoggedSignals) probe_step(Action,LoggedSignals,Mode)"
FILE = os.path.join(EXAMPLES, "{}.m")


def stepped(mode: str, **kwargs) -> None:
    """Build the probe env with ``mode``, reset and step once; closed whatever happens."""
    env = rlFunctionEnv(OBS, ACT, PROBE, "probe_reset", workspace={"Mode": mode}, validate=False, **kwargs)
    try:
        env.reset(seed=0)
        env.step(np.int64(1))
    finally:
        env.close()


def test_an_error_inside_the_m_file_names_function_file_line_and_message(mfiles):
    text = (
        "rlFunctionEnv step() at step 1 must run without raising, got OctaveError: Error in probe_step "
        f"(line 12 of {FILE.format('probe_step')}): the probe failed at count 1. Fix the env; the original "
        "exception and its traceback are chained as __cause__."
    )
    with raises_exactly(ContractError, text):
        stepped("raise")


def test_a_wrongly_sized_observation_is_the_facades_refusal(mfiles):
    text = (
        "StepFcn output NextObservation must have size [2 1], got size [1 2]. Return 2 values shaped [2 1] "
        "(the spec's Dimension)."
    )
    with raises_exactly(ContractError, text):
        stepped("row")


def test_a_non_numeric_observation_is_the_facades_refusal(mfiles):
    text = (
        "StepFcn output NextObservation must be a numeric array of DataType 'double', got 'ab'. "
        "Return np.asarray(value, dtype=np.float64)."
    )
    with raises_exactly(ContractError, text):
        stepped("text")


def test_a_nan_reward_is_the_facades_refusal(mfiles):
    with raises_exactly(
        ContractError,
        "StepFcn output Reward must be finite, got nan. Guard the reward computation against NaN and inf.",
    ):
        stepped("nan")


def test_an_isdone_other_than_0_or_1_is_the_facades_refusal(mfiles):
    # a real double IsDone reaches Python on the fast layout; Python tests its value, then asks
    # Octave for the outputs as the step function gave them (the facade refuses those)
    with raises_exactly(
        ContractError,
        "StepFcn output IsDone must be a scalar logical (True or False; 0 or 1 also accepted), got 0.5. "
        "Return one logical, e.g. bool(abs(x) > 2.4).",
    ):
        stepped("half")


def test_octave_exiting_is_the_supervisors_death_message(mfiles):
    text = (
        "the Octave host of rlFunctionEnv probe_step in step() must keep its Octave process alive, got Octave "
        "died (exit code 3). Find what ends Octave in the .m code (exit, quit, a crash); every worker of this "
        "pool is closed."
    )
    with raises_exactly(ContractError, text):
        stepped("exit")


def test_a_hang_is_the_supervisors_timeout_message(mfiles):
    text = (
        "the Octave host of rlFunctionEnv probe_step in step() must answer a step call within 1 s, got no answer "
        "(the worker is still running). Find where the env blocks, or pass a larger timeout; every worker of "
        "this pool is closed."
    )
    with raises_exactly(ContractError, text):
        stepped("hang", timeout=1)


def test_a_faulted_env_says_so_on_the_next_call(mfiles):
    env = rlFunctionEnv(OBS, ACT, PROBE, "probe_reset", workspace={"Mode": "exit"}, validate=False)
    env.reset(seed=0)
    with pytest.raises(ContractError):
        env.step(np.int64(1))
    text = (
        "the Octave host of rlFunctionEnv probe_step must be open to step or reset, got a pool poisoned by: "
        "the Octave host of rlFunctionEnv probe_step in step(): Octave died (exit code 3). Build a new one."
    )
    with raises_exactly(ContractError, text):
        env.reset(seed=0)
    env.close()


def test_a_step_function_with_three_inputs_says_how_to_pass_extra_parameters(mfiles):
    text = (
        "rlFunctionEnv StepFcn probe_step must take (Action, LoggedSignals), got 3 inputs "
        f"({FILE.format('probe_step')}). Write it as: function [NextObs,Reward,IsDone,LoggedSignals] = "
        "probe_step(Action,LoggedSignals), or pass extra parameters through a handle: "
        '"@(Action,LoggedSignals) probe_step(Action,LoggedSignals,EnvConstants)".'
    )
    with raises_exactly(SpecError, text):
        rlFunctionEnv(OBS, ACT, "probe_step", "probe_reset")


def test_a_step_function_with_three_outputs_is_refused_at_creation(mfiles):
    text = (
        "rlFunctionEnv StepFcn three_outputs_step must return 4 outputs, got 3 outputs "
        f"({FILE.format('three_outputs_step')}). Write it as: function [NextObs,Reward,IsDone,LoggedSignals] = "
        "three_outputs_step(Action,LoggedSignals)."
    )
    with raises_exactly(SpecError, text):
        rlFunctionEnv(OBS, ACT, "three_outputs_step", "probe_reset")


def test_a_handle_with_the_wrong_parameters_is_refused_at_creation(mfiles):
    text = (
        "rlFunctionEnv StepFcn @(Action) counter_step(Action) must take (Action, LoggedSignals), got 1 input "
        f"({FILE.format('counter_step')}). Write it as: function [NextObs,Reward,IsDone,LoggedSignals] = "
        "counter_step(Action,LoggedSignals), or pass extra parameters through a handle: "
        '"@(Action,LoggedSignals) counter_step(Action,LoggedSignals,EnvConstants)".'
    )
    with raises_exactly(SpecError, text):
        rlFunctionEnv(OBS, ACT, "@(Action) counter_step(Action)", "probe_reset")


def test_a_handle_variable_missing_from_the_workspace_is_named(mfiles):
    text = (
        f"rlFunctionEnv StepFcn '{PROBE}' must find Mode in workspace=, got workspace=[]. Pass their values as "
        "plain data: rlFunctionEnv(..., workspace={'Mode': ...})."
    )
    with raises_exactly(SpecError, text):
        rlFunctionEnv(OBS, ACT, PROBE, "probe_reset")


def test_a_name_not_on_the_path_says_where_it_looked(mfiles):
    text = (
        "rlFunctionEnv StepFcn 'nosuch_step' must name a .m function on the MATLAB path (the current folder, then "
        f"the addpath folders), got no nosuch_step.m in {EXAMPLES}. Add its folder: "
        "bridge.adapters.matlab.addpath('path/to/folder'), or pass 'path/to/nosuch_step.m'."
    )
    with raises_exactly(SpecError, text):
        rlFunctionEnv(OBS, ACT, "nosuch_step", "probe_reset")


def test_one_python_and_one_m_function_are_refused(mfiles):
    text = (
        "rlFunctionEnv ResetFcn must be a .m function too (both run in one Octave session, where LoggedSignals "
        "lives), got a Python function. Pass both as .m functions, or both as Python functions."
    )
    with raises_exactly(SpecError, text):
        rlFunctionEnv(OBS, ACT, "counter_step", lambda: (np.zeros((2, 1)), {}))


def test_octave_missing_names_the_apt_line(mfiles, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ENVBRIDGE_OCTAVE", raising=False)
    text = (
        "GNU Octave must be installed to run .m step and reset functions, got no octave-cli on PATH. Install GNU "
        "Octave: apt-get install -y --no-install-recommends octave (as root), or set "
        "$ENVBRIDGE_OCTAVE=/path/to/octave-cli."
    )
    with raises_exactly(SpecError, text):
        rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset")


def test_logged_signals_that_cannot_reach_octave_are_named(mfiles):
    env = rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset")
    try:
        text = (
            "rlFunctionEnv state.Info.Position must be plain data to reach Octave, got object. Keep "
            "LoggedSignals and workspace values plain: numbers, logicals, char, structs and cells of them."
        )
        with raises_exactly(SpecError, text):
            env.set_state({"Info": {"Position": object()}})
        assert env.get_state()["Info"]["Position"] == 0.0  # unchanged: refused before Octave was asked
    finally:
        env.close()


def test_a_snapshot_is_refused_after_close(mfiles):
    env = bridge.TimeLimit(rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset"), 5)
    env.close()
    with pytest.raises(ContractError):
        env.clone_state()


def test_octave_killed_while_idle_is_the_supervisors_death_message(mfiles):
    import signal

    env = rlFunctionEnv(OBS, ACT, "counter_step", "probe_reset")
    try:
        env.reset(seed=0)
        process = env._host.session.process
        os.kill(process.pid, signal.SIGKILL)
        process.join(5.0)
        text = (
            "the Octave host of rlFunctionEnv counter_step in step() must keep its Octave process alive, got Octave "
            "died (killed by signal 9). Find what ends Octave in the .m code (exit, quit, a crash); every worker of "
            "this pool is closed."
        )
        with raises_exactly(ContractError, text):
            env.step(np.int64(1))
    finally:
        env.close()


def test_without_a_pidfd_octave_exiting_is_still_seen(mfiles, monkeypatch):
    def unsupported(pid, flags=0):
        raise OSError(38, "Function not implemented")  # an old kernel, or valgrind

    monkeypatch.setattr(os, "pidfd_open", unsupported)
    text = (
        "the Octave host of rlFunctionEnv probe_step in step() must keep its Octave process alive, got Octave "
        "died (exit code 3). Find what ends Octave in the .m code (exit, quit, a crash); every worker of this "
        "pool is closed."
    )
    with raises_exactly(ContractError, text):
        stepped("exit")

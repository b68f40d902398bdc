"""Worker faults, per runtime and per family, through the one supervisor (``bridge.workers``).

Each runtime's process workers -- ``bridge.vectorize(workers="process")`` (every era), SB3's
``SubprocVecEnv`` through ``make_vec_env`` (modern), DreamerV2's ``common.Async`` through
``to_dreamerv2(parallel="process")`` (legacy) -- must turn every fault (raise, exit, segfault,
killed while idle, an unpicklable reply, a hang past the timeout) into a ContractError naming the
env, the step and the cause within 5 s, close that pool's workers (no process left), refuse later
calls, and leave other pools running. A short batch is refused before any worker is sent anything.
The failing env is :class:`toy_envs.workers.Ticker`: one factory for all workers; only the worker reset
with seed 11 fails, at its step 4 (3 steps done since the reset). pytest-timeout guards each test.
"""

from __future__ import annotations

import functools
import os
import pickle
import signal
from typing import Any

import numpy as np
import pytest
from support import raises_exactly, require
from toy_envs.workers import Ticker

import bridge
from bridge.errors import ContractError, SpecError
from bridge.examples import GridWorld
from bridge.workers import DEFAULT_TIMEOUT

FIX_DIED = "Find what ends the process in the env (os._exit, a crash in native code, running out of memory)"
FIX_RAISED = "Fix the error in the env's step()"
FIX_HUNG = "Find where the env blocks, or pass a larger timeout"
FIX_PICKLE = "Keep info values plain (numbers, strings, arrays, dicts of them)"
CLOSED = "every worker of this pool is closed"
# (Ticker fault, expectation, actual, fix): the error every runtime must raise for it
FAULTS = {
    "raise": ("step without raising", "RuntimeError: boom", FIX_RAISED),
    "exit": ("keep its worker process alive", "the worker died (exit code 3)", FIX_DIED),
    "segfault": (
        "keep its worker process alive",
        f"the worker died (killed by signal {int(signal.SIGSEGV)})",
        FIX_DIED,
    ),
    "hang": ("answer a step call within 2 s", "no answer (the worker is still running)", FIX_HUNG),
}
PICKLE_ACTUAL = {
    "process": "TypeError: cannot pickle '_thread.lock' object",
    "sb3": "TypeError: cannot pickle '_thread.lock' object",
}


def _actions(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.int64)


def _healthy_steps(step: Any, count: int = 3) -> None:
    for _ in range(count):
        step()


# -- bridge.vectorize(workers="process"): every era ------------------------------------------------
def _process_vec(fault: str, n: int = 3) -> Any:
    # only the hang waits for a deadline; every other fault must be seen with no deadline at all
    # (a detection that waited for one would block here until pytest-timeout fails the test)
    timeout = 2 if fault == "hang" else None
    vec = bridge.vectorize(functools.partial(Ticker, fault, 3, 11), n, workers="process", timeout=timeout)
    vec.reset(seed=10)  # env 1 gets seed 11
    return vec


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_process_worker_fault_names_env_and_step_and_closes_that_pool(fault):
    expectation, actual, fix = FAULTS[fault]
    vec = _process_vec(fault)
    other = bridge.vectorize(Ticker, 2, workers="process")  # another pool of the same process
    try:
        other.reset(seed=0)
        _healthy_steps(lambda: vec.step(_actions(3)))
        text = f"env 1 (<Ticker>) at step 4 must {expectation}, got {actual}. {fix}; {CLOSED}."
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
        assert [p.is_alive() for p in vec.processes] == [False, False, False]
        poisoned = (
            f"ProcessVectorEnv must be open to step or reset, got a pool poisoned by: env 1 (<Ticker>) at step 4: "
            f"{actual}. Build a new one."
        )
        with raises_exactly(ContractError, poisoned):
            vec.reset()
        assert other.step(_actions(2))[0].tolist() == [[1.0], [1.0]]  # the other pool goes on
    finally:
        vec.close()
        other.close()
    assert not any(p.is_alive() for p in other.processes)


@pytest.mark.timeout(60)
def test_a_process_worker_killed_while_idle_is_named_at_the_next_step():
    vec = _process_vec("none")
    try:
        vec.step(_actions(3))
        victim = vec.processes[2]
        os.kill(victim.pid, signal.SIGKILL)
        victim.join(5)
        text = (
            f"env 2 (<Ticker>) at step 2 must keep its worker process alive, got the worker died (killed by signal "
            f"{int(signal.SIGKILL)}). {FIX_DIED}; {CLOSED}."
        )
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
    finally:
        vec.close()
    assert not any(p.is_alive() for p in vec.processes)


@pytest.mark.timeout(60)
def test_a_process_worker_reply_that_cannot_be_pickled_is_named_as_such():
    vec = _process_vec("unpicklable")
    try:
        _healthy_steps(lambda: vec.step(_actions(3)))
        text = (
            f"env 1 (<Ticker>) at step 4 must send a step reply that pickles (observation, reward, flags and info), "
            f"got {PICKLE_ACTUAL['process']}. {FIX_PICKLE}; {CLOSED}."
        )
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
    finally:
        vec.close()


@pytest.mark.timeout(60)
def test_a_short_or_bad_batch_is_refused_before_any_worker_moves():
    vec = _process_vec("none")
    reference = bridge.vectorize(Ticker, 3)
    reference.reset(seed=10)
    try:
        with raises_exactly(
            ContractError,
            "actions must hold one action per env (3), got 2 actions. Pass one action per env, e.g. env.action_space.sample().",
        ):
            vec.step(_actions(2))
        with raises_exactly(ContractError, "actions[2] must lie in [0, 1], got 5. Pick values inside nvec."):
            vec.step(np.array([0, 1, 5]))
        # no worker moved: the next step is every worker's first, and the pool answers in sync
        assert vec.step(_actions(3))[0].tolist() == reference.step(_actions(3))[0].tolist() == [[1.0]] * 3
    finally:
        vec.close()


def test_the_default_timeout_is_finite_and_yours_to_change():
    assert DEFAULT_TIMEOUT == 60.0
    vec = bridge.vectorize(Ticker, 1, workers="process")
    custom = bridge.vectorize(Ticker, 1, workers="process", timeout=5)
    try:
        assert (vec.pool.timeout, custom.pool.timeout) == (60.0, 5)
    finally:
        vec.close()
        custom.close()
    with raises_exactly(SpecError, "vectorize timeout must be None or seconds > 0, got 0. Pass e.g. timeout=30."):
        bridge.vectorize(Ticker, 1, workers="process", timeout=0)


@pytest.mark.timeout(60)
def test_a_raising_constructor_is_named_at_construction():
    with raises_exactly(
        ContractError,
        "env 0 at construction must build without raising, got ValueError: cannot build. "
        f"Fix the error in the env's constructor; {CLOSED}.",
    ):
        bridge.vectorize(functools.partial(Ticker, "build"), 1, workers="process")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["next-step", "same-step"])
def test_process_workers_step_exactly_like_the_sync_loop(mode):
    sync = bridge.vectorize(GridWorld, 3, autoreset_mode=mode)
    process = bridge.vectorize(GridWorld, 3, autoreset_mode=mode, workers="process", timeout=10)
    try:
        np.testing.assert_array_equal(sync.reset(seed=4)[0], process.reset(seed=4)[0])
        actions = np.random.default_rng(0).integers(0, 4, size=(120, 3))
        ends = 0
        for batch in actions:
            expected, got = sync.step(batch), process.step(batch)
            for mine, theirs in zip(expected[:4], got[:4]):
                np.testing.assert_array_equal(mine, theirs)
            assert sorted(expected[4]) == sorted(got[4])
            if mode == "same-step":
                np.testing.assert_array_equal(expected[4]["final_obs"], got[4]["final_obs"])
            ends += int(np.sum(expected[2] | expected[3]))
    finally:
        process.close()
    assert ends > 0  # autoreset was exercised
    assert [p.is_alive() for p in process.processes] == [False, False, False]


def test_an_env_fn_that_cannot_pickle_is_refused_before_any_worker_runs():
    def local_factory() -> GridWorld:
        return GridWorld()

    with pytest.raises(Exception) as pickling:  # the stdlib's own words for this env_fn
        pickle.dumps(local_factory)
    reason = f"{type(pickling.value).__name__}: {pickling.value}"
    fix = "Pass a class, a module-level function or a functools.partial of one (not a lambda or a local function)."
    with raises_exactly(SpecError, f"vectorize env_fn must pickle for worker processes, got {reason}. {fix}"):
        bridge.vectorize(local_factory, 2, workers="process")


def test_vectorize_refuses_unknown_workers_and_a_sync_timeout():
    with raises_exactly(
        SpecError,
        "vectorize workers must be 'sync' or 'process', got 'threads'. Pass workers='process' for one process per env.",
    ):
        bridge.vectorize(GridWorld, 2, workers="threads")
    with raises_exactly(
        SpecError,
        "vectorize timeout must be None with workers='sync' (an in-process step cannot be cut short), got 5. Pass workers='process' to use a timeout.",
    ):
        bridge.vectorize(GridWorld, 2, timeout=5)


# -- SB3's SubprocVecEnv through make_vec_env: modern era -------------------------------------------
def _sb3_vec(fault: str, n: int = 3) -> Any:
    require("stable_baselines3")
    from bridge.adapters.sb3 import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    kwargs = {"timeout": 2 if fault == "hang" else None}  # as in _process_vec: no deadline but the hang's
    factory = functools.partial(Ticker, fault, 3, 11)
    vec = make_vec_env(factory, n_envs=n, seed=10, vec_env_cls=SubprocVecEnv, vec_env_kwargs=kwargs)
    assert isinstance(vec, SubprocVecEnv)  # SB3's own class underneath
    vec.reset()
    return vec


@pytest.mark.timeout(90)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_an_sb3_subprocess_fault_names_env_and_step_and_closes_that_pool(fault):
    expectation, actual, fix = FAULTS[fault]
    vec = _sb3_vec(fault)
    try:
        _healthy_steps(lambda: vec.step(_actions(3)))
        text = f"env 1 (<Ticker>) at step 4 must {expectation}, got {actual}. {fix}; {CLOSED}."
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
    finally:
        vec.close()  # a no-op now; must not hang on the dead pipes
    assert [p.is_alive() for p in vec.processes] == [False, False, False]


@pytest.mark.timeout(90)
def test_an_sb3_subprocess_killed_while_idle_or_sending_an_unpicklable_info_is_named():
    vec = _sb3_vec("none")
    try:
        vec.step(_actions(3))
        os.kill(vec.processes[0].pid, signal.SIGKILL)
        vec.processes[0].join(5)
        text = (
            f"env 0 (<Ticker>) at step 2 must keep its worker process alive, got the worker died (killed by signal "
            f"{int(signal.SIGKILL)}). {FIX_DIED}; {CLOSED}."
        )
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
    finally:
        vec.close()
    vec = _sb3_vec("unpicklable")
    try:
        _healthy_steps(lambda: vec.step(_actions(3)))
        text = (
            "env 1 (<Ticker>) at step 4 must send a step reply that pickles (observation, reward, flags and info), "
            f"got {PICKLE_ACTUAL['sb3']}. {FIX_PICKLE}; {CLOSED}."
        )
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
    finally:
        vec.close()
    assert not any(p.is_alive() for p in vec.processes)


@pytest.mark.timeout(90)
def test_an_sb3_short_or_bad_batch_is_refused_before_any_worker_moves():
    vec = _sb3_vec("none")
    try:
        with raises_exactly(
            ContractError,
            "actions must hold one action per env (3), got 2 actions. Pass one action per env, e.g. env.action_space.sample().",
        ):
            vec.step_async(_actions(2))
        with raises_exactly(
            ContractError,
            "actions[1] must lie in [0, 1], got 7. Sample from env.action_space or clip the action into its bounds.",
        ):
            vec.step_async(np.array([0, 7, 0]))
        obs = vec.step(_actions(3))[0]
        assert obs.tolist() == [[1.0]] * 3  # every worker's first step: none had moved
    finally:
        vec.close()


# -- DreamerV2's common.Async through to_dreamerv2(parallel="process"): legacy era ----------------
@pytest.mark.timeout(180)
@pytest.mark.parametrize("fault", ["raise", "exit", "segfault", "hang"])
def test_a_dreamerv2_async_fault_names_env_and_step_and_closes_that_worker(fault):
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import load_dreamerv2, to_dreamerv2

    expectation, actual, fix = FAULTS[fault]
    action = {"action": np.eye(2, dtype=np.float32)[0]}
    healthy = to_dreamerv2(Ticker, parallel="process")
    failing = to_dreamerv2(
        functools.partial(Ticker, fault, 3), parallel="process", timeout=2 if fault == "hang" else None
    )
    try:
        assert isinstance(failing, load_dreamerv2().common.Async)  # DreamerV2's own class underneath
        for env in (healthy, failing):
            env.reset(blocking=True)

        def both_step() -> None:  # as DreamerV2's Driver does: send all, then wait on each
            for promise in [env.step(action) for env in (healthy, failing)]:
                promise()

        _healthy_steps(both_step)
        text = f"DreamerV2 env Ticker (process worker) at step 4 must {expectation}, got {actual}. {fix}; {CLOSED}."
        with raises_exactly(ContractError, text):
            both_step()
        assert healthy.step(action, blocking=True)["is_first"] is False  # the other worker goes on
    finally:
        healthy.close()
        failing.close()
    assert (healthy._process.is_alive(), failing._process.is_alive()) == (False, False)


@pytest.mark.timeout(180)
def test_a_dreamerv2_async_worker_killed_while_idle_is_named_not_a_broken_pipe():
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import to_dreamerv2

    env = to_dreamerv2(Ticker, parallel="process")
    try:
        env.reset(blocking=True)
        os.kill(env._process.pid, signal.SIGKILL)
        env._process.join(5)
        text = (
            f"DreamerV2 env Ticker (process worker) at step 1 must keep its worker process alive, got the worker "
            f"died (killed by signal {int(signal.SIGKILL)}). {FIX_DIED}; {CLOSED}."
        )
        with raises_exactly(ContractError, text):
            env.step({"action": np.eye(2, dtype=np.float32)[0]}, blocking=True)
    finally:
        env.close()
    assert not env._process.is_alive()

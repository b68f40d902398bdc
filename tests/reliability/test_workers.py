"""Worker faults: an env that raises, dies (``os._exit``) or hangs inside a worker process.

Each runtime's process workers -- ``bridge.vectorize(workers="process")`` (every era), SB3's
``SubprocVecEnv`` through ``make_vec_env`` (modern), DreamerV2's ``common.Async`` through
``to_dreamerv2(parallel="process")`` (legacy) -- must raise an error naming the env and the step
within 5 s and leave no worker alive. Every test runs under a hard alarm, so a regression fails
instead of hanging CI. The failing env is :class:`worker_envs.Ticker`: one factory for all workers,
and only the worker reset with seed 11 fails, at its step 3 (3 steps done since the reset).
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import signal
import time
from typing import Any, Iterator

import numpy as np
import pytest
from support import raises_exactly, require
from worker_envs import Ticker

import bridge
from bridge.errors import ContractError, SpecError
from bridge.examples import GridWorld

FIX_DIED = "Find what ends the process in the env (os._exit, a crash in native code, running out of memory)"
FIX_RAISED = "Fix the error in the env's step()"
FIX_HUNG = "Find where the env blocks, or pass a larger timeout"
# (Ticker fault, expectation, actual, fix) of the error each runtime must raise
RAISE_AND_EXIT = [
    ("raise", "step without raising", "RuntimeError: boom", FIX_RAISED),
    ("exit", "keep its worker process alive", "the worker died (exit code 3)", FIX_DIED),
]


@contextlib.contextmanager
def hard_limit(seconds: float) -> Iterator[None]:
    """Fail with TimeoutError after ``seconds`` (SIGALRM), instead of hanging the test run."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the test did not finish within {seconds} s: a worker fault hangs")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def step_until_fault(step: Any, healthy_steps: int = 3) -> Any:
    """Make ``healthy_steps`` steps, then start the timer; the caller expects the next step to fail."""
    for _ in range(healthy_steps):
        step()
    return time.monotonic()


# -- bridge.vectorize(workers="process"): every era ------------------------------------------------
def _actions(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.int64)


@pytest.mark.parametrize(
    "fault, expectation, actual, fix",
    RAISE_AND_EXIT + [("hang", "answer a step call within 2 s", "no answer (the worker is still running)", FIX_HUNG)],
)
def test_a_process_worker_fault_names_env_and_step_and_closes_every_worker(fault, expectation, actual, fix):
    with hard_limit(30):
        timeout = 2 if fault == "hang" else None  # a loaded CI machine must not turn a slow step into a fault
        vec = bridge.vectorize(functools.partial(Ticker, fault, 3, 11), 3, workers="process", timeout=timeout)
        vec.reset(seed=10)  # env 1 gets seed 11
        started = step_until_fault(lambda: vec.step(_actions(3)))
        text = f"env 1 (<Ticker>) at step 4 must {expectation}, got {actual}. {fix}; every worker is closed."
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
        elapsed = time.monotonic() - started
    assert elapsed < 5.0, elapsed
    assert [p.is_alive() for p in vec.processes] == [False, False, False]
    closed = "ProcessVectorEnv must be open to step or reset, got a closed env (closed, or a worker failed). Build a new one with bridge.vectorize."
    with raises_exactly(ContractError, closed):
        vec.step(_actions(3))


def test_a_raising_constructor_is_named_at_construction():
    with hard_limit(30):
        with raises_exactly(
            ContractError,
            "env 0 at construction must build without raising, got ValueError: cannot build. "
            "Fix the error in the env's constructor; every worker is closed.",
        ):
            bridge.vectorize(functools.partial(Ticker, "build"), 1, workers="process")


@pytest.mark.parametrize("mode", ["next-step", "same-step"])
def test_process_workers_step_exactly_like_the_sync_loop(mode):
    with hard_limit(30):
        sync = bridge.vectorize(GridWorld, 3, autoreset_mode=mode)
        process = bridge.vectorize(GridWorld, 3, autoreset_mode=mode, workers="process", timeout=10)
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
    with (
        hard_limit(30),
        raises_exactly(SpecError, f"vectorize env_fn must pickle for worker processes, got {reason}. {fix}"),
    ):
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
@pytest.mark.parametrize("fault, expectation, actual, fix", RAISE_AND_EXIT)
def test_an_sb3_subprocess_fault_names_env_and_step_and_closes_every_worker(fault, expectation, actual, fix):
    require("stable_baselines3")
    from bridge.adapters.sb3 import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    with hard_limit(90):
        vec = make_vec_env(functools.partial(Ticker, fault, 3, 11), n_envs=3, seed=10, vec_env_cls=SubprocVecEnv)
        assert isinstance(vec, SubprocVecEnv)  # SB3's own class underneath
        vec.reset()
        started = step_until_fault(lambda: vec.step(_actions(3)))
        text = f"env 1 (<Ticker>) at step 4 must {expectation}, got {actual}. {fix}; every worker is closed."
        with raises_exactly(ContractError, text):
            vec.step(_actions(3))
        elapsed = time.monotonic() - started
        vec.close()  # a no-op now; must not hang on the dead pipes
    assert elapsed < 5.0, elapsed
    assert [p.is_alive() for p in vec.processes] == [False, False, False]


# -- DreamerV2's common.Async through to_dreamerv2(parallel="process"): legacy era ----------------
@pytest.mark.parametrize("fault, expectation, actual, fix", RAISE_AND_EXIT)
def test_a_dreamerv2_async_fault_names_env_and_step_and_closes_every_worker(fault, expectation, actual, fix):
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import load_dreamerv2, to_dreamerv2

    action = {"action": np.eye(2, dtype=np.float32)[0]}
    with hard_limit(120):
        healthy = to_dreamerv2(Ticker, parallel="process")
        failing = to_dreamerv2(functools.partial(Ticker, fault, 3), parallel="process")
        assert isinstance(failing, load_dreamerv2().common.Async)  # DreamerV2's own class underneath
        for env in (healthy, failing):
            env.reset(blocking=True)

        def both_step() -> None:  # as DreamerV2's Driver does: send all, then wait on each
            for promise in [env.step(action) for env in (healthy, failing)]:
                promise()

        started = step_until_fault(both_step)
        text = (
            f"DreamerV2 env Ticker (process worker) at step 4 must {expectation}, got {actual}. "
            f"{fix}; this worker and every other open process worker are closed."
        )
        with raises_exactly(ContractError, text):
            both_step()
        elapsed = time.monotonic() - started
        healthy.close()  # no-ops now
        failing.close()
    assert elapsed < 5.0, elapsed
    assert (healthy._process.is_alive(), failing._process.is_alive()) == (False, False)

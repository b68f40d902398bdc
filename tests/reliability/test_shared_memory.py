"""Shared memory of ``ProcessVectorEnv`` (``bridge.vectorize(workers="process")``): every era.

Observations and actions of fixed-shape numeric spaces travel through one segment; nothing the
caller sees may change: the same batches as the sync loop and as the pipes alone
(``shared_memory=False``), in both autoreset modes, with Dict/Tuple spaces; observations the caller
keeps are never overwritten by the next step; an env keeps the actions it was given; an
observation outside its space is the same error as without shared memory; and the segment is
gone from /dev/shm after close(), after a worker crash (before close()), and for an env that is
dropped without close(). Each test stops the workers it started, even on failure.
"""

from __future__ import annotations

import functools
import gc
import os
import signal
from typing import Any, Iterator, List, Set

import numpy as np
import pytest
from support import raises_exactly
from toy_envs.workers import Echo, Ticker

import bridge
from bridge.errors import ContractError
from bridge.examples import MultiModal, PixelGrid
from bridge.vector import ProcessVectorEnv
from bridge.vector.shared import SEGMENT_PREFIX
from bridge.workers import stop_processes

pytestmark = pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm on this machine")


def _segments() -> Set[str]:
    # this process's segments only: other test runs (tox envs in parallel) have their own
    mine = f"{SEGMENT_PREFIX}{os.getpid()}_"
    return {name for name in os.listdir("/dev/shm") if name.startswith(mine)}


@pytest.fixture
def segments() -> Iterator[Set[str]]:
    """The /dev/shm entries before the test; after it (pass or fail), none of the test's is left."""
    before = _segments()
    yield before
    gc.collect()
    assert _segments() - before == set()


def _actions(space: Any, n: int, rng: np.random.Generator) -> Any:
    if space == "echo":
        return {
            "move": rng.uniform(-1, 1, (n, 2)).astype(np.float32),
            "pick": rng.integers(0, 3, n),
        }
    return rng.integers(0, space, n)


def _same(mine: Any, theirs: Any) -> None:
    if isinstance(mine, dict):
        assert sorted(mine) == sorted(theirs)
        for key in mine:
            _same(mine[key], theirs[key])
    elif isinstance(mine, tuple):
        assert type(theirs) is tuple and len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            _same(a, b)
    else:
        assert type(mine) is type(theirs)
        assert getattr(mine, "dtype", None) == getattr(theirs, "dtype", None)
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["next-step", "same-step"])
@pytest.mark.parametrize("env_fn, choices", [(PixelGrid, 4), (MultiModal, 3), (Echo, "echo")])
def test_shared_memory_steps_exactly_like_the_sync_loop_and_the_pipes(segments, mode, env_fn, choices):
    sync = bridge.vectorize(env_fn, 3, autoreset_mode=mode)
    shared = ProcessVectorEnv([env_fn] * 3, autoreset_mode=mode, timeout=30)
    piped = ProcessVectorEnv([env_fn] * 3, autoreset_mode=mode, timeout=30, shared_memory=False)
    try:
        assert (shared.shared_memory, piped.shared_memory) == (True, False)
        assert len(_segments() - segments) == 1  # one segment, for observations and actions
        for a, b, c in zip(sync.reset(seed=4), shared.reset(seed=4), piped.reset(seed=4)):
            _same(a, b)
            _same(a, c)
        rng = np.random.default_rng(0)
        ends = 0
        for _ in range(60):
            batch = _actions(choices, 3, rng)
            expected = sync.step(batch)
            for got in (shared.step(batch), piped.step(batch)):
                for mine, theirs in zip(expected, got):
                    _same(mine, theirs)  # obs, rewards, flags and infos (final_obs, final_info too)
            ends += int(np.sum(expected[2] | expected[3]))
    finally:
        shared.close()
        piped.close()
        sync.close()
    assert ends > 0  # autoreset was exercised
    assert not any(p.is_alive() for p in shared.processes + piped.processes)


@pytest.mark.timeout(60)
def test_a_kept_observation_is_never_overwritten_and_an_env_keeps_its_actions(segments):
    vec = ProcessVectorEnv([Echo] * 2, timeout=30)
    try:
        vec.reset(seed=0)
        first = {"move": np.array([[0.5, -0.5], [0.25, 0.75]], np.float32), "pick": np.array([1, 2])}
        kept = vec.step(first)[0]
        first["move"][:] = 0.0  # the caller reuses its action buffer: the envs hold their own copies
        copy = tuple(np.array(leaf, copy=True) for leaf in kept)
        for leaf in kept:
            assert not np.shares_memory(leaf, np.frombuffer(vec._shared.segment.buf, np.uint8))
        for pick in (0, 1, 0):
            vec.step({"move": np.full((2, 2), -1.0, np.float32), "pick": np.array([pick, pick])})
        _same(kept, copy)  # what the caller kept is untouched by later steps
        infos = vec.step({"move": np.zeros((2, 2), np.float32), "pick": np.array([0, 0])})[4]
        assert infos["first"].tolist() == [[0.5, -0.5], [0.25, 0.75]]  # the env's kept action, unchanged
    finally:
        vec.close()


BAD_ECHO = (
    "env 0 (<Echo>) step observation[0] must have dtype float32, got dtype float64. Cast it with .astype(np.float32)."
)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("shared_memory", [True, False])
def test_an_observation_outside_its_space_is_the_same_error_with_or_without_shared_memory(segments, shared_memory):
    vec = ProcessVectorEnv([functools.partial(Echo, 2)] * 2, timeout=30, shared_memory=shared_memory)
    batch = {"move": np.zeros((2, 2), np.float32), "pick": np.array([0, 0])}
    try:
        vec.reset(seed=0)
        vec.step(batch)
        with raises_exactly(ContractError, BAD_ECHO):  # the worker refused it: it came through the pipe
            vec.step(batch)
    finally:
        vec.close()


@pytest.mark.timeout(60)
def test_the_segment_is_unlinked_on_close_and_on_a_worker_crash_before_close(segments):
    vec = bridge.vectorize(functools.partial(Ticker, "segfault", 3, 11), 2, workers="process", timeout=30)
    try:
        assert vec.shared_memory and len(_segments() - segments) == 1
        vec.reset(seed=10)  # env 1 gets seed 11: it crashes at its step 4
        for _ in range(3):
            vec.step(np.zeros(2, dtype=np.int64))
        with pytest.raises(ContractError, match="killed by signal"):
            vec.step(np.zeros(2, dtype=np.int64))
        assert _segments() - segments == set()  # released by the fault itself, not by close()
        assert not vec.shared_memory
    finally:
        vec.close()
    other = bridge.vectorize(Ticker, 2, workers="process")
    try:
        os.kill(other.processes[0].pid, signal.SIGKILL)  # a worker killed while idle, then close()
        other.processes[0].join(5)
    finally:
        other.close()
    assert _segments() - segments == set()


@pytest.mark.timeout(60)
def test_an_env_dropped_without_close_unlinks_its_segment(segments):
    processes: List[Any] = []
    try:
        vec = bridge.vectorize(Ticker, 2, workers="process")
        processes = vec.processes
        assert len(_segments() - segments) == 1
        del vec
        gc.collect()
        assert _segments() - segments == set()
    finally:
        stop_processes(processes)


@pytest.mark.timeout(60)
def test_a_batch_of_another_dtype_goes_through_the_pipes_unchanged_when_checks_are_off(segments):
    vec = ProcessVectorEnv([Echo] * 2, timeout=30)
    try:
        vec.reset(seed=0)
        vec.check_actions = False  # an export that checked the batch in its own terms
        batch = {"move": np.full((2, 2), 0.5, np.float64), "pick": np.array([1, 2])}
        with raises_exactly(ContractError, BAD_ECHO):  # the env got the float64 action as given (no cast)
            vec.step(batch)
    finally:
        vec.close()


def test_shared_memory_is_only_for_fixed_shape_numeric_spaces():
    from bridge import spaces
    from bridge.vector.shared import supported

    assert supported(spaces.Dict({"a": spaces.Tuple([spaces.Discrete(2), spaces.MultiBinary(3)])}))
    assert supported(spaces.Image(8, 8, 3)) and supported(spaces.MultiDiscrete([2, 3]))

    class Text(spaces.Space):  # a space of another kind (a user's): the pipes carry it
        dtype, shape = np.dtype(object), ()

        def sample(self, rng: Any = None) -> str:
            return "text"

        def mismatch(self, x: Any, path: str = "value") -> Any:
            return None

        def _node_dict(self, children: list) -> dict:
            return {"type": "text"}

        def _params(self) -> tuple:
            return ()

    assert not supported(Text()) and not supported(spaces.Tuple([spaces.Discrete(2), Text()]))

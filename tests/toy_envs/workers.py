"""Envs that fail inside worker processes (importable by spawn/forkserver workers by name).

:class:`Ticker` counts steps and never ends an episode. Built with ``fault`` it fails at step
``at_step`` (counted since the last reset, before that step runs), but only in the instance whose
last seeded reset got ``only_seed`` (``None``: every instance) -- so with one factory for all
workers and seeds ``seed + i``, exactly one worker fails. Faults: raise, exit (``os._exit(3)``),
segfault (SIGSEGV), hang, unpicklable (an info holding a lock, which cannot be pickled back).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Optional, Tuple

import numpy as np

from bridge import spaces
from bridge.env import Env

FAULTS = (None, "build", "raise", "exit", "segfault", "hang", "unpicklable")


class Ticker(Env):
    """Observation: the step count as ``Box(0, inf, (1,), float32)``; action ``Discrete(2)``."""

    def __init__(self, fault: Optional[str] = None, at_step: int = 3, only_seed: Optional[int] = None) -> None:
        if fault == "build":
            raise ValueError("cannot build")
        if fault == "build-hang":  # a constructor that blocks (not in FAULTS: only the timeout test uses it)
            time.sleep(600)
        self.fault, self.at_step, self.only_seed = fault, at_step, only_seed
        self.observation_space = spaces.Box(0.0, np.inf, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.steps = 0
        self.last_seed: Optional[int] = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.last_seed = seed
        self.steps = 0
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, dict]:
        if self.steps == self.at_step and (self.only_seed is None or self.last_seed == self.only_seed):
            if self.fault == "raise":
                raise RuntimeError("boom")
            if self.fault == "exit":
                os._exit(3)
            if self.fault == "segfault":
                os.kill(os.getpid(), signal.SIGSEGV)
            if self.fault == "hang":
                time.sleep(600)
            if self.fault == "unpicklable":
                self.steps += 1
                return np.full(1, self.steps, dtype=np.float32), 0.0, False, False, {"handle": threading.Lock()}
        self.steps += 1
        return np.full(1, self.steps, dtype=np.float32), 0.0, False, False, {}


class Echo(Env):
    """Dict action ``{"move": Box(-1, 1, (2,), float32), "pick": Discrete(3)}``, echoed back as a Tuple
    observation ``(move, one-hot of pick as MultiBinary(3), step count as Discrete(1000))``; with
    ``bad_at`` the observation of that step is float64 (outside its space)."""

    def __init__(self, bad_at: Optional[int] = None) -> None:
        self.bad_at = bad_at
        self.action_space = spaces.Dict({"move": spaces.Box(-1.0, 1.0, (2,), np.float32), "pick": spaces.Discrete(3)})
        self.observation_space = spaces.Tuple(
            [spaces.Box(-1.0, 1.0, (2,), np.float32), spaces.MultiBinary(3), spaces.Discrete(1000)]
        )
        self.steps = 0
        self.kept: list = []  # every action received, as received (a worker must hand over its own copy)

    def _obs(self, move: np.ndarray, pick: int) -> tuple:
        one_hot = np.zeros(3, dtype=np.int8)
        one_hot[pick] = 1
        return (move, one_hot, self.steps)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[tuple, dict]:
        super().reset(seed=seed)
        self.steps = 0
        return self._obs(np.zeros(2, dtype=np.float32), 0), {"seed": -1 if seed is None else seed}

    def step(self, action: Any) -> Tuple[tuple, float, bool, bool, dict]:
        self.kept.append(action)
        self.steps += 1
        move = action["move"] if self.steps != self.bad_at else action["move"].astype(np.float64)
        first = self.kept[0]["move"].tolist()
        return self._obs(move, int(action["pick"])), float(action["pick"]), self.steps % 5 == 0, False, {"first": first}


class Forker(Env):
    """Forks a child of its own at construction (a helper process, say) and writes its pid to
    ``pid_file``; the child sleeps until killed."""

    def __init__(self, pid_file: str) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        child = os.fork()
        if child == 0:  # the env's own child: sleeps, never returns into the worker loop
            time.sleep(600)
            os._exit(0)
        with open(pid_file, "w") as f:
            f.write(str(child))

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, dict]:
        return np.zeros(1, dtype=np.float32), 0.0, False, False, {}

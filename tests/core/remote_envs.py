"""Envs the remote tests host in the other interpreter (imported there as remote_envs.py:NAME)."""

from __future__ import annotations

import os
import time

import numpy as np

import bridge
from bridge import spaces


class Faulty(bridge.Env):
    """Steps fine until step ``at``, then does ``how``: "raise", "die" (SIGKILL itself), "hang"."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, how: str = "raise", at: int = 2) -> None:
        self.how, self.at, self.t = how, at, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.t == self.at:
            if self.how == "raise":
                raise ValueError("the pole broke")
            if self.how == "die":
                os.kill(os.getpid(), 9)
            time.sleep(60)
        return np.zeros(2, np.float32), 0.0, False, False, {"t": self.t}


class Liar(bridge.Env):
    """Steps fine until step ``at``, then returns what a local export refuses (``how``): a str
    reward, a str flag, a numpy reward; or (``how="unseeded"``) a reset that ignores its seed."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, how: str = "str-reward", at: int = 2) -> None:
        self.how, self.at, self.t = how, at, 0

    def reset(self, *, seed=None, options=None):
        if self.how != "unseeded":
            super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        reward, terminated = 0.0, False
        if self.t == self.at:
            if self.how == "str-reward":
                reward = "0.25"
            elif self.how == "str-flag":
                terminated = "no"
            elif self.how == "numpy-reward":
                reward = np.float32(0.25)
        return np.zeros(2, np.float32), reward, terminated, False, {}


class Wide(bridge.Env):
    """An action of ``n`` float64 values (a large request frame); prints ``chatter`` bytes a step."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)

    def __init__(self, n: int = 200_000, chatter: int = 0) -> None:
        self.action_space = spaces.Box(-1.0, 1.0, (n,), np.float64)
        self.chatter = chatter

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        if self.chatter:
            os.write(2, b"x" * self.chatter)
        return np.zeros(2, np.float32), 0.0, False, False, {}


class Crasher(bridge.Env):
    """Forks a child (its pid written to ``pid_file``) when built; at step ``at`` does ``how``:
    "kill" (SIGKILL itself), "interrupt" (raise KeyboardInterrupt) or "spin" (loop forever)."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, how: str = "kill", pid_file: str = "", at: int = 1) -> None:
        self.how, self.at, self.t = how, at, 0
        if pid_file:
            child = os.fork()
            if child == 0:  # the env's own helper process: sleeps until killed
                time.sleep(600)
                os._exit(0)
            with open(pid_file, "w") as f:
                f.write(str(child))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.t == self.at:
            if self.how == "kill":
                os.kill(os.getpid(), 9)
            if self.how == "interrupt":
                raise KeyboardInterrupt
            while self.how == "spin":
                pass
        return np.zeros(2, np.float32), 0.0, False, False, {}

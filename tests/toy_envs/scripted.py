"""Envs that end exactly as scripted, for the episode-end, gym, DreamerV2 and vector tests."""

from __future__ import annotations

import numpy as np

import bridge
from bridge import spaces
from bridge.env import Env


class EndsAsTold(Env):
    """Ends exactly as told: ``ends[i]`` = (terminated, truncated) of step i+1."""

    def __init__(self, ends, action_space=None):
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = action_space or spaces.Discrete(3, start=-1)
        self.ends, self.t, self.actions = list(ends), 0, []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), {}

    def step(self, action):
        self.actions.append(action)
        terminated, truncated = self.ends[self.t]
        self.t += 1
        return np.zeros(2, np.float32), 0.5, terminated, truncated, {"t": self.t}


class DictEndsAsTold(Env):
    """Ends exactly as told: ``ends[i]`` = (terminated, truncated) of step i+1."""

    def __init__(self, ends, action_space=None):
        self.observation_space = spaces.Dict(pos=spaces.Box(-1.0, 1.0, (2,), np.float32))
        self.action_space = action_space or spaces.Discrete(3, start=-1)
        self.ends, self.t, self.actions = list(ends), 0, []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return {"pos": np.zeros(2, np.float32)}, {}

    def step(self, action):
        self.actions.append(action)
        terminated, truncated = self.ends[self.t % len(self.ends)]
        self.t += 1
        return {"pos": np.full(2, 0.5, np.float32)}, 1.0, terminated, truncated, {}


class EndsOnStepTwo(bridge.Env):
    """Step 1 is ordinary; step 2 ends the episode with the scripted (terminated, truncated)."""

    def __init__(self, flags=(False, False)) -> None:
        self.observation_space = spaces.Box(0.0, 10.0, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.flags, self.t = flags, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        end = self.flags if self.t == 2 else (False, False)
        return np.full(1, float(self.t), np.float32), 1.0, end[0], end[1], {}


class Countdown(bridge.Env):
    """Episode i lasts ``length`` steps and then terminates; obs = remaining steps."""

    def __init__(self, length: int = 2) -> None:
        self.observation_space = spaces.Box(0, 100, (1,), np.int64)
        self.action_space = spaces.Discrete(2)
        self.length = length
        self.left = length

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.left = self.length
        return np.array([self.left]), {"fresh": True}

    def step(self, action):
        if int(action) == 1 and self.left == 1:
            raise ValueError("bad luck")
        self.left -= 1
        return np.array([self.left]), float(action), self.left == 0, False, {"left": self.left}


class ScriptedOutput(Env):
    """Box(-1, 1, (2,)) both ways; every step returns ``reward`` and ``info`` as given (bad ones too)."""

    def __init__(self, reward: float = 0.0, info: object = "empty") -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.reward, self.steps = reward, 0
        self._raw_info = {} if isinstance(info, str) and info == "empty" else info

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.steps += 1
        return np.zeros(2, np.float32), self.reward, False, False, self._raw_info


class BufferReuser(Env):
    """Writes every observation into one buffer it returns each time (legal for a bridge.Env, and
    common); the episode ends after ``episode_steps`` by ``end`` ("terminated" or "truncated")."""

    def __init__(self, episode_steps: int = 3, end: str = "terminated") -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.episode_steps, self.end, self.t = episode_steps, end, 0
        self.buffer = np.zeros(2, np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.buffer[:] = 0.0
        return self.buffer, {}

    def step(self, action):
        self.t += 1
        self.buffer[:] = self.t / 10
        done = self.t >= self.episode_steps
        return self.buffer, 0.0, done and self.end == "terminated", done and self.end == "truncated", {}


class ActionRecorder(Env):
    """Keeps every action it is given (``self.actions``); its action space is ``Box(low, high, (1,))``."""

    def __init__(self, low: float = 0.0, high: float = 1000.0, dtype: type = np.float32) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.action_space = spaces.Box(low, high, (1,), dtype)
        self.actions: list = []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.actions.append(np.array(action, copy=True))
        return np.zeros(1, np.float32), 0.0, False, False, {}

"""SB3's own string path on an id registered through ``bridge.adapters.gymnasium.register``: SB3
calls ``gymnasium.make(id, render_mode="rgb_array")`` and makes the env without it on a TypeError,
so an env whose ``__init__`` takes no ``render_mode`` (the README's Corridor) must raise exactly what
Gymnasium raises for its own such env. The exact upstream calls: ``PPO("MlpPolicy", id)`` and SB3's
``make_vec_env(id)``."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")
require("stable_baselines3")

from bridge.adapters.gymnasium import register  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402

ID = "me/StringCorridor-v0"
DRAWN = "me/StringDrawnCorridor-v0"


class Corridor(bridge.Env):
    """The README's Corridor: no render_mode in __init__."""

    def __init__(self):
        self.observation_space = spaces.Box(0, 9, (1,), np.float32)
        self.action_space = spaces.Discrete(2, start=-1)
        self.pos = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = int(self.np_random.integers(0, 5))
        return np.array([self.pos], np.float32), {}

    def step(self, action):
        self.pos = min(max(self.pos + (1 if action == 0 else -1), 0), 9)
        done = self.pos == 9
        return np.array([self.pos], np.float32), float(done), done, False, {}


class DrawnCorridor(Corridor):
    """A Corridor that takes render_mode (and honours it)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, render_mode=None):
        super().__init__()
        self.render_mode = render_mode

    def render(self):
        frame = np.zeros((4, 10, 3), np.uint8)
        frame[:, self.pos] = 255
        return frame


@pytest.fixture(autouse=True)
def registered():
    register(ID, Corridor, max_episode_steps=50)
    register(DRAWN, DrawnCorridor, max_episode_steps=50)
    yield
    for env_id in (ID, DRAWN):
        gymnasium.envs.registry.pop(env_id, None)


def test_render_mode_for_an_env_without_it_is_gymnasiums_own_type_error():
    msg = (
        "Corridor.__init__() got an unexpected keyword argument 'render_mode' was raised from the environment "
        f"creator for {ID} with kwargs ({{'render_mode': 'rgb_array'}})"
    )
    with raises_exactly(TypeError, msg):
        gymnasium.make(ID, render_mode="rgb_array")
    env = gymnasium.make(ID, render_mode=None)  # None is the default: dropped
    assert env.render_mode is None
    env.close()


def test_an_env_that_takes_render_mode_gets_it():
    env = gymnasium.make(DRAWN, render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render_mode == "rgb_array" and env.render().shape == (4, 10, 3)
    env.close()


@pytest.mark.parametrize("env_id", [ID, DRAWN])
def test_ppo_with_the_id_string(env_id):
    model = PPO("MlpPolicy", env_id, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    assert model.num_timesteps >= 64
    model.get_env().close()


@pytest.mark.parametrize("env_id", [ID, DRAWN])
def test_sb3s_make_vec_env_with_the_id_string(env_id):
    vec = make_vec_env(env_id, n_envs=2, seed=3)
    obs = vec.reset()
    assert obs.shape == (2, 1) and obs.dtype == np.float32
    vec.step(np.array([0, 1]))
    vec.close()

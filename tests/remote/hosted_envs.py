"""Modern-era envs (Gymnasium 1.x, MiniGrid, dm_control, ALE) as factories a host builds in 3.11 for
DreamerV2 in 3.9 (tests/remote/test_dreamerv2_on_a_modern_host.py): ``path/to/hosted_envs.py:NAME``.

Each is short-episoded, so a few hundred DreamerV2 steps save several whole episodes. Imports are
inside the factories: this file is imported by the host (and by play_directly.py), never by 3.9.
"""

from __future__ import annotations

import os

import bridge


def minigrid_pixels(max_steps: int = 40) -> bridge.Env:
    """MiniGrid's Empty-5x5 seen as the agent's 7x7-tile view in RGB (56x56x3): the wrappers
    MiniGrid's docs give for pixel agents (RGBImgPartialObsWrapper, then ImgObsWrapper)."""
    import gymnasium
    from minigrid.wrappers import ImgObsWrapper, RGBImgPartialObsWrapper

    env = gymnasium.make("minigrid:MiniGrid-Empty-5x5-v0", max_steps=max_steps)
    return bridge.from_gymnasium(ImgObsWrapper(RGBImgPartialObsWrapper(env)))


def cartpole_swingup(steps: int = 60) -> bridge.Env:
    """dm_control's cartpole-swingup (state: position and velocity), cut to ``steps`` steps."""
    from bridge.adapters.dm_env.importer import from_dm_control

    return bridge.TimeLimit(from_dm_control("cartpole-swingup"), steps)


def cartpole_pixels(steps: int = 60) -> bridge.Env:
    """cartpole-swingup seen by camera 0 at 64x64 (dm_control's pixels wrapper), rendered headless by
    Debian's OSMesa (``apt-get install libosmesa6``; dm_control reads MUJOCO_GL when it is imported)."""
    os.environ["MUJOCO_GL"] = "osmesa"
    from bridge.adapters.dm_env.importer import from_dm_env
    from dm_control import suite
    from dm_control.suite.wrappers import pixels

    def make(seed: int):
        env = suite.load("cartpole", "swingup", task_kwargs={"random": seed})
        return pixels.Wrapper(env, pixels_only=True, render_kwargs={"height": 64, "width": 64, "camera_id": 0})

    return bridge.TimeLimit(from_dm_env(make), steps)


def atari_pong(steps: int = 60) -> bridge.Env:
    """ALE's Pong-v5 (210x160x3 frames, frame skip 4, sticky actions), cut to ``steps`` steps."""
    return bridge.from_gymnasium("ale_py:ALE/Pong-v5", max_episode_steps=steps)

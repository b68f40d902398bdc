"""DreamerV2 (3.9, numpy 1.19, TensorFlow 2.6) through ``api.train`` on Gymnasium-era envs hosted in
the modern interpreter (3.11, numpy 2): MiniGrid pixels, dm_control state and pixels (OSMesa) and an ALE Atari game,
none of which installs next to DreamerV2's pins. ``python="modern"`` is $ENVBRIDGE_PYTHON_MODERN
(the legacy tox env builds that host venv first: [host] py311-envs in tox.ini), else the README's
``.venv`` (bridge.hosted.pythons).

Each run's replay episodes (``logdir/train_episodes/*.npz``) must hold exactly what the env
produces: the env is played again in the modern interpreter, in-process (play_directly.py), with
the seeds and actions this run gave it, and every saved episode is one of those, observation for
observation (images through DreamerV2's own ResizeImage) and reward for reward.
"""

from __future__ import annotations

import os
import subprocess
import types

import numpy as np
import pytest
from support import require

import bridge
from bridge.hosted.client import host_python

require("gym")
require("tensorflow")
require("dreamerv2")

HERE = os.path.dirname(os.path.abspath(__file__))
ENVS = os.path.join(HERE, "hosted_envs.py")


class Log(bridge.Wrapper):
    """Keeps each reset's seed and the actions after it: what DreamerV2 asked of the host."""

    def __init__(self, env):
        super().__init__(env)
        self.seeds, self.actions = [], []

    def reset(self, *, seed=None, options=None):
        self.seeds.append(-1 if seed is None else int(seed))
        self.actions.append([])
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        self.actions[-1].append(np.asarray(action))
        return self.env.step(action)


def play_directly(source: str, log: Log, folder) -> dict:
    """The same env, seeds and actions, stepped in-process in the modern interpreter."""
    plan, out = os.path.join(folder, "plan.npz"), os.path.join(folder, "direct.npz")
    actions = {f"actions/{i}": np.stack(a) if a else np.zeros((0,)) for i, a in enumerate(log.actions)}
    np.savez(plan, seeds=np.asarray(log.seeds, np.int64), **actions)
    subprocess.run(
        [host_python("modern"), os.path.join(HERE, "play_directly.py"), source, plan, out], check=True, timeout=300
    )
    with np.load(out, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def dreamer_resize(image: np.ndarray) -> np.ndarray:
    """DreamerV2's own ResizeImage._resize (PIL, nearest neighbour) to its 64x64."""
    from bridge.adapters.dreamerv2.loader import load_dreamerv2
    from PIL import Image

    return load_dreamerv2().common.ResizeImage._resize(types.SimpleNamespace(_Image=Image, _size=(64, 64)), image)


@pytest.mark.slow
@pytest.mark.parametrize(
    "factory, kind",
    [
        ("minigrid_pixels", "image"),
        ("cartpole_swingup", "vector"),
        ("cartpole_pixels", "pixels"),
        ("atari_pong", "image"),
    ],
)
def test_dreamerv2_trains_on_a_modern_env_hosted_in_3_11(tmp_path, factory, kind):
    from bridge.adapters.dreamerv2 import replay_episodes, train

    source = f"{ENVS}:{factory}"
    remote = bridge.remote(source, python="modern")
    assert remote.peer["numpy"].startswith("2.") and np.__version__.startswith("1.19")
    env = Log(remote)
    try:
        train(env, {"steps": 200}, preset="tiny", logdir=str(tmp_path / "run"))
    finally:
        remote.close()
    assert (tmp_path / "run" / "variables.pkl").stat().st_size > 0
    direct = play_directly(source, env, str(tmp_path))
    # everything the env played, in order, as DreamerV2 saves it; each episode starts at a reset
    parts, starts, length = [], [], 0
    for i in range(len(env.seeds)):
        columns = {k.split("/", 2)[2]: v for k, v in direct.items() if k.startswith(f"obs/{i}/")}
        if kind == "image":  # a single Image observation: DreamerV2's key "image", resized to 64x64
            columns = {"image": np.stack([dreamer_resize(frame) for frame in columns["obs"]])}
        elif kind == "pixels":  # dm_control's {"pixels": 64x64 image}: its key, as rendered
            columns = {"pixels": columns["pixels"]}
        else:  # dm_control's dict of float64 vectors: its keys, as float32 (the one float policy)
            columns = {k: v.astype(np.float32) for k, v in columns.items()}
        columns["reward"] = direct[f"reward/{i}"].astype(np.float32)
        parts.append(columns)
        starts.append(length)
        length += len(columns["reward"])
    played = {k: np.concatenate([part[k] for part in parts]) for k in parts[0]}
    episodes = replay_episodes(str(tmp_path / "run"))
    assert len(episodes) >= 2
    for episode in episodes:
        # each saved episode is what the env played from one of its resets on, observation for
        # observation (DreamerV2's replay glues the episode its prefill cut short to the next one)
        n = len(episode["reward"])
        assert any(all(np.array_equal(played[k][s : s + n], episode[k]) for k in played) for s in starts)

"""Golden trajectories: seed 0 and a fixed action tape give bit-identical streams under numpy 1.19.5
(Python 3.9) and numpy 2.x (Python 3.11), compared against files committed in ``golden/``.

Regenerate (only when an example deliberately changes): ``python tests/core/test_golden.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np
import pytest

import bridge
from bridge import spaces
from bridge.examples import EXAMPLE_IDS, CartPoleVector

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
STEPS = 300


def _digest(value) -> str:
    """sha256 over dtype, shape and bytes of every leaf, in key order: a bit-exact fingerprint."""
    h = hashlib.sha256()

    def feed(v):
        if isinstance(v, dict):
            for k in v:
                h.update(k.encode())
                feed(v[k])
        elif isinstance(v, (tuple, list)):
            for x in v:
                feed(x)
        else:
            a = np.ascontiguousarray(v)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())

    feed(value)
    return h.hexdigest()


def _tape(space: spaces.Space, n: int) -> list:
    rng = np.random.default_rng(1234)
    return [space.sample(rng) for _ in range(n)]


def record(env_id: str) -> dict:
    env = bridge.make(env_id)
    obs, _ = env.reset(seed=0)
    stream = [{"reset": _digest(obs)}]
    actions = _tape(env.action_space, STEPS)
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        stream.append(
            {"obs": _digest(obs), "reward": float(reward).hex(), "terminated": terminated, "truncated": truncated}
        )
        if terminated or truncated:
            stream.append({"reset": _digest(env.reset()[0])})
    return {"env": env_id, "seed": 0, "actions": _digest(actions), "stream": stream}


def record_vector() -> dict:
    env = CartPoleVector(num_envs=8, max_episode_steps=60)
    obs, _ = env.reset(seed=0)
    stream = [{"reset": _digest(obs)}]
    rng = np.random.default_rng(1234)
    for _ in range(STEPS):
        obs, rewards, terminated, truncated, _ = env.step(rng.integers(0, 2, size=8))
        stream.append(
            {
                "obs": _digest(obs),
                "rewards": _digest(rewards),
                "terminated": terminated.tolist(),
                "truncated": truncated.tolist(),
            }
        )
    return {"env": "CartPoleVector(8, 60)", "seed": 0, "stream": stream}


CASES = {**{env_id: (lambda e=env_id: record(e)) for env_id in EXAMPLE_IDS}, "CartPoleVector": record_vector}


def _path(name: str) -> str:
    return os.path.join(HERE, name.replace("/", "__") + ".json")


@pytest.mark.parametrize("name", sorted(CASES))
def test_trajectory_matches_the_committed_golden_file(name):
    with open(_path(name)) as f:
        golden = json.load(f)
    fresh = CASES[name]()
    assert fresh.get("actions") == golden.get("actions"), "the action tape itself changed"
    for i, (got, want) in enumerate(zip(fresh["stream"], golden["stream"])):
        assert got == want, f"{name}: first difference at stream entry {i}: {got} != {want}"
    assert len(fresh["stream"]) == len(golden["stream"])


def test_golden_files_cover_episode_ends():
    """The tapes are long enough to cross resets, so reset-after-end is covered too."""
    for name in CASES:
        with open(_path(name)) as f:
            stream = json.load(f)["stream"]
        assert any(np.any(s.get("terminated", False)) or np.any(s.get("truncated", False)) for s in stream), name


if __name__ == "__main__" and "--write" in sys.argv:
    for name, make in CASES.items():
        with open(_path(name), "w") as f:
            json.dump(make(), f, indent=0)
        print("wrote", _path(name))

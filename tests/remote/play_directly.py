"""Play episodes of an env in this interpreter, in-process (no host, no wire): the reference a
hosted run is compared with (tests/remote/test_dreamerv2_on_a_modern_host.py).

    python play_directly.py SOURCE PLAN.npz OUT.npz

PLAN holds ``seeds`` (one per episode, -1 for a reset without seed) and ``actions/<i>`` (episode
i's actions, in order); OUT gets ``obs/<i>/<key>`` (the reset observation, then one per action;
``<key>`` is ``obs`` unless the observation is a dict) and ``reward/<i>`` (0.0, then one per
action). Both files are plain arrays (loaded with allow_pickle=False).
"""

from __future__ import annotations

import sys

import numpy as np

from bridge.loading import load_env


def play(source: str, plan: str, out: str) -> None:
    env = load_env(source)
    result = {}
    with np.load(plan, allow_pickle=False) as data:
        seeds = data["seeds"]
        for i, seed in enumerate(seeds):
            obs, _ = env.reset(seed=None if seed < 0 else int(seed))
            observations, rewards = [obs], [0.0]
            for action in data[f"actions/{i}"]:
                obs, reward, _, _, _ = env.step(action)
                observations.append(obs)
                rewards.append(reward)
            for key, values in _columns(observations).items():
                result[f"obs/{i}/{key}"] = values
            result[f"reward/{i}"] = np.asarray(rewards, np.float64)
    env.close()
    np.savez(out, **result)


def _columns(observations: list) -> dict:
    if isinstance(observations[0], dict):
        return {key: np.stack([o[key] for o in observations]) for key in observations[0]}
    return {"obs": np.stack(observations)}


if __name__ == "__main__":
    play(*sys.argv[1:4])

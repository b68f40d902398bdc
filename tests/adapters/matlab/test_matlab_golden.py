"""Golden trajectories of the MATLAB cart-pole facade: seed 0 and a fixed action tape give the same
numbers, bit for bit, under numpy 1.19.5 (Python 3.9) and numpy 2.x (Python 3.11).

Regenerate (only when the example deliberately changes): ``python tests/adapters/matlab/test_golden.py --write``.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
from bridge.adapters.matlab import examples as cp
from bridge.adapters.matlab import rlSimulationOptions, sim

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "matlab_cartpole.json")
STEPS = 120


def _tape(n: int, values) -> list:
    rng = np.random.default_rng(1234)
    return [values[int(i)] for i in rng.integers(0, len(values), size=n)]


def record() -> dict:
    """Observations as float.hex strings (exact), per variant, through sim and the vector env."""
    out = {}
    for kind, values in (("discrete", [-10.0, 10.0]), ("continuous", [np.array([[-3.5]]), np.array([[7.25]])])):
        tape = iter(_tape(STEPS, values))
        env = cp.make_cartpole(kind, MaxStepsPerEpisode=40)
        episodes = sim(
            env, lambda obs, tape=tape: next(tape), rlSimulationOptions(MaxSteps=STEPS, NumSimulations=3), seed=0
        )
        out[kind] = [
            {
                "observation": [float(v).hex() for v in e.Observation["CartPole States"].ravel()],
                "reward": e.Reward.tolist(),
                "is_done": e.IsDone.tolist(),
            }
            for e in episodes
        ]
    venv = cp.make_vector_cartpole(4, MaxStepsPerEpisode=25)
    obs, _ = venv.reset(seed=0)
    frames = [obs]
    for action in _tape(60, [np.array([0, 1, 1, 0]), np.array([1, 1, 0, 0])]):
        obs, rewards, terminated, truncated, _ = venv.step(action)
        frames.append(
            np.concatenate([obs.reshape(4, -1), rewards[:, None], terminated[:, None], truncated[:, None]], axis=1)
        )
    out["vector"] = [float(v).hex() for v in np.concatenate([f.ravel() for f in frames])]
    return out


def test_matches_the_committed_golden_file():
    if not os.path.exists(PATH):
        pytest.fail(f"missing {PATH}; run: python {__file__} --write", pytrace=False)
    with open(PATH) as f:
        golden = json.load(f)
    got = record()
    for key in ("discrete", "continuous", "vector"):
        assert got[key] == golden[key], f"{key} trajectory differs from the golden file (numpy {np.__version__})"


if __name__ == "__main__" and "--write" in sys.argv:
    with open(PATH, "w") as f:
        json.dump(record(), f, indent=0)
    print("wrote", PATH)

"""The two .m examples proven equal to their Python ports (a tape of the .m env, with its snapshot
states, replayed through the port step by step within the port's declared ulps; in Python and
through ``envbridge conform --verify --port``), and SB3's PPO learning on the .m cart-pole."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from bridge.adapters.matlab.octave import ports
from support import require

from bridge.cli import main
from bridge.conformance import Tape, record
from bridge.conformance.across import compare_eras

EXAMPLES = [(ports.make_m_cartpole, ports.make_py_cartpole), (ports.make_m_reach, ports.make_py_reach)]


@pytest.mark.parametrize("original, port", EXAMPLES, ids=["cartpole", "reach"])
def test_a_tape_of_the_m_env_replays_through_its_python_port(original, port, tmp_path):
    tape = record(original, seed=7, steps=300, states=True)
    tape.save(str(tmp_path / "tape.npz"))
    found = compare_eras(port, Tape.load(str(tmp_path / "tape.npz")), name="the .m env", here="its Python port")
    assert found.ok and found.structure is None, str(found)
    assert found.method.startswith("step by step from the recorded state")  # resets included: the same rand
    assert found.tolerance == ports.CROSS_ULPS


def test_conform_verify_is_the_same_proof_on_the_command_line(tmp_path):
    tape = str(tmp_path / "cartpole.npz")
    module = "bridge.adapters.matlab.octave.ports"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["conform", f"{module}:make_m_cartpole", "--record", tape, "--states", "--steps", "120"]) == 0
        assert main(["conform", f"{module}:make_py_cartpole", "--verify", tape, "--any-env", "--view", "neutral"]) == 0
    lines = out.getvalue().splitlines()
    engine = f"the env's step ran in GNU Octave {Tape.load(tape).platform['engine'].split()[-1]} where recorded, in Python here"
    assert lines[2] == f"  recorded elsewhere: {engine}"
    assert lines[4].startswith("  neutral    agrees  ")  # bit for bit, or within the declared ulps
    assert lines[4].endswith(f"(rlFunctionEnv.cross_era_ulps = 4; {engine})")


def test_a_tape_of_the_m_env_replays_bit_for_bit_through_the_m_env(tmp_path):
    tape = str(tmp_path / "reach.npz")
    module = "bridge.adapters.matlab.octave.ports"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["conform", f"{module}:make_m_reach", "--record", tape, "--steps", "60"]) == 0
        assert (
            main(["conform", f"{module}:make_m_reach", "--verify", tape, "--view", "neutral", "--view", "matlab"]) == 0
        )
    assert out.getvalue().splitlines()[2:] == ["  neutral    agrees", "  matlab     agrees"]  # the same platform


def _mean_length(env, policy, seeds):
    lengths = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        done, steps = False, 0
        while not done:
            obs, _, terminated, truncated, _ = env.step(policy(obs))
            done, steps = terminated or truncated, steps + 1
        lengths.append(steps)
    return float(np.mean(lengths))


@pytest.mark.slow
def test_sb3_ppo_learns_the_m_cartpole_through_the_export():
    sb3 = require("stable_baselines3")
    import torch
    from bridge.adapters.sb3 import to_sb3

    torch.set_num_threads(1)
    env = ports.make_m_cartpole(500)
    try:
        model = sb3.PPO("MlpPolicy", to_sb3(env), n_steps=1024, batch_size=64, n_epochs=10, seed=0)
        model.learn(16_384)
        trained = _mean_length(env, lambda obs: np.int64(model.predict(obs, deterministic=True)[0]), range(100, 105))
    finally:
        env.close()
    rng = np.random.default_rng(0)
    random = _mean_length(ports.make_py_cartpole(500), lambda obs: np.int64(rng.integers(2)), range(100, 120))
    assert trained > 3 * random, (trained, random)  # random play falls after ~10 steps (the pole starts tilted)


def test_default_agents_train_and_simulate_on_the_m_cartpole(tmp_path, monkeypatch):
    require("stable_baselines3")
    from bridge.adapters.matlab import (
        getActionInfo,
        getObservationInfo,
        rlDQNAgent,
        rlSimulationOptions,
        rlTrainingOptions,
        sim,
        train,
    )

    monkeypatch.chdir(tmp_path)  # the Episode Manager's files
    env = ports.make_m_cartpole(None)
    try:
        agent = rlDQNAgent(getObservationInfo(env), getActionInfo(env))
        stats = train(agent, env, rlTrainingOptions(MaxEpisodes=2, MaxStepsPerEpisode=50, Verbose=False, Plots="none"))
        assert len(stats.EpisodeReward) == 2
        (experience,) = sim(env, agent, rlSimulationOptions(MaxSteps=20), seed=0)
        assert len(experience.Reward) >= 1
    finally:
        env.close()

"""SB3 on the export: both checkers, refusals, VecEnv episode ends, the batched VecEnv, the CLI."""

from __future__ import annotations

import os
import sys
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")
stable_baselines3 = require("stable_baselines3")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gymnasium"))  # the shared test envs
from bridge.adapters.sb3 import make_vec_env, to_sb3  # noqa: E402
from bridge.adapters.sb3.vec import BatchedVecEnv  # noqa: E402
from gymnasium.utils.env_checker import check_env as gymnasium_check_env  # noqa: E402
from stable_baselines3.common.env_checker import check_env as sb3_check_env  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv  # noqa: E402
from toy_envs import lowering as test_envs  # noqa: E402

import bridge  # noqa: E402
from bridge.errors import ContractError  # noqa: E402
from bridge.examples import EXAMPLE_IDS, CartPoleVector, GridWorld  # noqa: E402

test_envs.register()

HYBRID_MESSAGE = (
    "action space for SB3 must be a single Box, Discrete, MultiDiscrete or MultiBinary (SB3's policies have one "
    "action distribution), got a hybrid (discrete + continuous) action: Tuple(Discrete(2), Box(-1.0, 1.0, (1,), float32)). "
    "Use the plain Gymnasium export (to_gymnasium) with an algorithm that supports it, or redesign the action as one MultiDiscrete or one Box."
)


@pytest.mark.parametrize("env_id", sorted(EXAMPLE_IDS) + sorted(test_envs.LOWERING_ENVS))
def test_export_passes_both_checkers_with_warnings_as_errors(env_id, capsys):
    export = to_sb3(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(export, warn=True)
        gymnasium_check_env(export)
    assert bridge.check(env_id, targets=["gymnasium", "sb3"]).ok


def test_hybrid_action_is_refused_for_sb3_with_the_reason():
    with raises_exactly(bridge.ConversionError, HYBRID_MESSAGE):
        to_sb3("envbridge-test/Hybrid-v0")
    with raises_exactly(bridge.ConversionError, HYBRID_MESSAGE):
        make_vec_env("envbridge-test/Hybrid-v0", n_envs=2)
    report = bridge.check("envbridge-test/Hybrid-v0", targets=["gymnasium", "sb3"])
    assert report.for_target("gymnasium") == [] and [p.check for p in report.for_target("sb3")] == ["lowering"]


def test_a_refused_export_leaves_the_callers_env_open_and_unchanged():
    class Closing(test_envs.HybridActionEnv):
        closed = False

        def close(self):
            self.closed = True

    env = Closing()
    env.reset(seed=0)
    with raises_exactly(bridge.ConversionError, HYBRID_MESSAGE):
        to_sb3(env)
    assert not env.closed and env.step((np.int64(1), np.zeros(1, np.float32)))[0].dtype == np.float32


def test_integer_box_action_is_refused_for_sb3():
    class IntegerAction(test_envs.ShiftedDiscreteEnv):
        def __init__(self):
            super().__init__()
            self.action_space = bridge.spaces.Box(-1, 1, (1,), np.int64)

    with raises_exactly(
        bridge.ConversionError,
        "action space for SB3 must be a float Box (SB3 emits continuous actions as floats), got Box(-1, 1, (1,), int64). "
        "Declare a float Box and round in the env, or use Discrete/MultiDiscrete.",
    ):
        to_sb3(IntegerAction())


@pytest.mark.parametrize(
    "env_id, advice",
    [
        ("envbridge/GridWorld-v0", "use 'MlpPolicy' for a flat observation: Box(0.0, 4.0, (4,), float32)."),
        ("envbridge/PixelGrid-v0", "use 'CnnPolicy' for an image observation: Box(0, 255, (3, 64, 64), uint8)."),
        (
            "envbridge/MultiModal-v0",
            "use 'MultiInputPolicy' for a Dict observation: Dict('image': Box(0, 255, (3, 64, 64), uint8), "
            "'vector': Box(-10.0, 10.0, (4,), float32), 'discrete': Discrete(3)).",
        ),
    ],
)
def test_profile_advises_the_policy(env_id, advice):
    found = [p for p in bridge.check(env_id, targets=["sb3"]).for_target("sb3") if p.check == "policy"]
    policy = advice.split("'")[1]
    assert [(p.severity, p.message, p.fix) for p in found] == [
        ("info", advice, f"Train with e.g. PPO({policy!r}, vec_env).")
    ]


def test_profile_advises_normalize_actions_for_an_asymmetric_box():
    class Asymmetric(test_envs.ShiftedDiscreteEnv):
        def __init__(self):
            super().__init__()
            self.action_space = bridge.spaces.Box(0.0, 4.0, (2,), np.float32)

        def step(self, action):
            return self._move(0)

    found = bridge.check(Asymmetric(), targets=["sb3"]).for_target("sb3")
    fixes = {p.check: p.fix for p in found}
    assert any(p.severity == "warning" and "symmetric and normalized" in p.message for p in found)
    assert (
        fixes["runtime-checker"]
        == "Export with to_sb3(env, normalize_actions=True), which exposes the action as [-1, 1]."
    )
    assert [p.message for p in found if p.check == "policy"][1] == (
        "rescale the action Box [0.0, 4.0] to [-1, 1] for SB3, which squashes/clips actions to the Box."
    )
    assert [p.fix for p in found if p.check == "policy"][1] == (
        "Export with to_sb3(env, normalize_actions=True), which exposes the action as [-1, 1]."
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(to_sb3(Asymmetric(), normalize_actions=True))


# -- episode ends inside SB3 ------------------------------------------------------------------------
def _step(vec, actions):
    vec.step_async(np.asarray(actions))
    return vec.step_wait()


def test_dummy_vec_env_time_out_and_termination_on_the_cap_step():
    vec = make_vec_env("envbridge-test/Cap-v0", n_envs=2, seed=0)  # cap: 3 steps
    assert isinstance(vec, DummyVecEnv)
    vec.reset()
    _step(vec, [0, 0])
    _step(vec, [0, 0])
    obs, _, dones, infos = _step(vec, [0, 1])
    assert dones.tolist() == [True, True]
    assert infos[0]["TimeLimit.truncated"] is True and infos[1]["TimeLimit.truncated"] is False
    assert infos[0]["terminal_observation"].tolist() == [3.0] and obs.tolist() == [[0.0], [0.0]]
    assert infos[0]["episode"]["r"] == 3.0 and infos[0]["episode"]["l"] == 3


def test_dummy_vec_env_both_flags_give_no_time_limit_truncation():
    vec = make_vec_env(lambda: test_envs.CapEnv(both=True), n_envs=1, seed=0)
    vec.reset()
    _, _, dones, infos = _step(vec, [1])
    assert dones.tolist() == [True] and infos[0]["TimeLimit.truncated"] is False


def test_batched_vec_env_time_out_termination_and_both():
    vec = make_vec_env(test_envs.CapVector(num_envs=3, cap=4), seed=0)
    assert isinstance(vec, BatchedVecEnv)
    assert vec.reset().tolist() == [[0.0]] * 3
    obs, _, dones, infos = _step(vec, [1, 0, 0])  # env 0 terminates before the cap
    assert dones.tolist() == [True, False, False] and infos[0]["TimeLimit.truncated"] is False
    assert infos[0]["terminal_observation"].tolist() == [1.0] and obs[0].tolist() == [0.0]
    running = {"TimeLimit.truncated": False}  # on every env, as SB3's DummyVecEnv sets it
    assert infos[1] == running and infos[2] == running and infos[1] is not infos[2]
    infos[1]["key"] = "value"  # each env's info is its own fresh dict: writing into it is allowed
    for _ in range(2):
        _, _, _, later = _step(vec, [0, 0, 0])
        assert later[1] == running and all(info is not infos[1] for info in later)  # nothing carries over
    obs, rewards, dones, infos = _step(vec, [0, 1, 0])  # step 4: the cap for envs 1 and 2
    assert dones.tolist() == [False, True, True] and rewards.dtype == np.float32
    assert infos[2]["TimeLimit.truncated"] is True  # a time-out
    assert infos[1]["TimeLimit.truncated"] is False  # terminated on the cap step (both flags)
    assert infos[2]["terminal_observation"].tolist() == [4.0] and obs[2].tolist() == [0.0]
    assert {k: infos[2]["episode"][k] for k in "rl"} == {"r": 4.0, "l": 4} and infos[2]["episode"]["t"] >= 0


@pytest.mark.parametrize("call", ["step_async", "step"])
def test_batched_vec_env_refuses_invalid_actions_without_stepping(call):
    # step() checks the batch itself (it skips step_async): both refuse the same way, nothing moves
    neutral = test_envs.CapVector(num_envs=3, cap=4)
    vec = make_vec_env(neutral)
    vec.reset()
    with raises_exactly(
        bridge.ContractError,
        "actions[2] must lie in [0, 1], got 3. Sample from env.action_space or clip the action into its bounds.",
    ):
        getattr(vec, call)(np.array([0, 1, 3]))
    assert neutral.count.tolist() == [0, 0, 0]


def test_batched_step_is_step_async_then_step_wait():
    # step() skips SB3's indirection: the same outputs (the refusal: the test above)
    direct, split = (make_vec_env(CartPoleVector(num_envs=4, max_episode_steps=5), seed=2) for _ in range(2))
    assert np.array_equal(direct.reset(), split.reset())
    rng = np.random.default_rng(0)
    for _ in range(12):
        actions = rng.integers(0, 2, 4)
        got, want = direct.step(actions), _step(split, actions)
        for a, b in zip(got[:3], want[:3]):
            assert np.array_equal(a, b) and a.dtype == b.dtype
        assert [sorted(info) for info in got[3]] == [sorted(info) for info in want[3]]
        for a, b in zip(got[3], want[3]):
            if "terminal_observation" in a:
                assert np.array_equal(a["terminal_observation"], b["terminal_observation"])
                assert a["TimeLimit.truncated"] is b["TimeLimit.truncated"]
                assert {k: a["episode"][k] for k in "rl"} == {k: b["episode"][k] for k in "rl"}


def test_a_next_step_vector_env_goes_into_sb3_with_sb3s_same_step_conventions():
    # the VectorEnv base presents either autoreset mode: a next-step CartPoleVector is accepted
    vec = make_vec_env(CartPoleVector(num_envs=4, max_episode_steps=6), seed=5)
    reference = CartPoleVector(num_envs=4, max_episode_steps=6, autoreset_mode="same-step")
    obs, expected = vec.reset(), reference.reset(seed=5)[0]
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(20):
        assert np.array_equal(obs, expected)
        actions = rng.integers(0, 2, 4)
        obs, rewards, dones, infos = _step(vec, actions)
        expected, _, terminated, truncated, ref_infos = reference.step(actions)
        assert np.array_equal(dones, terminated | truncated)
        for i in np.flatnonzero(dones):
            ended += 1
            assert np.array_equal(infos[i]["terminal_observation"], ref_infos["final_obs"][i])
            assert infos[i]["TimeLimit.truncated"] is bool(truncated[i] and not terminated[i])
    assert ended >= 4  # the 6-step cap ends every episode at least once


def test_batched_cartpole_matches_the_neutral_batch_and_trains():
    vec = make_vec_env(CartPoleVector, n_envs=8, seed=3)
    reference = CartPoleVector(num_envs=8, autoreset_mode="same-step")
    obs, expected = vec.reset(), reference.reset(seed=3)[0]
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert np.array_equal(obs, expected)
        actions = rng.integers(0, 2, 8)
        obs, rewards, dones, infos = _step(vec, actions)
        expected, _, terminated, truncated, _ = reference.step(actions)
        assert np.array_equal(dones, terminated | truncated)
    model = stable_baselines3.PPO(
        "MlpPolicy", vec, n_steps=32, batch_size=64, policy_kwargs={"net_arch": [32, 32]}, seed=0
    )
    model.learn(512)
    assert model.num_timesteps == 512 and len(model.ep_info_buffer) > 0


def test_subproc_vec_env_from_an_id():
    vec = make_vec_env("envbridge/GridWorld-v0", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv)
    try:
        obs = vec.reset()
        assert obs.shape == (2, 4) and obs.dtype == np.float32
        _step(vec, [0, 1])
    finally:
        vec.close()


# -- the CLI ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_demo_prints_the_table_and_writes_the_curve(tmp_path, capsys):
    from bridge.cli import main

    assert main(["demo", "--steps", "3000", "--logdir", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = out.index("policy   episodes  success  mean return  mean length")
    assert out[header + 1].split()[:2] == ["random", "100"] and out[header + 2].split()[:2] == ["PPO", "100"]
    assert (tmp_path / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "ppo_gridworld.zip").exists()


def test_train_saves_the_model_and_prints_the_mean_return(tmp_path, capsys):
    from bridge.cli import main

    assert (
        main(
            [
                "train",
                "sb3",
                "--algo",
                "A2C",
                "--env",
                "envbridge/GridWorld-v0",
                "--steps",
                "200",
                "--logdir",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 0
    )
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("A2C on envbridge/GridWorld-v0: 200 steps, mean return ") and "over 10 episodes" in line
    assert (tmp_path / "a2c_envbridge_GridWorld-v0.zip").exists()


def test_train_refuses_an_algorithm_the_action_space_cannot_use(capsys, tmp_path):
    from bridge.cli import main

    argv = ["train", "sb3", "--algo", "DQN", "--env", "envbridge/PointMass-v0", "--steps", "10", "--no-progress"]
    assert main(argv + ["--logdir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "envbridge train sb3: SpecError: the action space for DQN must be Discrete, got Box(-1.0, 1.0, (2,), float32). "
        "Use PPO or A2C, or SAC/TD3 for a Box."
    )


def test_demo_without_matplotlib_names_the_pip_command(monkeypatch):
    from bridge.adapters.sb3.train import demo_command

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with raises_exactly(
        bridge.MissingDependencyError,
        "the package 'matplotlib' must be installed for envbridge's learning-curve plot, "
        "got ImportError: import of matplotlib halted; None in sys.modules. Run: pip install 'envbridge[cli]'.",
    ):
        demo_command(SimpleNamespace(steps=10, seed=0, out="unused", no_progress=True))


# -- conformance views ------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", sorted(test_envs.LOWERING_ENVS) + ["envbridge-test/Cap-v0"])
def test_gymnasium_and_sb3_views_replay_a_neutral_tape(env_id):
    from bridge.conformance import Divergence, record, verify

    tape = record(env_id, seed=4, steps=60)
    results = verify(lambda: bridge.make(env_id), tape, views=["gymnasium", "sb3"], snapshot_at=20)
    assert {name: v.kind for name, v in results.items()} == {"gymnasium": "agrees", "sb3": "agrees"}, results
    tape.entries[3].reward += 1.0  # a fault the views must see
    results = verify(lambda: bridge.make(env_id), tape, views=["gymnasium", "sb3"])
    assert all(isinstance(r, Divergence) and r.field == "reward" for r in results.values()), results


def test_sb3_view_reads_both_flags_as_terminated():
    from bridge.conformance import record, verify

    tape = record(lambda: test_envs.CapEnv(both=True), seed=0, steps=12, env_id="cap-both")
    assert any(e.terminated and e.truncated for e in tape.entries if e.kind == "step")
    results = verify(lambda: test_envs.CapEnv(both=True), tape, views=["gymnasium", "sb3"])
    assert {name: v.kind for name, v in results.items()} == {"gymnasium": "agrees", "sb3": "agrees"}, results


class _OwnEpisodeInfo(GridWorld):
    """Writes the info key SB3's Monitor owns."""

    def step(self, action):
        obs, reward, terminated, truncated, _ = super().step(action)
        return obs, reward, terminated, truncated, {"episode": "mine"}


def test_an_info_holding_the_monitors_episode_key_is_refused_not_overwritten():
    vec = make_vec_env(_OwnEpisodeInfo, 1, max_episode_steps=3)
    vec.reset()
    with raises_exactly(
        ContractError,
        "_OwnEpisodeInfo step info must not use the key 'episode' (reserved for SB3's Monitor), got ['episode']. "
        "Rename the key.",
    ):
        vec.step(np.array([0]))
    vec.close()


def test_check_actions_false_leaves_the_batch_unchecked_and_true_checks_it_once_whole():
    checked = make_vec_env(GridWorld, 2, max_episode_steps=3)
    unchecked = make_vec_env(GridWorld, 2, max_episode_steps=3, check_actions=False)
    try:
        checked.reset()
        with raises_exactly(
            ContractError,
            "actions[1] must lie in [0, 3], got 99. Sample from env.action_space or clip the action into its bounds.",
        ):
            checked.step(np.array([0, 99]))
        assert all(env.unwrapped.options["check_actions"] is False for env in checked.envs)  # the batch checked
        unchecked.reset()
        with raises_exactly(  # the env itself got 99: the user's opt-out
            ContractError,
            "GridWorld step() at step 1 must run without raising, got IndexError: index 99 is out of bounds for "
            "axis 0 with size 4. Fix the env; the original exception and its traceback are chained as __cause__.",
        ):
            unchecked.step(np.array([0, 99]))
    finally:
        checked.close()
        unchecked.close()

"""The export as a Gymnasium env: the checker, seeding, snapshots, goals, episode ends, register, vectors."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from support import raises_exactly, require

gymnasium = require("gymnasium")

import cloudpickle  # noqa: E402  (Gymnasium's own dependency: AsyncVectorEnv ships env_fns with it)
from bridge.adapters.gymnasium import register, to_gymnasium, to_gymnasium_vector  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from toy_envs import lowering as test_envs  # noqa: E402

import bridge  # noqa: E402
from bridge.examples import EXAMPLE_IDS, CartPoleVector  # noqa: E402

test_envs.register()

CHECKED_IDS = sorted(EXAMPLE_IDS) + sorted(test_envs.LOWERING_ENVS) + ["envbridge-test/Hybrid-v0"]


@pytest.mark.parametrize("env_id", CHECKED_IDS)
def test_export_passes_gymnasiums_checker_with_warnings_as_errors(env_id):
    export = to_gymnasium(env_id)
    assert export.spec is not None  # so the checker also rebuilds it in every render mode
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(export)


def test_gymnasium_profile_reports_a_clean_export_and_the_runtime_warnings():
    assert bridge.check("envbridge/GridWorld-v0", targets=["gymnasium"]).ok

    class Unbounded(test_envs.ShiftedDiscreteEnv):
        def __init__(self):
            super().__init__()
            self.observation_space = bridge.spaces.Box(-np.inf, np.inf, (1,), np.float32)

    report = bridge.check(Unbounded(), targets=["gymnasium"])
    found = report.for_target("gymnasium")
    assert [p.severity for p in found] == ["warning", "warning"]
    assert found[0].message == (
        "gymnasium.utils.env_checker.check_env must pass without warnings, "
        "got A Box observation space minimum value is -infinity. This is probably too low."
    )
    assert found[0].fix == "Give the Box finite bounds if the values are bounded."


def test_lazy_convenience_names_on_bridge():
    assert bridge.to_gymnasium is to_gymnasium and bridge.to_gymnasium_vector is to_gymnasium_vector


def test_one_generator_shared_with_the_neutral_env():
    export = to_gymnasium("envbridge/GridWorld-v0")
    first, _ = export.reset(seed=5)
    assert export.np_random is export.neutral.np_random
    assert export.unwrapped._np_random is export.neutral.unwrapped._np_random
    assert export.np_random_seed == 5
    export.np_random.random()  # a draw through the export is a draw of the neutral env
    state = export.neutral.np_random.bit_generator.state
    assert np.random.default_rng(5).bit_generator.state != state
    again, _ = export.reset(seed=5)
    assert np.array_equal(first, again)


@pytest.mark.parametrize(
    "copier", [copy.deepcopy, lambda env: cloudpickle.loads(cloudpickle.dumps(env))], ids=["deepcopy", "cloudpickle"]
)
def test_a_copied_export_resets_and_steps_its_own_env(copier):
    reference, export = to_gymnasium("envbridge/GridWorld-v0"), to_gymnasium("envbridge/GridWorld-v0")
    assert np.array_equal(reference.reset(seed=0)[0], export.reset(seed=0)[0])
    twin = copier(export)
    twin.reset(seed=7)  # the copy's reset and step are bound to the copy's port, not the original's
    twin.step(0)
    for action in (0, 1, 2, 3, 1):
        assert np.array_equal(export.step(action)[0], reference.step(action)[0])
    assert (export.steps, twin.steps) == (5, 1)
    with pytest.raises(TypeError):
        export.reset(0)  # keyword-only, as gymnasium.Env.reset


def test_render_mode_and_metadata_pass_through():
    export = to_gymnasium("envbridge/GridWorld-v0", render_mode="ansi")
    assert export.render_mode == "ansi"
    assert export.metadata["render_modes"] == ["rgb_array", "ansi"] and export.metadata["render_fps"] == 4
    export.reset(seed=0)
    assert export.render() == export.neutral.render() and "A" in export.render()


def test_snapshots_include_the_adapter_state_and_replay():
    export = to_gymnasium("envbridge/GridWorld-v0")
    export.reset(seed=2)
    export.step(0)
    snap = export.clone_state()
    assert snap["adapter"] == {
        "image_layout": "CHW",
        "normalize_actions": False,
        "float64_as_float32": False,
        "steps": 1,
    }
    tape = [export.step(a)[0] for a in (1, 2, 3)]
    export.restore_state(snap)
    assert export.steps == 1 and export.neutral.elapsed_steps == 1
    assert all(np.array_equal(export.step(a)[0], o) for a, o in zip((1, 2, 3), tape))
    other = to_gymnasium("envbridge/GridWorld-v0", image_layout="HWC")
    with raises_exactly(
        bridge.ContractError,
        "snapshot export options must equal {'image_layout': 'HWC', 'normalize_actions': False, "
        "'float64_as_float32': False}, got {'image_layout': 'CHW', 'normalize_actions': False, "
        "'float64_as_float32': False}. Export with the same options.",
    ):
        other.restore_state(snap)


def test_goal_export_computes_rewards_on_batches():
    export = to_gymnasium("envbridge/GoalReach-v0")
    obs, _ = export.reset(seed=0)
    _, reward, *_ = export.step(np.zeros(3, np.float32))
    assert export.compute_reward(obs["achieved_goal"], obs["desired_goal"], {}) == reward
    achieved = np.zeros((5, 3), np.float32)
    desired = np.array([[0, 0, 0.1], [1, 0, 0], [0, 0, 0], [0, 2, 0], [0.2, 0, 0]], np.float32)
    assert export.compute_reward(achieved, desired, [{}] * 5).tolist() == [0, -1, 0, -1, 0]
    assert not hasattr(to_gymnasium("envbridge/GridWorld-v0"), "compute_reward")


@pytest.mark.parametrize(
    "actions, flags",
    [((0, 0, 0), (False, True)), ((0, 0, 1), (True, False)), ((0, 1), (True, False))],
    ids=["time-out", "termination-on-cap-step", "termination"],
)
def test_neutral_time_limit_survives_into_the_five_tuple(actions, flags):
    export = to_gymnasium("envbridge-test/Cap-v0")  # registered with max_episode_steps=3
    export.reset(seed=0)
    for action in actions:
        _, _, terminated, truncated, _ = export.step(action)
    assert (terminated, truncated) == flags


def test_both_flags_pass_through_to_gymnasium():
    export = to_gymnasium(test_envs.CapEnv(both=True))
    export.reset(seed=0)
    assert export.step(1)[2:4] == (True, True)


def test_register_makes_the_export_under_gymnasiums_time_limit():
    register("envbridge-test/RegisteredCap-v0", "toy_envs.lowering:CapEnv", max_episode_steps=2)
    env = gymnasium.make("envbridge-test/RegisteredCap-v0")
    assert isinstance(env, gymnasium.wrappers.TimeLimit) and env.spec.max_episode_steps == 2
    assert isinstance(env.unwrapped, bridge.adapters.gymnasium.GymnasiumEnv)
    env.reset(seed=0)
    assert env.step(0)[2:4] == (False, False) and env.step(0)[2:4] == (False, True)
    hwc = gymnasium.make("envbridge-test/RegisteredCap-v0", both=True, check_actions=False)
    assert hwc.unwrapped.neutral.both and not hwc.unwrapped.options["check_actions"]
    vec = gymnasium.make_vec("envbridge-test/RegisteredCap-v0", num_envs=2)
    vec.reset(seed=0)
    _, rewards, terminated, truncated, _ = vec.step(np.array([1, 0]))
    assert terminated.tolist() == [True, False] and truncated.tolist() == [False, False]


def test_made_export_has_our_guard_in_place_of_order_enforcing_and_the_passive_checker():
    register("envbridge-test/Guarded-v0", "toy_envs.lowering:CapEnv", max_episode_steps=2)
    env = gymnasium.make("envbridge-test/Guarded-v0")
    assert type(env.env) is bridge.adapters.gymnasium.GymnasiumEnv  # TimeLimit, then the export
    with raises_exactly(
        bridge.ContractError,
        "gymnasium env step() must come after reset(), got step() before the first reset(). Call env.reset() first.",
    ):
        env.step(0)
    checked = gymnasium.make("envbridge-test/Guarded-v0", disable_env_checker=False)
    assert isinstance(checked.env, gymnasium.wrappers.PassiveEnvChecker)
    checked.reset(seed=0)
    assert checked.step(0)[2:4] == (False, False)


@pytest.mark.parametrize(
    "mode, declared", [("next-step", AutoresetMode.NEXT_STEP), ("same-step", AutoresetMode.SAME_STEP)]
)
def test_vector_export_declares_its_autoreset_mode(mode, declared):
    vec = to_gymnasium_vector(CartPoleVector(num_envs=4, max_episode_steps=3, autoreset_mode=mode))
    assert isinstance(vec, gymnasium.vector.VectorEnv) and vec.metadata["autoreset_mode"] == declared
    assert vec.action_space == gymnasium.spaces.MultiDiscrete([2, 2, 2, 2])
    obs, _ = vec.reset(seed=0)
    assert obs in vec.observation_space
    for _ in range(3):
        obs, rewards, terminated, truncated, infos = vec.step(np.ones(4, dtype=np.int64))
    assert truncated.all() and obs in vec.observation_space
    assert ("final_obs" in infos) == (mode == "same-step")


def test_vector_export_refuses_an_invalid_batch_without_stepping():
    neutral = CartPoleVector(num_envs=2, autoreset_mode="same-step")
    vec = to_gymnasium_vector(neutral)
    vec.reset(seed=0)
    before = neutral.state.copy()
    with raises_exactly(
        bridge.ContractError,
        "actions[1] must lie in [0, 1], got 2. Sample from env.action_space or clip the action into its bounds.",
    ):
        vec.step(np.array([0, 2]))
    with raises_exactly(
        bridge.ContractError,
        "actions must hold one action per env (2), got 3 actions. Pass one action per env, e.g. env.action_space.sample().",
    ):
        vec.step(np.array([0, 1, 1]))
    assert np.array_equal(neutral.state, before)

"""rlFunctionEnv: MATLAB-style step/reset functions as a bridge.Env, and every refusal at its boundary."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from bridge.adapters.matlab import examples as cp
from bridge.adapters.matlab import (
    getActionInfo,
    getObservationInfo,
    rlFiniteSetSpec,
    rlFunctionEnv,
    rlNumericSpec,
    rlSimulationOptions,
    sim,
    validateEnvironment,
)
from support import raises_exactly

import bridge
from bridge import snapshot, spaces
from bridge.errors import ContractError, SpecError

OBS = cp.cartpole_observation_info()
ACT = cp.cartpole_action_info("discrete")


def reset_ok():
    return np.zeros((4, 1)), {"State": np.zeros((4, 1))}


def step_returning(*outputs):
    """A step function that returns ``outputs`` with the Info passed through (last position)."""
    return lambda Action, Info: tuple(outputs) + (Info,)


def balance(observation):
    """A MATLAB-style policy: push toward the side the pole falls to (uses element values)."""
    return 10.0 if observation[2, 0] + 0.5 * observation[3, 0] > 0 else -10.0


def test_discrete_cartpole_validates_and_simulates():
    env = cp.make_cartpole("discrete", MaxStepsPerEpisode=200)
    validateEnvironment(env)
    experiences = sim(env, balance, rlSimulationOptions(MaxSteps=500, NumSimulations=2), seed=0)
    assert len(experiences) == 2
    for exp in experiences:
        obs = exp.Observation["CartPole States"]
        act = exp.Action["CartPole Action"]
        n = exp.NumSteps
        assert obs.shape == (n + 1, 4, 1) and obs.dtype == np.float64
        assert act.shape == (n,) and set(np.unique(act)) <= {-10.0, 10.0}
        assert exp.Reward.dtype == np.float64 and exp.IsDone.dtype == np.uint8
        assert (exp.IsDone[:-1] == 0).all()
        # the controller balances: the 200-step TimeLimit ends it (IsDone=2), not a fall (1)
        assert n == 200 and exp.IsDone[-1] == 2 and exp.Reward.sum() == 200.0


def test_sim_marks_falls_and_its_own_step_limit():
    env = cp.make_cartpole("discrete", MaxStepsPerEpisode=None)
    fall = sim(env, lambda obs: 10.0, rlSimulationOptions(MaxSteps=500), seed=1)[0]
    assert fall.IsDone[-1] == 1 and fall.Reward[-1] == -10.0 and (fall.Reward[:-1] == 1.0).all()
    capped = sim(env, balance, rlSimulationOptions(MaxSteps=30), seed=1)[0]
    assert capped.NumSteps == 30 and capped.IsDone[-1] == 2


def test_continuous_cartpole_and_the_info_property():
    env = cp.make_cartpole("continuous", MaxStepsPerEpisode=None)
    assert env.action_space == spaces.Box(-10, 10, (1, 1), np.float64)
    obs, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs, env.Info["State"])
    assert obs is not env.Info["State"]  # the facade copies at the boundary
    obs2, reward, terminated, truncated, info = env.step(np.array([[2.5]]))
    assert (type(reward), type(terminated), type(truncated), info) == (float, bool, bool, {})
    exp = sim(env, lambda o: np.array([[-3.0]]), rlSimulationOptions(MaxSteps=5), seed=0)[0]
    assert exp.Action["CartPole Action"].shape == (5, 1, 1)


def test_matlab_properties_and_info_getters():
    env = rlFunctionEnv(
        OBS,
        ACT,
        "bridge.adapters.matlab.examples:cartpole_step_discrete",
        "bridge.adapters.matlab.examples:cartpole_reset",
    )
    assert env.StepFcn == "bridge.adapters.matlab.examples:cartpole_step_discrete"
    assert env.Info["State"].shape == (4, 1)  # validated at creation; left as after the reset
    assert getObservationInfo(env) == OBS and getActionInfo(env) == ACT
    assert getObservationInfo(env) is not OBS
    env.StepFcn = cp.cartpole_step_discrete
    assert env.StepFcn is cp.cartpole_step_discrete
    with raises_exactly(
        SpecError,
        'rlFunctionEnv StepFcn must be a callable or a "module:function" string, got 42. '
        "Pass e.g. my_step, functools.partial(my_step, params=p) or 'mypkg.cartpole:step'.",
    ):
        env.StepFcn = 42


def scaled_step(Action, Info, gain):
    """A step with an extra parameter, bound by functools.partial (MATLAB's anonymous function)."""
    return Info["x"] + gain * Action, float(gain), False, {"x": Info["x"] + gain * Action}


def test_partial_and_lambda_close_over_extra_parameters():
    spec = rlNumericSpec([1, 1])
    env = rlFunctionEnv(
        spec,
        rlFiniteSetSpec([1, 2]),
        functools.partial(scaled_step, gain=3.0),
        lambda: (np.zeros((1, 1)), {"x": np.zeros((1, 1))}),
    )
    env.reset()
    obs, reward, *_ = env.step(1)  # index 1 -> element 2
    assert obs.tolist() == [[6.0]] and reward == 3.0


def test_rng_argument_makes_seeding_reproducible_and_matches_cartpole():
    env = cp.make_cartpole("discrete", MaxStepsPerEpisode=None)
    first = [env.reset(seed=7)[0]] + [env.step(i % 2)[0] for i in range(10)]
    again = [env.reset(seed=7)[0]] + [env.step(i % 2)[0] for i in range(10)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(env.reset(seed=8)[0], first[0])


class MatlabRewardCartPole(bridge.examples.CartPole):
    """bridge's own CartPole class with MATLAB's reward (-10 on a fall)."""

    def step(self, action):
        obs, _, terminated, truncated, info = super().step(action)
        return obs, (-10.0 if terminated else 1.0), terminated, truncated, info


def test_differential_against_a_bridge_env_class():
    facade = cp.make_cartpole("discrete", MaxStepsPerEpisode=None)
    native = MatlabRewardCartPole()
    rng = np.random.default_rng(0)
    for episode in range(3):
        a, _ = facade.reset(seed=episode)
        b, _ = native.reset(seed=episode)
        assert np.array_equal(a.astype(np.float32).ravel(), b)
        for _ in range(500):
            action = int(rng.integers(2))
            a, ra, ta, _, _ = facade.step(action)
            b, rb, tb, _, _ = native.step(action)
            assert np.array_equal(a.ravel(), native.state)  # the float64 states, bit for bit
            assert (ra, ta) == (rb, tb)
            if ta:
                break
        assert ta


def test_hybrid_action_builds_and_simulates():
    seen = []

    def step(Action, Info):
        seen.append(Action)
        direction, magnitude = Action
        position = Info + direction * magnitude
        return position, float(-abs(position[0, 0])), bool(abs(position[0, 0]) > 5), position

    env = rlFunctionEnv(
        rlNumericSpec([1, 1]),
        [rlFiniteSetSpec([-1, 1]), rlNumericSpec([1, 1], LowerLimit=0, UpperLimit=2)],
        step,
        lambda: (np.zeros((1, 1)), np.zeros((1, 1))),
    )
    assert env.action_space == spaces.Tuple([spaces.Discrete(2), spaces.Box(0, 2, (1, 1), np.float64)])
    exp = sim(env, lambda obs: [1.0, np.array([[2.0]])], rlSimulationOptions(MaxSteps=10))[0]
    assert exp.NumSteps == 3 and exp.IsDone[-1] == 1
    assert list(exp.Action) == ["act1", "act2"] and exp.Action["act1"].tolist() == [1.0, 1.0, 1.0]
    assert seen[-1][0] == 1.0 and seen[-1][1].tolist() == [[2.0]]


def test_several_observation_channels_are_a_dict_keyed_by_name():
    pos = rlNumericSpec([2, 1], Name="pos")
    mode = rlFiniteSetSpec([0, 5])

    def step(Action, Info):
        return [np.ones((2, 1)), 5.0], 0.0, False, Info

    env = rlFunctionEnv([pos, mode], rlFiniteSetSpec([0, 1]), step, lambda: ([np.zeros((2, 1)), 0], {}))
    assert list(env.observation_space.keys()) == ["pos", "obs2"]
    obs, _ = env.reset()
    assert obs["obs2"] == 0 and isinstance(obs["obs2"], np.int64)
    obs, *_ = env.step(0)
    assert obs["obs2"] == 1 and obs["pos"].tolist() == [[1.0], [1.0]]
    assert [s.Name for s in getObservationInfo(env)] == ["pos", ""]
    exp = sim(env, lambda o: 0.0, rlSimulationOptions(MaxSteps=2))[0]
    assert exp.Observation["obs2"].tolist() == [0.0, 5.0, 5.0]


def test_logical_channel_reaches_the_user_as_bool():
    got = []

    def step(Action, Info):
        got.append(Action)
        return np.array([[True], [False]]), 0.0, False, Info

    env = rlFunctionEnv(
        rlNumericSpec([2, 1], DataType="logical"),
        rlNumericSpec([2, 1], DataType="logical"),
        step,
        lambda: (np.zeros((2, 1), dtype=bool), {}),
    )
    obs, *_ = env.step(np.array([[1], [0]], dtype=np.int8))
    assert obs.dtype == np.int8 and obs.tolist() == [[1], [0]]
    assert got[-1].dtype == bool and got[-1].tolist() == [[True], [False]]


def test_check_reports_pass_on_the_cartpole():
    report = bridge.check(cp.make_cartpole("discrete"), targets=["matlab"])
    assert report.ok, str(report)
    assert [p.check for p in report.for_target("matlab")] == ["episode-end"]  # the one-flag warning


def test_check_reports_what_matlab_cannot_express_for_a_plain_env():
    class TwoDiscrete(bridge.Env):
        observation_space = spaces.Box(-1, 1, (2,), np.float16)
        action_space = spaces.Tuple([spaces.Discrete(2), spaces.Discrete(2)])

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(2, np.float16), {}

        def step(self, action):
            return np.zeros(2, np.float16), 0.0, False, False, {}

    report = bridge.check(TwoDiscrete(), targets=["matlab"])
    assert [p.message for p in report.for_target("matlab")] == [
        "observation must have a dtype MATLAB has a class for (['float32', 'float64', 'int16', 'int32', 'int64', 'int8', "
        "'uint16', 'uint32', 'uint64', 'uint8']), got float16.",
        "action must be one space, or Tuple(Discrete, Box) for a hybrid action, got Tuple(Discrete(2), Discrete(2)).",
    ]


# -- refusals at the boundary: each asserts the whole message ---------------------------------------
def test_wrong_dimension():
    with raises_exactly(
        ContractError,
        "StepFcn output NextObservation must have size [4 1], got size [3 1]. Return 4 values shaped [4 1] (the spec's Dimension).",
    ):
        rlFunctionEnv(OBS, ACT, step_returning(np.zeros(3), 1.0, False), reset_ok)
    with raises_exactly(
        ContractError,
        "ResetFcn output InitialObservation must have size [4 1], got size [1 4]. Return 4 values shaped [4 1] (the spec's Dimension).",
    ):
        rlFunctionEnv(OBS, ACT, cp.cartpole_step_discrete, lambda: (np.zeros((1, 4)), {}))


def test_a_flat_vector_is_matlabs_column():
    env = rlFunctionEnv(OBS, ACT, step_returning(np.zeros(4), 1.0, False), reset_ok)  # (4,) is [4 1]
    assert env.step(0)[0].shape == (4, 1)


def test_wrong_data_type():
    single = rlNumericSpec([4, 1], DataType="single")
    with raises_exactly(
        ContractError,
        "ResetFcn output InitialObservation must have DataType 'single' (numpy float32) or values it holds exactly, got double (float64) value 0.1. "
        "Return np.float32 values from your function (e.g. np.asarray(x, dtype=np.float32)).",
    ):
        rlFunctionEnv(single, ACT, cp.cartpole_step_discrete, lambda: (np.full((4, 1), 0.1), {}))
    with raises_exactly(
        ContractError,
        "ResetFcn output InitialObservation must be a numeric array of DataType 'double', got 'abcd'. Return np.asarray(value, dtype=np.float64).",
    ):
        rlFunctionEnv(OBS, ACT, cp.cartpole_step_discrete, lambda: ("abcd", {}))
    # lossless conversions are accepted: 0.5 is exact in float32, Python ints in double
    env = rlFunctionEnv(single, ACT, step_returning(np.full((4, 1), 0.5), 1.0, False), lambda: ([1, 2, 3, 4], {}))
    assert env.step(0)[0].dtype == np.float32


def test_isdone_not_a_scalar_logical():
    with raises_exactly(
        ContractError,
        "StepFcn output IsDone must be a scalar logical (True or False; 0 or 1 also accepted), got array([ True, False], shape=(2,), dtype=bool). "
        "Return one logical, e.g. bool(abs(x) > 2.4).",
    ):
        rlFunctionEnv(OBS, ACT, step_returning(np.zeros((4, 1)), 1.0, np.array([True, False])), reset_ok)
    with raises_exactly(
        ContractError,
        "StepFcn output IsDone must be a scalar logical (True or False; 0 or 1 also accepted), got 0.5. Return one logical, e.g. bool(abs(x) > 2.4).",
    ):
        rlFunctionEnv(OBS, ACT, step_returning(np.zeros((4, 1)), 1.0, 0.5), reset_ok)


def test_non_scalar_reward():
    with raises_exactly(
        ContractError,
        "StepFcn output Reward must be a real numeric scalar, got array([1., 2.], shape=(2,), dtype=float64). Return one number, e.g. float(reward).",
    ):
        rlFunctionEnv(OBS, ACT, step_returning(np.zeros((4, 1)), np.array([1.0, 2.0]), False), reset_ok)


def test_reset_function_returning_one_output():
    with raises_exactly(
        ContractError,
        "ResetFcn must return 2 outputs (InitialObservation, Info), got 1 output (ndarray). End it with: return initial_observation, info.",
    ):
        rlFunctionEnv(OBS, ACT, cp.cartpole_step_discrete, lambda: np.zeros((4, 1)))


def test_step_function_returning_three_outputs():
    with raises_exactly(
        ContractError,
        "StepFcn must return 4 outputs (NextObservation, Reward, IsDone, Info), got 3 outputs. End it with: return next_observation, reward, is_done, info.",
    ):
        rlFunctionEnv(OBS, ACT, lambda Action, Info: (np.zeros((4, 1)), 1.0, False), reset_ok)


def test_observation_outside_the_limits_or_the_finite_set():
    bounded = rlNumericSpec([2, 1], LowerLimit=-1, UpperLimit=1)
    with raises_exactly(
        ContractError,
        "ResetFcn output InitialObservation[1, 0] must lie in [LowerLimit, UpperLimit] = [-1.0, 1.0], got 3.0. Keep the value inside the spec's limits, or widen them.",
    ):
        rlFunctionEnv(bounded, ACT, cp.cartpole_step_discrete, lambda: (np.array([[0.0], [3.0]]), {}))
    with raises_exactly(
        ContractError,
        "StepFcn output NextObservation must be one of the rlFiniteSetSpec Elements [1.0, 2.0], got 3.0. Use one of the elements (the set is fixed at creation).",
    ):
        rlFunctionEnv(rlFiniteSetSpec([1, 2]), ACT, step_returning(3.0, 0.0, False), lambda: (1, {}))


def test_invalid_actions_do_not_advance_the_env():
    env = cp.make_cartpole("discrete")
    env.reset(seed=0)
    env.step(1)
    before = env.clone_state()
    with raises_exactly(
        ContractError,
        "action must lie in [0, 1] (an index into the rlFiniteSetSpec Elements [-10.0, 10.0]), got 2. "
        "Pass the element's index; env.to_neutral_action(value) converts an element value.",
    ):
        env.step(2)
    with raises_exactly(
        ContractError,
        "action must be an integer scalar (an index into the rlFiniteSetSpec Elements [-10.0, 10.0]), got 10.0. "
        "Pass the element's index; env.to_neutral_action(value) converts an element value.",
    ):
        env.step(10.0)
    with raises_exactly(
        ContractError,
        "action must be one of the rlFiniteSetSpec Elements [-10.0, 10.0], got 5.0. Use one of the elements (the set is fixed at creation).",
    ):
        sim(env, lambda obs: 5.0, rlSimulationOptions(MaxSteps=3))
    assert env.unwrapped.to_neutral_action(10) == 1
    env.reset(seed=0)
    env.step(1)
    assert snapshot.to_json(env.clone_state()) == snapshot.to_json(before)


def test_a_failed_step_output_does_not_commit_info():
    calls = []

    def step(Action, Info):
        calls.append(Info)
        return (np.zeros((4, 1)) if len(calls) < 3 else np.zeros(5)), 1.0, False, {"n": Info["n"] + 1}

    env = rlFunctionEnv(OBS, ACT, step, lambda: (np.zeros((4, 1)), {"n": 0}))
    env.reset()
    env.step(0)
    assert env.Info == {"n": 1}
    with pytest.raises(ContractError):
        env.step(0)
    assert env.Info == {"n": 1}


def test_info_must_be_plain_data_to_snapshot():
    env = rlFunctionEnv(
        OBS,
        ACT,
        cp.cartpole_step_discrete,
        lambda: (np.zeros((4, 1)), {"State": np.zeros((4, 1)), "solver": object()}),
        validate=False,
    )
    env.reset()
    with raises_exactly(
        ContractError,
        "rlFunctionEnv Info['solver'] must be plain data (dict, list, tuple, ndarray, number, str, bool or None) to be snapshotted, got object. "
        "Keep simulation state in Info as plain data and objects outside it (e.g. in a functools.partial).",
    ):
        env.clone_state()


def test_snapshot_restores_info_and_rng():
    env = cp.make_cartpole("continuous", MaxStepsPerEpisode=None)
    env.reset(seed=4)
    snap = env.clone_state()
    tape = [np.array([[f]]) for f in (1.0, -2.0, 3.0)]
    first = [env.step(a)[0] for a in tape]
    env.restore_state(snapshot.from_json(snapshot.to_json(snap)))
    assert all(np.array_equal(a, env.step(b)[0]) for a, b in zip(first, tape))


def test_check_tells_what_a_matlab_user_would_see_for_a_plain_env():
    class Plain(bridge.Env):
        observation_space = spaces.Box(-1, 1, (2,), np.float32)
        action_space = spaces.Discrete(3, start=-1)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(2, np.float32), {}

        def step(self, action):
            return np.zeros(2, np.float32), 0.0, False, False, {}

    report = bridge.check(Plain(), targets=["matlab"])
    assert report.ok
    assert [(p.severity, p.message, p.fix) for p in report.for_target("matlab")] == [
        (
            "info",
            "the observationInfo MATLAB reads from the neutral space: "
            "rlNumericSpec(Dimension=[2], LowerLimit=-1.0, UpperLimit=1.0, DataType='single', Name='', Description='').",
            "getObservationInfo(env) returns it; to port the env, pass these specs to rlFunctionEnv.",
        ),
        (
            "info",
            "the actionInfo MATLAB reads from the neutral space: rlFiniteSetSpec(Elements=[-1.0, 0.0, 1.0], Name='', Description='').",
            "getActionInfo(env) returns it; to port the env, pass these specs to rlFunctionEnv.",
        ),
    ]

"""The bugs the export-core issue lists, one test each (whole messages; state unchanged on refusal).

Each family runs in the era that has its runtime (``require``: skipped outside it, failing inside).
"""

from __future__ import annotations

import collections
import os

import numpy as np
import pytest
from support import probe_export, raises_exactly, require
from toy_envs.lowering import CapVector

import bridge
from bridge import spaces
from bridge.errors import BridgeError, ContractError
from bridge.examples import CartPoleVector, GridWorld

Step = collections.namedtuple("Step", "obs reward terminated truncated info")


class Picky(bridge.Env):
    """Configurable faults: a float64 observation, an out-of-bounds one, a BridgeError, a namedtuple."""

    determinism = "strong"

    def __init__(self, fault: str = "", action_space: spaces.Space = None, observation_space: spaces.Space = None):
        self.fault = fault
        self.observation_space = observation_space or spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = action_space or spaces.Discrete(2)
        self.actions: list = []
        self.t = 0

    def _obs(self):
        if isinstance(self.observation_space, spaces.Discrete):
            return np.int64(-1) if self.fault == "discrete-below" else np.int64(self.observation_space.start)
        if self.fault == "float64":
            return np.zeros(2)
        if self.fault == "out-of-bounds":
            return np.full(2, 3.0, np.float32)
        return np.zeros(2, np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.actions.append(action)
        self.t += 1
        if self.fault == "bridge-error":
            raise ContractError("Picky step must not be called, got a call. Stop.")
        if self.fault == "namedtuple":
            return Step(self._obs(), 0.0, False, False, {})
        return self._obs(), 0.0, False, False, {}

    def get_state(self):
        return {"t": self.t}

    def set_state(self, state):
        self.t = state["t"]


# -- every era: the neutral core and the MATLAB facade ---------------------------------------------
def test_a_bridge_error_raised_inside_the_env_ends_the_episode():
    guard = probe_export(Picky("bridge-error"))
    guard.reset(seed=0)
    with raises_exactly(ContractError, "Picky step must not be called, got a call. Stop."):
        guard.step(0)
    with raises_exactly(
        ContractError,
        "probe env step() must come after reset() once an episode has ended, got step() after an exception at step "
        "1. Call env.reset() when terminated or truncated is True.",
    ):
        guard.step(0)


def test_a_namedtuple_step_is_named_as_a_tuple_subclass():
    guard = probe_export(Picky("namedtuple"))
    guard.reset(seed=0)
    with raises_exactly(
        ContractError,
        "Picky step() must return a 5-tuple (obs, reward, terminated, truncated, info), got a Step (a tuple "
        "subclass). Return a plain tuple: return obs, reward, terminated, truncated, info.",
    ):
        guard.step(0)


def test_a_vector_env_returning_one_reward_for_every_env_is_a_contract_error():
    class OneReward(CapVector):
        def step_envs(self, actions, active):
            obs, _, terminated, truncated, infos = super().step_envs(actions, active)
            return obs, 1.0, terminated, truncated, infos

    venv = OneReward(num_envs=3)
    venv.reset(seed=0)
    with raises_exactly(
        ContractError,
        "OneReward step() rewards must be a float64 array of shape (3,), got 1.0. Return one reward per sub-env: "
        "an array of shape (3,).",
    ):
        venv.step(np.zeros(3, np.int64))


@pytest.mark.parametrize("make", [lambda: CartPoleVector(num_envs=3), lambda: bridge.vectorize(GridWorld, 3)])
def test_every_vector_env_is_guarded_and_checks_the_whole_batch_first(make):
    venv = make()
    name = type(venv).__name__
    with raises_exactly(
        ContractError,
        f"{name} step() must come after reset(), got step() before the first reset(). Call reset() first.",
    ):
        venv.step(np.zeros(3, np.int64))
    venv.reset(seed=1)
    before = venv.episode_steps
    high = int(venv.single_action_space.n) - 1
    with raises_exactly(ContractError, f"actions[1] must lie in [0, {high}], got {high + 1}. Pick values inside nvec."):
        venv.step(np.array([0, high + 1, 0]))
    assert venv.episode_steps.tolist() == before.tolist() == [0, 0, 0]  # no sub-env moved
    venv.close()
    with raises_exactly(
        ContractError, f"{name} step() must not be called after close(), got step() on a closed env. Make a new env."
    ):
        venv.step(np.zeros(3, np.int64))


def test_a_vector_env_subclass_may_not_override_reset_or_step():
    with raises_exactly(
        BridgeError,
        "VectorEnv subclass Old must implement reset_envs(mask, seeds, options) and step_envs(actions, active), "
        "got an override of step(). Rename them: the base's reset() and step() own autoreset, checks and the guard.",
    ):

        class Old(bridge.VectorEnv):
            def step(self, actions):
                return None


def test_the_matlab_cartpole_tape_records_and_verifies_through_every_view(tmp_path, capsys):
    from bridge.cli import main

    tape = os.path.join(tmp_path, "t.npz")
    source = "bridge.adapters.matlab.examples:make_cartpole"
    assert main(["conform", source, "--record", tape, "--steps", "80"]) == 0
    assert main(["conform", source, "--verify", tape]) == 0
    table = capsys.readouterr().out
    assert "  matlab     agrees" in table and "FAILS" not in table and "DIVERGES" not in table


def test_a_view_that_fails_mid_tape_is_reported_and_the_others_still_run(tmp_path, capsys):
    from bridge.cli import main

    tape = os.path.join(tmp_path, "t.npz")
    assert main(["conform", "toy_envs.scripted:EndsOnStepTwo", "--record", tape, "--steps", "10"]) == 0
    # the same tape against an env whose step observation breaks its own space: every export
    # refuses it mid-tape, and the table still has a line for every view
    code = main(["conform", "test_export_core:_float64_liar", "--verify", tape, "--any-env"])
    lines = capsys.readouterr().out.splitlines()[-len(bridge.runtimes.RUNTIMES) - 1 :]
    refused = "ContractError: Liar step observation must have dtype float32, got dtype float64."
    assert (
        code == 1 and lines[0] == "  neutral    DIVERGES  step 0: observation expected 'float32(1,)', got 'float64(1,)'"
    )
    for line in lines[1:]:
        name, verdict = line.split()[:2]
        assert verdict == "unavailable" or line.startswith(f"  {name:<10} FAILS  at step 0: {refused}"), line


def _float64_liar() -> bridge.Env:
    from toy_envs.scripted import EndsOnStepTwo

    class Liar(EndsOnStepTwo):
        def step(self, action):
            obs, reward, terminated, truncated, info = super().step(action)
            return obs.astype(np.float64), reward, terminated, truncated, info

    return Liar()


# -- modern era: Gymnasium and SB3 ------------------------------------------------------------------
def test_gymnasium_refuses_a_float64_observation_of_a_float32_box_by_default():
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    export = to_gymnasium(Picky("float64"))
    with raises_exactly(
        ContractError,
        "Picky reset observation must have dtype float32, got dtype float64. Cast it with .astype(np.float32).",
    ):
        export.reset(seed=0)


def test_an_out_of_bounds_observation_is_reported_by_check_and_refused_with_strict():
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    report = bridge.check(Picky("out-of-bounds"), targets=["gymnasium"])
    assert "reset observation[0] must lie in [-1.0, 1.0], got 3.0." in [p.message for p in report.errors]
    lenient = to_gymnasium(Picky("out-of-bounds"))
    assert lenient.reset(seed=0)[0].tolist() == [3.0, 3.0]  # float bounds are not free: strict=True checks them
    strict = to_gymnasium(Picky("out-of-bounds"), strict=True)
    with raises_exactly(
        ContractError,
        "Picky reset observation[0] must lie in [-1.0, 1.0], got 3.0. Clip it into the bounds or widen the space "
        "(NaN is never inside).",
    ):
        strict.reset(seed=0)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.int32])
def test_a_numpy_integer_of_any_width_is_converted_exactly_never_wrapped(dtype):
    require("gymnasium")
    from bridge.adapters.gymnasium import to_gymnasium

    neutral = Picky(action_space=spaces.Discrete(200, start=100))
    export = to_gymnasium(neutral)
    export.reset(seed=0)
    export.step(dtype(100))
    assert type(neutral.actions[-1]) is np.int64 and int(neutral.actions[-1]) == 200


def test_sb3_dummy_vec_env_refuses_a_bad_action_for_env_1_before_env_0_steps():
    require("stable_baselines3")
    from bridge.adapters.sb3 import make_vec_env

    made = []

    def factory():
        made.append(Picky())
        return made[-1]

    vec = make_vec_env(factory, n_envs=2, seed=0)
    vec.reset()
    with raises_exactly(
        ContractError,
        "actions[1] must lie in [0, 1], got 5. Sample from env.action_space or clip the action into its bounds.",
    ):
        vec.step(np.array([0, 5]))
    assert [env.actions for env in made[-2:]] == [[], []]


# -- legacy era: gym 0.23 and DreamerV2 -------------------------------------------------------------
def test_gym_checks_an_action_before_any_cast():
    require("gym")
    from bridge.adapters.gym import to_gym

    neutral = Picky(action_space=spaces.Box(-2, 2, (1,), np.int32))
    export = to_gym(neutral)
    export.reset(seed=0)
    with raises_exactly(
        ContractError,
        "action[0] must lie in [-2, 2], got 4294967297. Clip it into the bounds or widen the space (NaN is never "
        "inside).",
    ):
        export.step(np.array([2**32 + 1], np.int64))  # cast first, it would reach the env as 1
    export.step(np.array([1], np.int64))  # a value the int32 space holds: cast exactly
    assert neutral.actions[-1].dtype == np.int32 and neutral.actions[-1].tolist() == [1]


def test_dreamerv2_keeps_the_interior_of_a_tiny_action_box():
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import ActionLowering

    lowering = ActionLowering(spaces.Box(0.0, 1e-6, (1,), np.float32))
    middle = np.array([5e-7], np.float32)
    assert lowering.decode(middle).tolist() == middle.tolist()  # not snapped onto a bound
    assert lowering.decode(np.array([1e-6 * (1 + 1e-7)], np.float32)).tolist() == [np.float32(1e-6)]


def test_dreamerv2_refuses_a_discrete_observation_below_its_range_instead_of_a_wrong_one_hot():
    require("dreamerv2")
    from bridge.adapters.dreamerv2 import to_dreamer_ready

    ready = to_dreamer_ready(Picky("discrete-below", observation_space=spaces.Discrete(4)))
    with raises_exactly(
        ContractError,
        "Picky reset observation must lie in [0, 3], got -1. Pick one of the 4 values from 0.",
    ):
        ready.reset(seed=0)

"""from_gym on gym 0.23.1 (legacy era): real envs (CartPole-v1, FrozenLake-v1) step as natively, the
episode-end table of docs/episode-ends.md comes back as the flags it was made from (termination
wins where gym cannot say both), and hand-written envs in each gym API style (0.21: seed() and a
bare reset, 0.22-0.25: reset(seed=) returning obs, 0.26: (obs, info) and a 5-tuple) are read right:
no ``done`` is read as the wrong kind of end."""

from __future__ import annotations

import numpy as np
import pytest
from support import raises_exactly, require
from toy_envs.scripted import EndsOnStepTwo

require("gym")

from bridge.adapters.gym import to_gym  # noqa: E402
from bridge.adapters.gym.loader import load_gym  # noqa: E402
from bridge.adapters.importers.gym import from_gym, seeds_by_reset  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.errors import SpecError  # noqa: E402
from bridge.loading import resolve  # noqa: E402

gym = load_gym()


def _equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("env_id, steps", [("CartPole-v1", 300), ("FrozenLake-v1", 200)])
def test_a_real_gym_env_steps_as_natively(env_id, steps):
    native, imported = gym.make(env_id), from_gym(env_id)
    assert _equal(native.reset(seed=4), imported.reset(seed=4)[0])
    actions = np.random.default_rng(0).integers(0, native.action_space.n, steps)
    for action in actions:
        obs, reward, done, info = native.step(int(action))
        got, got_reward, terminated, truncated, got_info = imported.step(np.int64(action))
        assert _equal(np.int64(obs) if np.ndim(obs) == 0 else obs, got) and reward == got_reward
        timed_out = info.get("TimeLimit.truncated", False)
        assert (terminated, truncated) == (done and not timed_out, done and timed_out)
        assert "TimeLimit.truncated" not in got_info
        if done:
            assert _equal(native.reset(), imported.reset()[0])


def test_cartpole_times_out_as_truncated():
    env = from_gym(gym.wrappers.TimeLimit(gym.make("CartPole-v1").unwrapped, max_episode_steps=5))
    env.reset(seed=0)
    ends = [env.step(np.int64(i % 2))[2:4] for i in range(5)]
    assert ends == [(False, False)] * 4 + [(False, True)]


CASES = {"terminated": (True, False), "truncated": (False, True), "both": (True, True)}
BACK = {"terminated": (True, False), "truncated": (False, True), "both": (True, False)}  # gym 0.23: termination wins


@pytest.mark.parametrize("case", CASES)
def test_the_episode_end_table_through_to_gym_and_back(case):
    env = from_gym(to_gym(EndsOnStepTwo(CASES[case])))
    env.reset(seed=0)
    assert env.step(np.int64(0))[2:4] == (False, False)
    _, _, terminated, truncated, info = env.step(np.int64(0))
    assert (terminated, truncated) == BACK[case] and "is_terminal" not in info


class Gym021(gym.Env):
    """gym 0.21's API: seed(), reset() -> obs, step -> 4-tuple; ends by itself after ``end_at`` steps."""

    observation_space = gym.spaces.Box(-10.0, 10.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, end_at=3, info=None):
        self.end_at, self.info = end_at, info or {}

    def seed(self, seed=None):
        self.rng = np.random.RandomState(seed)
        return [seed]

    def reset(self):
        self.t = 0
        return np.array([self.rng.uniform(-1, 1)], np.float32)

    def step(self, action):
        self.t += 1
        done = self.t >= self.end_at
        return np.array([self.t], np.float32), 1.0, done, dict(self.info) if done else {}


class Gym026(gym.Env):
    """gym 0.26's API: reset(seed=, options=) -> (obs, info), step -> 5-tuple."""

    observation_space = gym.spaces.Discrete(4, start=1)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return int(self.np_random.integers(1, 5)), {"seeded": seed}

    def step(self, action):
        self.t += 1
        return 1 + self.t % 4, 0.5, self.t == 3 and action == 1, self.t == 3 and action == 0, {}


class Gym023Bare(Gym026):
    """gym 0.22-0.25's API: reset(seed=) -> obs, step -> 4-tuple."""

    def reset(self, *, seed=None, return_info=False, options=None):
        return super().reset(seed=seed)[0]

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated or truncated, {"TimeLimit.truncated": truncated} if truncated else info


def test_gym_0_21_seeds_through_seed_and_reads_a_bare_done_as_terminated():
    env = from_gym(Gym021())
    assert not seeds_by_reset(env.env)
    first, again = env.reset(seed=7)[0], env.reset(seed=7)[0]
    assert _equal(first, again) and first[0] == np.float32(np.random.RandomState(7).uniform(-1, 1))
    assert [env.step(np.int64(0))[2:4] for _ in range(3)] == [(False, False), (False, False), (True, False)]


@pytest.mark.parametrize(
    "info, end", [({"TimeLimit.truncated": True}, (False, True)), ({"TimeLimit.truncated": False}, (True, False))]
)
def test_gym_0_21_done_with_the_time_limit_key(info, end):
    env = from_gym(Gym021(info=info))
    env.reset(seed=0)
    env.step(np.int64(0)), env.step(np.int64(0))
    assert env.step(np.int64(0))[2:] == end + ({},)


def test_gyms_own_time_limit_on_a_0_21_env_is_truncated_and_termination_on_the_cap_wins():
    env = from_gym(gym.wrappers.TimeLimit(Gym021(end_at=10), max_episode_steps=2))
    env.reset(seed=0)
    assert [env.step(np.int64(0))[2:4] for _ in range(2)] == [(False, False), (False, True)]
    env = from_gym(gym.wrappers.TimeLimit(Gym021(end_at=2), max_episode_steps=2))
    env.reset(seed=0)
    assert [env.step(np.int64(0))[2:4] for _ in range(2)] == [(False, False), (True, False)]


@pytest.mark.parametrize("cls", [Gym026, Gym023Bare])
@pytest.mark.parametrize("action, end", [(1, (True, False)), (0, (False, True))])
def test_reset_seed_apis_and_both_step_shapes(cls, action, end):
    env = from_gym(cls())
    assert seeds_by_reset(env.env) and env.observation_space == spaces.Discrete(4, start=1)
    obs, info = env.reset(seed=3)
    assert type(obs) is np.int64 and obs == np.random.default_rng(3).integers(1, 5)
    assert info == ({"seeded": 3} if cls is Gym026 else {})
    assert env.np_random is env.env.np_random
    flags = [env.step(np.int64(action))[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), end]


def test_from_gym_passes_the_check_and_the_gym_scheme_resolves():
    assert bridge.check(from_gym("CartPole-v1"), targets=["gym"]).ok
    env, built = resolve("gym:FrozenLake-v1", {"map_name": "8x8"})  # the kwargs go to gym.make
    assert built and env.observation_space == spaces.Discrete(64)
    env.close()


def test_a_non_gym_env_is_refused():
    text = (
        "from_gym env must be a gym id or gym.Env, got int. "
        "Pass e.g. from_gym('CartPole-v1') or from_gym(gym.make(...))."
    )
    with raises_exactly(SpecError, text):
        from_gym(3)

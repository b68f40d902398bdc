"""from_gymnasium on real Gymnasium envs: the round trip to_gymnasium(from_gymnasium(g)) steps
identically to g (CartPole-v1, MiniGrid with an image wrapper, a Dict env), seeding equals the
native run, snapshots keep their promise under bridge.check, render and info pass through."""

from __future__ import annotations

import numpy as np
import pytest
from support import ERA, raises_exactly, require

gymnasium = require("gymnasium")
if ERA == "modern":  # the modern tox env installs MiniGrid (extra gymnasium-envs): missing, it fails here
    import minigrid  # noqa: F401
else:
    minigrid = require("minigrid")

from minigrid.wrappers import ImgObsWrapper, RGBImgObsWrapper  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.errors import ContractError  # noqa: E402
from bridge.loading import resolve  # noqa: E402

G = gymnasium.spaces


class DictEnv(gymnasium.Env):
    """A Dict observation (float64 Box, Discrete with start, image) driven by the env's np_random."""

    observation_space = G.Dict(
        [
            ("pos", G.Box(-1.0, 1.0, (2,), np.float64)),
            ("level", G.Discrete(3)),
            ("view", G.Box(0, 255, (3, 3, 1), np.uint8)),
        ]
    )
    action_space = G.Discrete(2)

    def _obs(self):
        r = self.np_random
        return {
            "pos": r.uniform(-1, 1, 2),
            "level": np.int64(r.integers(0, 3)),
            "view": r.integers(0, 256, (3, 3, 1), dtype=np.uint8),
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {"t": 0}

    def step(self, action):
        self.t += 1
        return self._obs(), float(action) - 0.5, bool(self.np_random.random() < 0.1), self.t >= 15, {"t": self.t}


def _equal(a, b) -> bool:
    """Bit-identical nested values, dtype and shape included (dict order too)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (bool, float, int, str)) and not isinstance(a, np.generic):
        return type(a) is type(b) and a == b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _same_run(native, other, steps=60, seed=3):
    """Both envs reset with ``seed`` and step the same actions (drawn from one action space)."""
    space = native.action_space
    space.seed(seed)
    assert _equal(native.reset(seed=seed), other.reset(seed=seed))
    for _ in range(steps):
        action = space.sample()
        a, b = native.step(action), other.step(action)
        assert _equal(a[0], b[0]) and a[1:4] == b[1:4] and type(b[1]) is float and _equal(a[4], b[4])
        if a[2] or a[3]:
            assert _equal(native.reset(), other.reset())


def test_cartpole_round_trip_steps_identically():
    _same_run(gymnasium.make("CartPole-v1"), bridge.to_gymnasium(bridge.from_gymnasium("CartPole-v1")), steps=200)


def test_minigrid_with_an_image_wrapper_round_trip_steps_identically():
    def make():
        return ImgObsWrapper(RGBImgObsWrapper(gymnasium.make("MiniGrid-Empty-5x5-v0", max_steps=20), tile_size=4))

    imported = bridge.from_gymnasium(make())
    assert imported.observation_space == spaces.Image(20, 20, 3)
    _same_run(make(), bridge.to_gymnasium(imported, image_layout="HWC"))


def test_minigrid_dict_observation_with_drop_keys():
    env = bridge.from_gymnasium("MiniGrid-Empty-5x5-v0", drop_keys=["mission"])
    assert list(env.observation_space.keys()) == ["direction", "image"]
    obs, _ = env.reset(seed=1)
    native, _ = gymnasium.make("MiniGrid-Empty-5x5-v0").reset(seed=1)
    assert list(obs) == ["direction", "image"] and _equal(obs["image"], native["image"])


def test_dict_env_round_trip_steps_identically():
    exported = bridge.to_gymnasium(bridge.from_gymnasium(DictEnv()), image_layout="HWC")
    assert list(exported.observation_space.spaces) == ["pos", "level", "view"]
    _same_run(DictEnv(), exported, steps=80)


def test_the_neutral_tape_equals_the_native_run_and_shares_its_generator():
    _same_run(gymnasium.make("CartPole-v1"), bridge.from_gymnasium("CartPole-v1"), steps=100)
    env = bridge.from_gymnasium("CartPole-v1")
    env.reset(seed=5)
    assert env.np_random is env.env.unwrapped.np_random and env.np_random_seed == 5


def test_weak_by_default_and_strong_with_a_deepcopy_snapshot_pass_the_check():
    assert bridge.check(bridge.from_gymnasium("CartPole-v1"), targets=[]).ok
    report = bridge.check(
        lambda: bridge.from_gymnasium("CartPole-v1", determinism="strong", snapshot="deepcopy"), targets=[]
    )
    assert report.ok and not report.problems  # no note: the fresh-instance replay ran
    env = bridge.from_gymnasium(DictEnv(), determinism="strong", snapshot="deepcopy")
    env.reset(seed=0)
    snap = env.clone_state()
    first = [env.step(1) for _ in range(5)]
    env.restore_state(snap)
    assert all(_equal(a, b) for a, b in zip(first, [env.step(1) for _ in range(5)]))


def test_strong_with_hooks_that_miss_state_is_caught_by_the_check():
    def get_state(env):
        return {"x": env.unwrapped.state[0].item()}  # not the whole state: the check must see it

    def set_state(env, state):
        env.unwrapped.state = np.array([state["x"], 0.0, 0.0, 0.0])

    env = bridge.from_gymnasium("CartPole-v1", determinism="strong", snapshot=(get_state, set_state))
    report = bridge.check(env, targets=[])
    assert not report.ok and any("bit-identical" in p.message for p in report.problems)


def test_render_passes_through():
    env = bridge.from_gymnasium("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert env.render_mode == "rgb_array" and frame.shape == (400, 600, 3) and frame.dtype == np.uint8


class ReservedInfo(DictEnv):
    def step(self, action):
        out = super().step(action)
        return out[:4] + ({"terminal_observation": 1},)


def test_info_passes_through_and_a_reserved_key_is_refused():
    env = bridge.from_gymnasium(DictEnv())
    assert env.reset(seed=0)[1] == {"t": 0} and env.step(0)[4] == {"t": 1}
    env = bridge.from_gymnasium(ReservedInfo())
    env.reset(seed=0)
    text = (
        "from_gymnasium env's step() info must not use the keys ['TimeLimit.truncated', 'is_terminal', "
        "'terminal_observation'], got the keys ['terminal_observation']. Rename the key in the env (or drop the "
        "wrapper that writes it): the exports write it themselves."
    )
    with raises_exactly(ContractError, text):
        env.step(0)


@pytest.mark.parametrize("source", ["gymnasium:CartPole-v1", "gymnasium:minigrid:MiniGrid-Empty-5x5-v0"])
def test_the_resolver_takes_the_gymnasium_scheme_with_make_kwargs(source):
    env, built = resolve(source, {"max_episode_steps": 7} if "CartPole" in source else {"drop_keys": ["mission"]})
    assert built and type(env).__name__ == "ForeignEnv"
    env.close()


def test_bridge_from_gymnasium_is_a_lazy_name():
    assert bridge.from_gymnasium is bridge.adapters.importers.gymnasium.from_gymnasium

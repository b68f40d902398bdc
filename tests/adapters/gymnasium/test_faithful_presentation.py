"""The Gymnasium export presents what Gymnasium's own env would: Tuple stays Tuple, a nested Dict
stays nested (the one-level flattening SB3's MultiInputPolicy needs is the SB3 export's), an imported
env keeps its ``spec`` on the round trip, and reports name the foreign env, with no advice about its
own declarations. The exact upstream calls, on seeded runs."""

from __future__ import annotations

import warnings

import numpy as np
from support import require

gymnasium = require("gymnasium")
require("stable_baselines3")

from bridge.adapters.gymnasium.export import to_gymnasium  # noqa: E402
from bridge.adapters.importers.gymnasium import from_gymnasium  # noqa: E402
from bridge.adapters.sb3.export import to_sb3  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402

G = gymnasium.spaces


def test_blackjack_round_trip_observes_what_gymnasiums_own_env_does():
    ours, theirs = to_gymnasium(from_gymnasium("Blackjack-v1")), gymnasium.make("Blackjack-v1")
    assert (
        ours.observation_space == theirs.observation_space == G.Tuple((G.Discrete(32), G.Discrete(11), G.Discrete(2)))
    )
    assert ours.reset(seed=3)[0] == theirs.reset(seed=3)[0] == (7, 10, 0)
    for action in (1, 0, 1, 1, 0):
        a, b = ours.step(action), theirs.step(action)
        assert type(a[0]) is tuple and a[:4] == b[:4]
        if a[2] or a[3]:
            assert ours.reset()[0] == theirs.reset()[0]


class Nested(bridge.Env):
    observation_space = spaces.Dict(
        {
            "arm": spaces.Dict({"angle": spaces.Box(-1.0, 1.0, (2,), np.float32), "grip": spaces.Discrete(2)}),
            "goal": spaces.Tuple([spaces.Discrete(3), spaces.Box(0.0, 1.0, (1,), np.float32)]),
        }
    )
    action_space = spaces.Discrete(2)

    def _obs(self):
        r = self.np_random
        return {
            "arm": {"angle": r.uniform(-1, 1, 2).astype(np.float32), "grip": np.int64(r.integers(0, 2))},
            "goal": (np.int64(r.integers(0, 3)), r.uniform(0, 1, 1).astype(np.float32)),
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action):
        return self._obs(), 0.0, False, False, {}


def test_a_nested_dict_stays_nested_and_sb3_gets_one_level():
    export = to_gymnasium(Nested())
    assert export.observation_space == G.Dict(
        {
            "arm": G.Dict({"angle": G.Box(-1.0, 1.0, (2,), np.float32), "grip": G.Discrete(2)}),
            "goal": G.Tuple((G.Discrete(3), G.Box(0.0, 1.0, (1,), np.float32))),
        }
    )
    obs, _ = export.reset(seed=0)
    assert export.observation_space.contains(obs) and type(obs["goal"]) is tuple
    neutral, _ = Nested().reset(seed=0)
    np.testing.assert_array_equal(obs["arm"]["angle"], neutral["arm"]["angle"])
    assert list(to_sb3(Nested()).observation_space.keys()) == ["arm/angle", "arm/grip", "goal/0", "goal/1"]


def test_the_round_trip_keeps_the_spec_and_passes_gymnasiums_check_env():
    export = to_gymnasium(from_gymnasium("CartPole-v1"))
    assert (export.spec.id, export.spec.max_episode_steps) == ("CartPole-v1", 500)
    again = gymnasium.make(export.spec)  # rebuilds the round trip, as check_env does for render modes
    assert again.unwrapped.neutral.env.spec.id == "CartPole-v1"
    assert again.reset(seed=5)[0].tolist() == gymnasium.make("CartPole-v1").reset(seed=5)[0].tolist()
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(export, skip_render_check=True)
    assert not any("not having a spec" in str(w.message) for w in caught)


def test_the_report_names_the_foreign_env_and_leaves_out_its_own_declarations():
    report = bridge.check(from_gymnasium("CartPole-v1"), targets=["gymnasium"])
    assert report.env_name == "CartPole-v1" and report.ok
    problems = [p for p in report.problems if p.target == "gymnasium"]
    assert [(p.severity, p.message, p.fix) for p in problems] == [
        (
            "info",
            "Gymnasium's check_env gives CartPole-v1 itself the same 2 warning(s) (its own declarations): left out "
            "here.",
            "Nothing to do: they are about the env as its authors declared it, not about the export.",
        )
    ]

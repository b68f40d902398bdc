"""from_dm_env on the real case, dm_control's suite (cartpole swingup): specs, seeding through
task_kwargs random=, the truncated end of its time limit, and the CLI source dm_control:DOMAIN-TASK."""

from __future__ import annotations

import numpy as np
from support import raises_exactly, require

require("dm_env")
suite = require("dm_control.suite")

from bridge.adapters.dm_env.importer import from_dm_env  # noqa: E402

import bridge  # noqa: E402
from bridge import spaces  # noqa: E402
from bridge.cli import main  # noqa: E402
from bridge.errors import SpecError  # noqa: E402
from bridge.loading import load_env  # noqa: E402


def _cartpole(seed):
    return suite.load("cartpole", "swingup", task_kwargs={"random": seed})


def test_cartpole_swingup_spaces_and_a_seeded_reset_is_the_native_run():
    env = from_dm_env(_cartpole)
    assert env.observation_space == spaces.Dict(
        position=spaces.Box(-np.inf, np.inf, (3,), np.float64), velocity=spaces.Box(-np.inf, np.inf, (2,), np.float64)
    )
    assert env.action_space == spaces.Box(-1.0, 1.0, (1,), np.float64)
    native = _cartpole(11)
    step = native.reset()
    obs, _ = env.reset(seed=11)
    for i in range(30):
        assert list(obs) == list(step.observation)
        assert all(np.array_equal(obs[k], step.observation[k]) for k in obs)
        action = np.array([np.sin(i)])
        step = native.step(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        assert (reward, terminated, truncated) == (step.reward, False, False)
    env.close()


def test_the_time_limit_of_the_suite_is_a_truncation():
    env = from_dm_env(lambda seed: suite.load("cartpole", "balance", task_kwargs={"random": seed, "time_limit": 0.05}))
    env.reset(seed=0)
    ends = [env.step(np.zeros(1))[2:4] for _ in range(5)]
    assert ends == [(False, False)] * 4 + [(False, True)]  # LAST with discount 1


def test_the_cli_source_names_a_suite_task_and_checks_it(capsys):
    env = load_env("dm_control:cartpole-swingup")
    assert isinstance(env.action_space, spaces.Box)
    env.close()
    assert main(["check", "dm_control:cartpole-swingup", "--target", "core", "--target", "dm_env"]) == 0
    assert "dm_env     pass" in capsys.readouterr().out
    with raises_exactly(
        SpecError,
        "dm_control source must name a suite task as DOMAIN-TASK, got 'cartpole-fly'. "
        "Pick a pair of dm_control.suite.ALL_TASKS, e.g. dm_control:cartpole-swingup.",
    ):
        load_env("dm_control:cartpole-fly")


def test_from_dm_env_is_a_lazy_name_of_bridge():
    assert bridge.from_dm_env is from_dm_env


def test_the_episode_bound_of_dm_controls_time_limit_reaches_every_consumer():
    """DreamerV2's training fits its prefill to it (tests/adapters/dreamerv2/test_dreamerv2_episodes.py);
    a host passes it on."""
    from bridge.episodes import episode_bound
    from bridge.loading import resolve

    env = load_env("dm_control:cartpole-swingup")
    assert env.max_episode_steps == 1000 and episode_bound(bridge.TimeLimit(env, 1500)) == 1000
    assert episode_bound(bridge.TimeLimit(env, 20)) == 20
    instance, built = resolve(_cartpole(0))  # a dm_env instance is imported by the one resolver
    assert built is False and episode_bound(instance) == 1000
    remote = bridge.remote("dm_control:cartpole-swingup", timeout=120)
    try:
        assert remote.max_episode_steps == 1000
    finally:
        remote.close()


def test_the_report_names_the_suite_task_and_leaves_out_its_own_unbounded_specs():
    report = bridge.check(load_env("dm_control:cartpole-swingup"), targets=["gymnasium"])
    assert report.env_name == "dm_control:cartpole-swingup" and report.ok
    assert [(p.severity, p.message, p.fix) for p in report.problems] == [
        (
            "info",
            "dm_control:cartpole-swingup declares unbounded observation specs (dm_env's own): check_env's 2 "
            "warning(s) on them left out.",
            "Nothing to do: they are about the env as its authors declared it, not about the export.",
        )
    ]

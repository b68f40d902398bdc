"""Which of SB3 2.9.0's own test files run against the exports, and every deselection with its reason
(docs/upstream-tests.md shows the same table)."""

from __future__ import annotations

VERSION = "2.9.0"
FILES = (
    "test_vec_envs.py",
    "test_vec_monitor.py",
    "test_vec_normalize.py",
    "test_env_checker.py",
    "test_spaces.py",
    "test_dict_env.py",
    "test_her.py",
)

BUDGET = "budget: trains a model or spawns worker processes (seconds each; CI must stay < 10 min)"
# -k: whole families left out for the CI budget (their names hold the algorithm or the worker kind)
# SB3's string-env tests (test_spaces.py: ``model_class("MlpPolicy", "CartPole-v1")`` and the like,
# through gymnasium.make(id, render_mode="rgb_array") and make_vec_env(id)) always run: ~25 s
STRING_ENV_TESTS = "test_action_spaces or test_discrete_obs_space"
BUDGET_KEYWORDS = (
    "(not Subproc and not subproc and not multiprocessing and not SAC and not TD3 and not DDPG "
    f"and not PPO and not A2C and not DQN and not performance) or {STRING_ENV_TESTS}"
)

# node id prefix -> why it is deselected ("by design" rows name the doc that says so)
DESELECTED = {
    "test_vec_envs.py::test_vec_env_is_wrapped": BUDGET,
    "test_vec_normalize.py::test_her_normalization": BUDGET,
    "test_vec_envs.py::test_framestack_vecenv": "by design: the test steps before reset(), the guard refuses it (docs/bad-input.md)",
    "test_vec_envs.py::test_vecenv_custom_calls": "gap: SB3's DummyVecEnv.set_attr sets the attribute on the export object "
    "(setattr), not on the user env that get_attr and env_method reach",
    "test_vec_monitor.py::test_vec_monitor_info_keywords": "by design: BitFlippingEnv's goals are MultiBinary; "
    "goal exports take Box goals (docs/gymnasium-sb3.md, goal envs)",
    "test_vec_normalize.py::test_obs_rms_vec_normalize": "by design: the test env returns int64 observations for a float32 "
    "Box, the guard refuses them (docs/bad-input.md)",
    "test_env_checker.py::test_check_env_graph_space": "by design: Graph has no neutral space (docs/gymnasium-sb3.md)",
    "test_env_checker.py::test_check_env_sequence_tuple": "by design: Sequence has no neutral space (docs/gymnasium-sb3.md)",
    "test_env_checker.py::test_check_env_oneof": "by design: OneOf has no neutral space (docs/gymnasium-sb3.md)",
    "test_dict_env.py::test_policy_hint": "by design: BitFlippingEnv's goals are MultiBinary; goal exports take Box goals",
    "test_her.py::test_goal_selection_strategy": "by design: BitFlippingEnv's goals are MultiBinary; goal exports take Box goals",
    "test_her.py::test_save_load_replay_buffer": "by design: BitFlippingEnv's goals are MultiBinary; goal exports take Box goals",
    "test_her.py::test_full_replay_buffer": "by design: BitFlippingEnv's goals are MultiBinary; goal exports take Box goals",
    "test_her.py::test_truncate_last_trajectory": "by design: BitFlippingEnv's goals are MultiBinary (and its float64 "
    "random actions round in float32: refused, docs/gymnasium-sb3.md, float actions)",
}

# the batched path (ENVBRIDGE_SB3_PATH=batched: the tests' DummyVecEnv is envbridge's batched VecEnv)
DESELECTED_BATCHED = {
    "test_dict_env.py::test_dict_nested": "by design: the batched VecEnv is the SB3 export, which flattens a nested "
    "Dict to '/'-joined keys for MultiInputPolicy instead of refusing it (docs/gymnasium-sb3.md, lowering table)",
    "test_vec_envs.py::test_vec_seeding": "budget: the test compares its class to the module's DummyVecEnv (here the "
    "batched stand-in) and so runs SubprocVecEnv under every start method",
    "test_vec_monitor.py::test_vec_monitor_warn": "by design: the batched VecEnv holds no SB3 Monitor (it reports "
    "episodes itself), so VecMonitor finds no double wrapping to warn about",
}

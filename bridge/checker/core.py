"""The "core" check profile: the neutral API contract every export relies on."""

from __future__ import annotations

import copy
from typing import Any, List, Tuple

import numpy as np

from bridge.checker.determinism import ACTIONS, check_seeding, check_snapshots
from bridge.checker.report import Report
from bridge.checker.stepping import T, _call, _check_info, _equal, _run_tape, _Stop
from bridge.env import DETERMINISM, Env
from bridge.spaces import Dict, Space, _describe_value


def _check_spaces(env: Env, report: Report) -> None:
    for name in ("observation_space", "action_space"):
        space = getattr(env, name, None)
        if not isinstance(space, Space):
            report.add(
                T,
                "error",
                f"env.{name}",
                "be a bridge.spaces.Space",
                type(space).__name__,
                "Build it from bridge.spaces",
                "spaces",
            )
            raise _Stop
    modes = env.metadata.get("render_modes", []) if isinstance(env.metadata, dict) else None
    if modes is None:
        report.add(
            T,
            "error",
            "env.metadata",
            "be a dict with 'render_modes'",
            type(env.metadata).__name__,
            "Set metadata = {'render_modes': [...], 'render_fps': N}",
            "metadata",
        )
    elif env.render_mode is not None and env.render_mode not in modes:
        report.add(
            T,
            "error",
            "env.render_mode",
            f"be None or one of metadata['render_modes'] {modes}",
            env.render_mode,
            "List the mode in metadata['render_modes']",
            "metadata",
        )
    if env.determinism not in DETERMINISM:
        report.add(
            T,
            "error",
            "env.determinism",
            f"be one of {DETERMINISM}",
            env.determinism,
            "Declare the snapshot contract",
            "determinism",
        )


def _check_obs(report: Report, space: Space, obs: Any, where: str) -> None:
    found = space.mismatch(obs, where)
    if found is not None:
        subject, expectation, actual, fix = found
        report.add(T, "error", subject, expectation, actual, fix, "observation")


def _check_reset(env: Env, report: Report, seed: int) -> Tuple[Any, dict]:
    out = _call(report, "env.reset(seed=...)", env.reset, seed=seed)
    if not isinstance(out, tuple) or len(out) != 2:
        report.add(
            T,
            "error",
            "env.reset()",
            "return a tuple (observation, info)",
            _describe_value(out),
            "Return obs, info",
            "reset",
        )
        raise _Stop
    _check_obs(report, env.observation_space, out[0], "reset observation")
    _check_info(report, out[1], "reset info")
    return out


def _check_aliasing(env: Env, report: Report, seed: int, actions: List[Any]) -> None:
    obs, _ = env.reset(seed=seed)
    kept = [(obs, copy.deepcopy(obs))]
    for action in actions[:20]:
        obs, _, terminated, truncated, _ = env.step(action)
        kept.append((obs, copy.deepcopy(obs)))
        if terminated or truncated:
            obs, _ = env.reset()
            kept.append((obs, copy.deepcopy(obs)))
    for i, (returned, snapshot) in enumerate(kept):
        if not _equal(returned, snapshot):
            report.add(
                T,
                "error",
                f"observation {i}",
                "stay unchanged after later steps",
                "it was mutated in place",
                "Return a copy (e.g. self.pos.copy()), not an internal buffer",
                "aliasing",
            )
            return


def _check_goal_env(env: Env, report: Report, seed: int, actions: List[Any]) -> None:
    space = env.observation_space
    if not (isinstance(space, Dict) and {"achieved_goal", "desired_goal"} <= set(space.keys())):
        return
    try:  # a wrapper may override it; else the innermost env's (wrappers do not forward)
        compute = env.get_wrapper_attr("compute_reward")
    except AttributeError:
        compute = None
    if compute is None:
        report.add(
            T,
            "warning",
            "a goal env",
            "define compute_reward(achieved_goal, desired_goal, info)",
            "none",
            "Add it so HER can relabel goals",
            "goal",
        )
        return
    env.reset(seed=seed)
    batch_a, batch_d, rewards, infos = [], [], [], []
    for action in actions[:4]:
        obs, reward, terminated, truncated, info = env.step(action)
        single = _call(report, "compute_reward(one goal)", compute, obs["achieved_goal"], obs["desired_goal"], info)
        if not np.isclose(float(single), reward):
            report.add(
                T,
                "error",
                "compute_reward(achieved_goal, desired_goal, info)",
                f"equal the step reward {reward!r}",
                float(single),
                "Compute the step reward with compute_reward",
                "goal",
            )
            return
        batch_a.append(obs["achieved_goal"])
        batch_d.append(obs["desired_goal"])
        rewards.append(reward)
        infos.append(info)
        if terminated or truncated:
            env.reset()
    batched = np.asarray(
        _call(
            report, "compute_reward(a batch of goals)", compute, np.stack(batch_a), np.stack(batch_d), np.array(infos)
        )
    )
    if batched.shape != (len(rewards),) or not np.allclose(batched, rewards):
        report.add(
            T,
            "error",
            "compute_reward on a batch",
            f"return shape ({len(rewards)},) equal to the step rewards {rewards}",
            _describe_value(batched),
            "Reduce over the last axis only (axis=-1)",
            "goal",
        )


def core_profile(env: Env, report: Report, seed: int) -> None:
    """Run every core check on ``env``; stop early only when later checks cannot mean anything."""
    try:
        _check_spaces(env, report)
        _check_reset(env, report, seed)
        rng = np.random.default_rng(seed)
        actions = [env.action_space.sample(rng) for _ in range(ACTIONS)]
        _run_tape(env, report, actions[:1], set())
        if report.for_target(T):
            return  # the API shape is wrong; the behavioural checks would only repeat it
        check_seeding(env, report, seed, actions)
        _check_aliasing(env, report, seed, actions)
        check_snapshots(env, report, seed, actions)
        _check_goal_env(env, report, seed, actions)
    except _Stop:
        pass
    except Exception as e:  # a user method misbehaving in a way no check anticipated
        report.add(
            T,
            "error",
            "the env",
            "run the core checks without raising",
            f"{type(e).__name__}: {e}",
            "Fix the exception in the env",
            "raises",
        )

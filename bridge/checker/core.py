"""The "core" check profile: the neutral API contract every export relies on."""

from __future__ import annotations

import copy
import math
from typing import Any, List, Optional, Tuple

import numpy as np

from bridge import snapshot as _snapshot
from bridge.checker.report import Report
from bridge.env import DETERMINISM, Env
from bridge.spaces import Dict, Space, _describe_value

TAPE_LENGTH = 200
T = "core"


def _equal(a: Any, b: Any) -> bool:
    """Bit-identical comparison of nested observations (dtype and shape included)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _kind(value: Any) -> str:
    """Type and value, the same text under numpy 1.19 and 2.x."""
    if isinstance(value, np.generic):
        return f"numpy {value.dtype.name} {value.item()!r}"
    return f"{type(value).__name__} {value!r}"


class _Stop(Exception):
    """Raised inside the profile when a failure makes the remaining checks meaningless."""


def _call(report: Report, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # user code: report, never crash the checker
        report.add(
            T,
            "error",
            what,
            "run without raising",
            f"{type(e).__name__}: {e}",
            "Fix the exception in the env",
            "raises",
        )
        raise _Stop from e


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


def _check_info(report: Report, info: Any, where: str) -> None:
    if not isinstance(info, dict):
        report.add(
            T, "error", where, "be a dict", type(info).__name__, "Return {} when there is nothing to report", "info"
        )
    elif "episode" in info:
        report.add(
            T,
            "error",
            where,
            "not use the key 'episode' (reserved for SB3's Monitor)",
            sorted(info),
            "Rename the key",
            "info",
        )


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


def _check_step_output(env: Env, report: Report, out: Any, seen: set) -> Optional[tuple]:
    if not isinstance(out, tuple) or len(out) != 5:
        length = len(out) if isinstance(out, tuple) else type(out).__name__
        report.add(
            T,
            "error",
            "env.step()",
            "return a 5-tuple (obs, reward, terminated, truncated, info)",
            length,
            "Split done into terminated and truncated",
            "step",
        )
        raise _Stop
    obs, reward, terminated, truncated, info = out

    def once(key: str, *args: Any) -> None:
        if key not in seen:
            seen.add(key)
            report.add(T, "error", *args)

    found = env.observation_space.mismatch(obs, "step observation")
    if found is not None:
        once("obs", found[0], found[1], found[2], found[3], "observation")
    if isinstance(reward, np.generic):
        once(
            "reward",
            "step reward",
            "be a Python float (a numpy scalar is a defect)",
            _kind(reward),
            "Return float(reward)",
            "reward",
        )
    elif type(reward) is not float:
        once("reward", "step reward", "be a Python float", _kind(reward), "Return float(reward)", "reward")
    elif not math.isfinite(reward):
        once("reward", "step reward", "be finite", reward, "Guard the reward computation against NaN and inf", "reward")
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if type(flag) is not bool:
            once(name, f"step {name}", "be a Python bool", _kind(flag), f"Return bool({name})", "flags")
    if not isinstance(info, dict) or "episode" in info:
        if "info" not in seen:
            seen.add("info")
            _check_info(report, info, "step info")
    return out


def _run_tape(env: Env, report: Report, actions: List[Any], seen: set) -> List[tuple]:
    """Step through ``actions`` (resetting after episode ends); return the stream."""
    stream = []
    for action in actions:
        out = _check_step_output(env, report, _call(report, "env.step(action)", env.step, action), seen)
        obs, reward, terminated, truncated, _ = out
        stream.append((copy.deepcopy(obs), reward, terminated, truncated))
        if terminated or truncated:
            obs, _ = _call(report, "env.reset()", env.reset)
            stream.append(("reset", copy.deepcopy(obs)))
    return stream


def _first_difference(a: List[tuple], b: List[tuple]) -> Optional[int]:
    for i, (x, y) in enumerate(zip(a, b)):
        if not _equal(x, y):
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def _check_reproducible(env: Env, report: Report, seed: int, actions: List[Any]) -> None:
    seen: set = set()
    first = [("reset", copy.deepcopy(env.reset(seed=seed)[0]))] + _run_tape(env, report, actions[:20], seen)
    second = [("reset", copy.deepcopy(env.reset(seed=seed)[0]))] + _run_tape(env, report, actions[:20], seen)
    at = _first_difference(first, second)
    if at is not None:
        report.add(
            T,
            "error",
            "reset(seed=s)",
            "reproduce the same trajectory",
            f"a difference at entry {at}",
            "Draw all randomness from self.np_random after super().reset(seed=seed)",
            "seeding",
        )


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


def _check_snapshots(env: Env, report: Report, seed: int, actions: List[Any]) -> None:
    if env.determinism == "none":
        return
    env.reset(seed=seed)
    for action in actions[:5]:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    snap = _call(report, "env.clone_state()", env.clone_state)
    try:
        _snapshot.from_json(_snapshot.to_json(snap))
    except Exception as e:
        report.add(
            T,
            "error",
            "clone_state()",
            "be plain data (dict, list, ndarray, scalars)",
            f"{type(e).__name__}: {e}",
            "Return plain data from get_state()",
            "snapshot",
        )
        return
    state_before = copy.deepcopy(snap["state"] if "state" in snap else snap)
    seen: set = set()
    original = _run_tape(env, report, actions, seen)
    _call(report, "env.restore_state(snapshot)", env.restore_state, snap)
    if env.determinism == "weak":
        after = env.clone_state()
        if not _equal(_snapshot.to_json(after.get("state")), _snapshot.to_json(state_before)):
            report.add(
                T,
                "error",
                "restore_state()",
                "bring back the simulation state (determinism 'weak')",
                "get_state() differs after restore",
                "Make set_state() the inverse of get_state()",
                "determinism",
            )
        return
    replay = _run_tape(env, report, actions, seen)
    at = _first_difference(original, replay)
    if at is not None:
        report.add(
            T,
            "error",
            f"replay after restore_state (determinism 'strong', {TAPE_LENGTH}-action tape)",
            "be bit-identical",
            f"a difference at entry {at}",
            "Put every simulation field in get_state(), or declare determinism = 'weak'",
            "determinism",
        )


def _check_goal_env(env: Env, report: Report, seed: int, actions: List[Any]) -> None:
    space = env.observation_space
    if not (isinstance(space, Dict) and {"achieved_goal", "desired_goal"} <= set(space.keys())):
        return
    compute = getattr(env, "compute_reward", None)
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
        actions = [env.action_space.sample(rng) for _ in range(TAPE_LENGTH)]
        _run_tape(env, report, actions[:1], set())
        if report.for_target(T):
            return  # the API shape is wrong; the behavioural checks would only repeat it
        _check_reproducible(env, report, seed, actions)
        _check_aliasing(env, report, seed, actions)
        _check_snapshots(env, report, seed, actions)
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

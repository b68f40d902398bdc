"""``check``: DreamerV2's pre-flight gate (its environment guide's steps), run without training.

Builds one chain from DreamerV2's own classes, inspects ``obs_space`` / ``act_space``, checks the
reset and one valid step against them, that a time-out is ``is_last`` and not ``is_terminal``, the
one-hot gate (a valid one-hot accepted, ``[0.5, 0.5, 0, ...]`` refused with DreamerV2's
"Invalid one-hot action") or, for continuous actions, that -1, 0 and 1 land on the native bounds.
"""

from __future__ import annotations

from typing import Any, Dict, Sequence

import numpy as np
from bridge.adapters._shared.profile import announce_roundings
from bridge.adapters.dreamerv2.export import DreamerReadyEnv, wrap_chain
from bridge.adapters.dreamerv2.loader import load_dreamerv2
from bridge.adapters.dreamerv2.lowering import RESERVED_KEYS
from bridge.adapters.dreamerv2.quiet import built_quietly

from bridge.checker.report import Report
from bridge.env import Env, TimeLimit, Wrapper
from bridge.errors import BridgeError, ContractError

__all__ = ["check", "key_regex"]

T = "dreamerv2"
_FLAGS = {
    "reward": (float, np.float32),
    "is_first": (bool, np.bool_),
    "is_last": (bool, np.bool_),
    "is_terminal": (bool, np.bool_),
}


class _Stop(Exception):
    """A failure that makes the remaining checks meaningless."""


class _LastAction(Wrapper):
    """Keeps the last action that reached the neutral env (what the chain's mapping produced)."""

    last_action: Any = None

    def step(self, action: Any) -> Any:
        self.last_action = action
        return self.env.step(action)


def key_regex(keys: Sequence[str]) -> str:
    """An exact regex for ``keys`` (``'^(a|b)$'``); ``'^$'`` (matches no real key) when empty."""
    import re

    return "^(" + "|".join(re.escape(k) for k in keys) + ")$" if keys else "^$"


def _add(report: Report, subject: str, expectation: str, actual: Any, fix: str, check: str) -> None:
    report.add(T, "error", subject, expectation, actual, fix, check)


def _quiet(fn: Any, *args: Any) -> Any:
    """DreamerV2 prints on construction (ResizeImage, Encoder); keep the report readable."""
    return built_quietly(fn, *args)


def _profile(env: Env, report: Report, seed: int, options: Dict[str, Any]) -> None:
    # the export's value options; the chain's own (parallel, time_limit, seed, timeout) play no part here
    options = {k: v for k, v in options.items() if k not in ("parallel", "time_limit", "seed", "timeout")}
    size = tuple(options.get("size", (64, 64)))
    try:
        ready = DreamerReadyEnv(_LastAction(env), **options)
    except BridgeError as e:
        report.add_exception(T, e, "the DreamerV2 export", "See the message", "lowering")
        return
    announce_roundings(
        report,
        T,
        ready.observation_lowering.roundings,
        "DreamerV2 computes in float32 and resizes images itself",
        "to_dreamerv2(env, float64_as_float32=False) refuses float64 instead",
    )
    try:
        chain = _quiet(wrap_chain, ready, size, 0)
        ready.seed(seed)
        _check_spaces(chain, ready, report)
        obs = _check_reset(chain, report)
        _check_step(chain, ready, report, obs)
        _check_timeouts(env, ready, report, seed, options)
        if ready.action_lowering.discrete:
            _check_one_hot(chain, ready, report)
        else:
            _check_bounds(chain, ready, report)
    except _Stop:
        return
    except BridgeError as e:  # the export refused what the env did: the env's own defect
        report.add_exception(T, e, "the DreamerV2 export", "Fix the env", "export")
    except Exception as e:  # user code or DreamerV2 raised: report, never crash the checker
        _add(
            report,
            "the DreamerV2 chain",
            "run without raising",
            f"{type(e).__name__}: {e}",
            "Fix the exception (see DreamerV2's environment guide)",
            "raises",
        )


def _check_spaces(chain: Any, ready: DreamerReadyEnv, report: Report) -> None:
    obs_space, act_space = chain.obs_space, chain.act_space
    for leaf in ready.observation_lowering.leaves:
        space = obs_space.get(leaf.key)
        shape = tuple(getattr(space, "shape", ()) or ())
        want = ("uint8", 3) if leaf.kind == "image" else ("float32", 1)
        bounded = space is not None and (
            bool(np.all(space.low == 0) and np.all(space.high == 255))
            if leaf.kind == "image"
            else bool(np.all(space.low <= space.high))
        )
        if space is None or (str(space.dtype), len(shape)) != want or not bounded:
            _add(
                report,
                f"obs_space[{leaf.key!r}]",
                f"be {want[1]}-D {want[0]}" + (" in [0, 255]" if leaf.kind == "image" else " with low <= high"),
                repr(space),
                "Report this lowering bug",
                "obs_space",
            )
    for key, (_, dtype) in _FLAGS.items():
        space = obs_space.get(key)
        if space is None or tuple(space.shape) != () or space.dtype != dtype:
            _add(
                report,
                f"obs_space[{key!r}]",
                f"be a scalar {np.dtype(dtype).name} Box",
                repr(space),
                "Do not declare reserved keys",
                "obs_space",
            )
    encoder = _quiet(
        load_dreamerv2().common.Encoder,
        {k: tuple(v.shape) for k, v in obs_space.items()},
        key_regex(ready.image_keys),
        key_regex(ready.vector_keys),
    )
    missing = [k for k in ready.image_keys + ready.vector_keys if k not in encoder.cnn_keys + encoder.mlp_keys]
    if missing:
        _add(
            report,
            "DreamerV2's encoder inputs",
            "include every observation key",
            f"missing {missing}",
            "Report this lowering bug",
            "encoder",
        )
    if list(act_space) != ["action"]:
        _add(
            report,
            "act_space",
            "have the single principal key 'action'",
            list(act_space),
            "Use Dict(action=...) or a plain action space",
            "act_space",
        )
        raise _Stop
    space = act_space["action"]
    if ready.action_lowering.discrete:
        ok = (
            space.dtype == np.float32
            and space.shape == (ready.action_space.n,)
            and getattr(space, "n", None) == ready.action_space.n
        )
        want = f"a float32 one-hot Box of shape ({ready.action_space.n},) with .n"
    else:
        # rank 1: the world model concatenates the previous action on the last axis
        ok = space.dtype == np.float32 and len(space.shape) == 1
        ok = ok and bool(np.all(space.low == -1) and np.all(space.high == 1))
        want = "a 1-D float32 Box in [-1, 1] (NormalizeAction; the world model concatenates it on the last axis)"
    if not ok:
        _add(report, "act_space['action']", f"be {want}", repr(space), "Report this lowering bug", "act_space")


def _check_obs(chain: Any, obs: Any, where: str, report: Report, first: bool) -> None:
    if not isinstance(obs, dict) or set(obs) != set(chain.obs_space):
        _add(
            report,
            where,
            f"be a dict with the keys of obs_space {sorted(chain.obs_space)}",
            repr(type(obs).__name__ if not isinstance(obs, dict) else sorted(obs)),
            "Return every declared key",
            "observation",
        )
        raise _Stop
    for key, kinds in _FLAGS.items():
        if not isinstance(obs[key], kinds):
            _add(
                report,
                f"{where}[{key!r}]",
                f"be a {kinds[0].__name__}",
                repr(obs[key]),
                "Return Python scalars",
                "lifecycle",
            )
    if obs["is_first"] is not first and obs["is_first"] != first:
        _add(
            report,
            f"{where}['is_first']",
            f"be {first}",
            repr(obs["is_first"]),
            "is_first is True only on reset",
            "lifecycle",
        )
    for key, space in chain.obs_space.items():
        if key in RESERVED_KEYS:
            continue
        value = obs[key]
        if (
            not isinstance(value, np.ndarray)
            or value.shape != space.shape
            or value.dtype != space.dtype
            or not space.contains(value)
        ):
            _add(
                report,
                f"{where}[{key!r}]",
                f"match obs_space ({space.shape}, {space.dtype})",
                repr(value)[:80],
                "Report this lowering bug",
                "observation",
            )


def _check_reset(chain: Any, report: Report) -> dict:
    obs = chain.reset()
    _check_obs(chain, obs, "reset()", report, first=True)
    if (obs["reward"], obs["is_last"], obs["is_terminal"]) != (0.0, False, False):
        _add(
            report,
            "reset()",
            "have reward 0.0, is_last False, is_terminal False",
            repr((obs["reward"], obs["is_last"], obs["is_terminal"])),
            "Report this bug",
            "lifecycle",
        )
    return obs


def _valid_action(chain: Any, ready: DreamerReadyEnv) -> np.ndarray:
    space = chain.act_space["action"]
    action = np.zeros(space.shape, np.float32)
    if ready.action_lowering.discrete:
        action[0] = 1.0
    return action


def _check_step(chain: Any, ready: DreamerReadyEnv, report: Report, obs: dict) -> None:
    obs = chain.step({"action": _valid_action(chain, ready)})
    _check_obs(chain, obs, "step()", report, first=False)
    _check_flags(obs, ready, "step()", report)


def _check_flags(obs: dict, ready: DreamerReadyEnv, where: str, report: Report, cut: bool = False) -> None:
    terminated, truncated = ready.last_flags
    want = (terminated or truncated or cut, terminated)
    got = (obs["is_last"], obs["is_terminal"])
    if got != want:
        _add(
            report,
            f"{where} (is_last, is_terminal)",
            f"be {want} for terminated={terminated}, truncated={truncated}",
            repr(got),
            "Report this bug: a time-out must be is_last and not is_terminal",
            "episode-end",
        )


def _check_timeouts(env: Env, ready: DreamerReadyEnv, report: Report, seed: int, options: Dict[str, Any]) -> None:
    # the neutral TimeLimit's truncation, then DreamerV2's own TimeLimit
    size = tuple(options.get("size", (64, 64)))
    capped = DreamerReadyEnv(TimeLimit(env, 1), **options)
    for inner, duration, where in ((capped, 0, "a neutral time-out step"), (ready, 1, "a DreamerV2 TimeLimit step")):
        chain = _quiet(wrap_chain, inner, size, duration)
        inner.seed(seed)
        chain.reset()
        obs = chain.step({"action": _valid_action(chain, inner)})
        _check_flags(obs, inner, where, report, cut=duration > 0)


def _check_one_hot(chain: Any, ready: DreamerReadyEnv, report: Report) -> None:
    chain.reset()
    soft = np.zeros(chain.act_space["action"].shape, np.float32)
    soft[: min(2, soft.size)] = 0.5
    before = ready.steps
    try:
        chain.step({"action": soft})
    except ContractError as e:
        if "must be a one-hot" not in str(e):
            _add(
                report,
                f"the soft action {soft.tolist()}",
                "be refused as not one-hot by the chain's ChainActions",
                f"ContractError: {e}",
                "Keep ChainActions the outermost link of the chain",
                "one-hot",
            )
    else:
        _add(
            report,
            f"the soft action {soft.tolist()}",
            "be refused",
            "accepted",
            "Never argmax a soft action before validation",
            "one-hot",
        )
    if ready.steps != before:
        _add(
            report,
            "a refused action",
            "not advance the env",
            f"{ready.steps - before} step(s)",
            "Validate before stepping",
            "one-hot",
        )


def _check_bounds(chain: Any, ready: DreamerReadyEnv, report: Report) -> None:
    low, high = ready.action_lowering.bounds
    obs = chain.reset()
    for value in (-1.0, 0.0, 1.0):
        if obs["is_last"]:
            obs = chain.reset()
        obs = chain.step({"action": np.full(chain.act_space["action"].shape, value, np.float32)})
        sent = ready.neutral.last_action  # what reached the neutral env (the _LastAction recorder)
        got = sent["action"] if ready.action_lowering.principal_key else sent
        if value == 0.0:
            ok = np.allclose(got, (low.astype(np.float64) + high) / 2, rtol=1e-5, atol=1e-6)
            want = "the midpoint of the bounds"
        else:
            want_value = low if value < 0 else high
            ok = np.array_equal(got, want_value)
            want = f"the {'low' if value < 0 else 'high'} bound {want_value.tolist()}"
        if not ok:
            _add(
                report,
                f"the normalized action {value}",
                f"land on {want}",
                repr(np.asarray(got).tolist()),
                "Report this bug in NormalizeAction's mapping",
                "bounds",
            )


def check(env: Any, *, seed: int = 0, size: Sequence[int] = (64, 64), action_bounds: Any = None) -> Report:
    """Run DreamerV2's pre-flight gate on ``env`` (a bridge.Env or a registered id) without training.

    Returns a :class:`~bridge.checker.Report` with the target "dreamerv2" (``report.ok``).
    """
    if isinstance(env, str):
        from bridge.registry import make

        name, env = env, make(env)
    else:
        name = getattr(getattr(env.unwrapped, "spec", None), "id", None) or type(env.unwrapped).__name__
    report = Report(name)
    report.targets.append(T)
    _profile(env, report, seed, {"size": size, "action_bounds": action_bounds})
    return report


def dreamerv2_profile(env: Env, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """The "dreamerv2" target of :func:`bridge.check` (``options``: to_dreamerv2's)."""
    _profile(env, report, seed, options)

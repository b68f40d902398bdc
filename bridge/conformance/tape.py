"""Tapes: a recorded trajectory in neutral form, stored as ``.npz`` plus a JSON manifest.

The manifest holds the env id, both spaces (``to_dict``), the seed, the entry kinds and the sha256 of
the ``.npz``; the ``.npz`` holds only plain arrays and is loaded with ``allow_pickle=False``, so a tape
from a stranger is safe to load. Nested values are stored leaf by leaf under their path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from bridge import spaces
from bridge.env import Env
from bridge.errors import ContractError, message

__all__ = ["Tape", "Entry", "record", "leaves", "unleaves"]

FORMAT = "envbridge-tape/1"


class Entry:
    """One event of a stream: a reset (obs only) or a step (obs, reward, terminated, truncated)."""

    __slots__ = ("kind", "obs", "reward", "terminated", "truncated")

    def __init__(
        self, kind: str, obs: Any, reward: float = 0.0, terminated: bool = False, truncated: bool = False
    ) -> None:
        self.kind, self.obs, self.reward, self.terminated, self.truncated = kind, obs, reward, terminated, truncated

    def __repr__(self) -> str:
        if self.kind == "reset":
            return "Entry(reset)"
        return f"Entry(step, reward={self.reward!r}, terminated={self.terminated}, truncated={self.truncated})"


def leaves(space: spaces.Space, value: Any, path: str = "") -> Dict[str, np.ndarray]:
    """Flatten a nested value of ``space`` to ``{path: array}`` (paths like ``["pos"][1]``)."""
    if isinstance(space, spaces.Dict):
        out: Dict[str, np.ndarray] = {}
        for key, sub in space.items():
            out.update(leaves(sub, value[key], f"{path}[{key!r}]"))
        return out
    if isinstance(space, spaces.Tuple):
        out = {}
        for i, sub in enumerate(space):
            out.update(leaves(sub, value[i], f"{path}[{i}]"))
        return out
    return {path: np.asarray(value)}


def unleaves(space: spaces.Space, flat: Dict[str, Any], path: str = "") -> Any:
    """Inverse of :func:`leaves`."""
    if isinstance(space, spaces.Dict):
        return {key: unleaves(sub, flat, f"{path}[{key!r}]") for key, sub in space.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(unleaves(sub, flat, f"{path}[{i}]") for i, sub in enumerate(space))
    value = flat[path]
    return value[()] if isinstance(space, spaces.Discrete) else value


class Tape:
    """A seed, an action tape and the stream the neutral env produced for it."""

    def __init__(
        self,
        env_id: str,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        seed: int,
        actions: List[Any],
        entries: List[Entry],
    ) -> None:
        self.env_id = env_id
        self.observation_space = observation_space
        self.action_space = action_space
        self.seed = seed
        self.actions = actions
        self.entries = entries

    # -- files --------------------------------------------------------------------------------
    def save(self, path: str) -> str:
        """Write ``path`` (.npz) and ``path + '.json'`` (manifest); returns the manifest path."""
        arrays: Dict[str, np.ndarray] = {
            "reward": np.array([e.reward for e in self.entries], dtype=np.float64),
            "terminated": np.array([e.terminated for e in self.entries], dtype=bool),
            "truncated": np.array([e.truncated for e in self.entries], dtype=bool),
        }
        for name, space, values in (
            ("obs", self.observation_space, [e.obs for e in self.entries]),
            ("act", self.action_space, self.actions),
        ):
            per_leaf = [leaves(space, v) for v in values]
            for leaf in per_leaf[0] if per_leaf else {}:
                arrays[f"{name}{leaf}"] = np.stack([p[leaf] for p in per_leaf])
        with open(path, "wb") as f:
            np.savez_compressed(f, **arrays)
        manifest = {
            "format": FORMAT,
            "env": self.env_id,
            "seed": self.seed,
            "observation_space": self.observation_space.to_dict(),
            "action_space": self.action_space.to_dict(),
            "kinds": "".join("r" if e.kind == "reset" else "s" for e in self.entries),
            "npz_sha256": _sha256(path),
        }
        with open(path + ".json", "w") as f:
            json.dump(manifest, f, indent=1)
        return path + ".json"

    @classmethod
    def load(cls, path: str) -> Tape:
        """Read a tape; a changed ``.npz`` (hash mismatch) or a pickled member is refused."""
        with open(path + ".json") as f:
            try:
                manifest = json.load(f)
            except ValueError as e:
                got = f"{os.path.basename(path)}.json"
                raise ContractError(message("tape manifest", "be JSON", got, _RECORD)) from e
        if not isinstance(manifest, dict):
            raise ContractError(message("tape manifest", "be a JSON object", type(manifest).__name__, _RECORD))
        if manifest.get("format") != FORMAT:
            raise ContractError(
                message(
                    "tape manifest format",
                    f"be {FORMAT!r}",
                    repr(manifest.get("format")),
                    "Record the tape again with envbridge conform --record",
                )
            )
        _check_manifest(manifest)  # a stranger's manifest: types first, so nothing below trips on them
        digest = _sha256(path)
        if digest != manifest["npz_sha256"]:
            raise ContractError(
                message(
                    f"tape {os.path.basename(path)}",
                    f"have sha256 {manifest['npz_sha256'][:12]}...",
                    f"{digest[:12]}...",
                    "The .npz was changed after recording; record it again",
                )
            )
        obs_space, act_space = _space(manifest, "observation_space"), _space(manifest, "action_space")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except ValueError as e:
            raise ContractError(
                message(
                    f"tape {os.path.basename(path)}",
                    "hold only plain arrays (no pickled objects)",
                    "a pickled member",
                    "Never load tapes that need pickle",
                )
            ) from e
        kinds = manifest["kinds"]
        _check_members(os.path.basename(path), arrays, len(kinds), kinds.count("s"))
        try:
            obs = _split(arrays, "obs", obs_space, len(kinds))
            actions = _split(arrays, "act", act_space, kinds.count("s"))
            entries = [
                Entry(
                    "reset" if k == "r" else "step",
                    obs[i],
                    float(arrays["reward"][i]),
                    bool(arrays["terminated"][i]),
                    bool(arrays["truncated"][i]),
                )
                for i, k in enumerate(kinds)
            ]
        except KeyError as e:
            expectation = "hold reward, terminated, truncated and one member per leaf of its spaces"
            subject = f"tape {os.path.basename(path)}"
            raise ContractError(message(subject, expectation, f"no member {e}", _RECORD)) from e
        return cls(manifest["env"], obs_space, act_space, int(manifest["seed"]), actions, entries)


_RECORD = "Record the tape again with envbridge conform --record"
# manifest key -> (what it must be, test); checked before any value is used
_MANIFEST_TYPES = {
    "env": ("a str", lambda v: isinstance(v, str)),
    "seed": ("an int", lambda v: type(v) is int),
    "observation_space": ("a space dict (Space.to_dict())", lambda v: isinstance(v, dict)),
    "action_space": ("a space dict (Space.to_dict())", lambda v: isinstance(v, dict)),
    "kinds": ("a str of 'r' (reset) and 's' (step)", lambda v: isinstance(v, str) and set(v) <= {"r", "s"}),
    "npz_sha256": ("64 lowercase hex digits", lambda v: isinstance(v, str) and bool(re.fullmatch("[0-9a-f]{64}", v))),
}


def _check_manifest(manifest: Dict[str, Any]) -> None:
    for key, (expectation, test) in _MANIFEST_TYPES.items():
        if key not in manifest or not test(manifest[key]):
            got = repr(manifest[key])[:60] if key in manifest else "nothing"
            raise ContractError(message(f"tape manifest {key!r}", f"be {expectation}", got, _RECORD))


def _space(manifest: Dict[str, Any], key: str) -> spaces.Space:
    try:
        return spaces.from_dict(manifest[key])
    except (ValueError, KeyError, TypeError) as e:  # SpecError is a ValueError
        expectation = "be a space dict (Space.to_dict())"
        raise ContractError(message(f"tape manifest {key!r}", expectation, repr(manifest[key])[:60], _RECORD)) from e


def _check_members(name: str, arrays: Dict[str, np.ndarray], entries: int, steps: int) -> None:
    """Only the members save() writes, numeric, one row per entry (obs, flags) or per step (act)."""
    for key, array in arrays.items():
        if key in ("reward", "terminated", "truncated", "obs") or key.startswith("obs["):
            rows = entries
        elif key == "act" or key.startswith("act["):
            rows = steps
        else:
            expectation = "hold only reward, terminated, truncated, obs* and act* members"
            raise ContractError(message(f"tape {name}", expectation, f"a member {key!r}", _RECORD))
        if array.dtype.kind not in "biuf" or array.ndim == 0 or len(array) != rows:
            got = f"{array.dtype} with shape {array.shape}"
            raise ContractError(
                message(f"tape {name} member {key!r}", f"be a numeric array of {rows} rows", got, _RECORD)
            )


def _split(arrays: Dict[str, np.ndarray], prefix: str, space: spaces.Space, count: int) -> List[Any]:
    stacked = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix + "[") or k == prefix}
    return [unleaves(space, {p: a[i] for p, a in stacked.items()}) for i in range(count)]


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def record(
    env: Union[str, Env, Callable[[], Env]],
    *,
    seed: int = 0,
    steps: int = 200,
    action_seed: Optional[int] = None,
    env_id: Optional[str] = None,
) -> Tape:
    """Run ``steps`` actions sampled with ``action_seed`` (default: ``seed``) and keep the stream.

    ``env`` is a registered id, an Env, or a factory; episode ends are followed by ``reset()``.
    """
    if isinstance(env, str):
        from bridge.registry import make

        env_id, env = env_id or env, make(env)
    elif not isinstance(env, Env):
        env = env()
    name = env_id or getattr(getattr(env.unwrapped, "spec", None), "id", None) or type(env.unwrapped).__name__
    rng = np.random.default_rng(seed if action_seed is None else action_seed)
    actions = [env.action_space.sample(rng) for _ in range(steps)]
    obs, _ = env.reset(seed=seed)
    entries = [Entry("reset", _copy(obs))]
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        entries.append(Entry("step", _copy(obs), float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            entries.append(Entry("reset", _copy(env.reset()[0])))
    env.close()
    return Tape(name, env.observation_space, env.action_space, seed, actions, entries)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value

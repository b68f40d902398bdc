"""Tapes: a recorded trajectory in neutral form, stored as ``.npz`` plus a JSON manifest.

The manifest holds the env id, the step API, both spaces (``to_dict``), the seed, the entry kinds,
where it was recorded (:func:`bridge.conformance.machine.describe`: Python, numpy, the BLAS and its
kernel, the CPU, the OS), the sha256 of the ``.npz`` and, for a tape recorded with ``states=True``,
which entries have the env's snapshot beside them (in ``<tape>.npz.states``, a
:func:`bridge.snapshot.save` file, with its sha256); the ``.npz`` is a :mod:`bridge.safe_files`
container of plain arrays, one per stream and leaf (``obs['pos']``, ``act``, ``reward``, ...), so a
tape from a stranger is checked whole (sizes before allocation, members against its own manifest)
and never executes anything. :meth:`Tape.check_replayable` then says whether it can speak about an
env. Recording one: :mod:`bridge.conformance.recording`.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional

import numpy as np

from bridge import safe_json, spaces
from bridge import snapshot as _snapshot
from bridge.errors import ContractError, SpecError, message
from bridge.safe_files import LIMITS, Limits, read_npz, sha256_file, write_npz
from bridge.safe_json import read_json_file

__all__ = ["Tape", "Entry", "leaves", "unleaves", "STEP_API", "FORMAT"]

# the step API every tape records: reset(seed=...) -> (obs, info); step(action) -> (obs, reward,
# terminated, truncated, info), Gymnasium 1.x semantics (both flags may be True)
STEP_API = "envbridge-step/1"


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
        step_api: str = STEP_API,
        states: Optional[Dict[int, Any]] = None,
        platform: Optional[Dict[str, str]] = None,
    ) -> None:
        self.env_id = env_id
        self.observation_space = observation_space
        self.action_space = action_space
        self.seed = seed
        self.actions = actions
        self.entries = entries
        self.step_api = step_api
        # entry index -> the env's clone_state() right after that entry (what the next one came from)
        self.states: Dict[int, Any] = dict(states or {})
        # where it was recorded (machine.describe()); None: a tape made before platforms were recorded
        self.platform: Optional[Dict[str, str]] = dict(platform) if platform is not None else None

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
        write_npz(path, arrays, compress=True)
        manifest = {
            "format": FORMAT,
            "env": self.env_id,
            "seed": self.seed,
            "step_api": self.step_api,
            "observation_space": self.observation_space.to_dict(),
            "action_space": self.action_space.to_dict(),
            "kinds": "".join("r" if e.kind == "reset" else "s" for e in self.entries),
            "npz_sha256": _sha256(path),
        }
        if self.platform is not None:
            manifest["platform"] = self.platform
        if self.states:
            indices = sorted(self.states)
            _snapshot.save(path + STATES, [self.states[i] for i in indices], compress=True)
            manifest["states"] = {"entries": indices, "sha256": _sha256(path + STATES)}
        with open(path + ".json", "w") as f:
            f.write(safe_json.dumps(manifest, safe_json.depth_of(manifest), indent=1))
        return path + ".json"

    @classmethod
    def load(cls, path: str, *, limits: Limits = LIMITS) -> Tape:
        """Read a tape; nothing is trusted before it is checked, in this order: the manifest (size,
        depth, types, format, step API, spaces), the ``.npz`` hash, then every member's name, dtype
        and shape against what the manifest implies (before any member data is read), then the
        episode structure. Tapes of format 1 (no step API recorded) load as the one step API; tapes
        of formats 1 and 2 (no platform recorded) load with ``platform`` None (an unknown platform)."""
        name = os.path.basename(path)
        manifest = read_json_file(path + ".json", subject=f"tape manifest {name}.json", fix=_RECORD, limits=limits)
        if not isinstance(manifest, dict):
            raise ContractError(message("tape manifest", "be a JSON object", type(manifest).__name__, _RECORD))
        if manifest.get("format") not in FORMATS:
            got = safe_json.preview(manifest.get("format"))
            raise ContractError(message("tape manifest format", f"be one of {list(FORMATS)}", got, _RECORD))
        _check_manifest(manifest)  # a stranger's manifest: types first, so nothing below trips on them
        step_api = manifest.get("step_api", STEP_API)  # format 1 predates the key; it had this API
        if step_api != STEP_API:
            expectation = f"be {STEP_API!r} (this envbridge's)"
            raise ContractError(message("tape manifest 'step_api'", expectation, safe_json.preview(step_api), _RECORD))
        digest = _sha256(path)
        if digest != manifest["npz_sha256"]:
            raise ContractError(
                message(
                    f"tape {name}",
                    f"have sha256 {manifest['npz_sha256'][:12]}...",
                    f"{digest[:12]}...",
                    "The .npz was changed after recording; record it again",
                )
            )
        obs_space, act_space = _space(manifest, "observation_space"), _space(manifest, "action_space")
        kinds = manifest["kinds"]
        wanted = _members(obs_space, act_space, len(kinds), kinds.count("s"))
        arrays = read_npz(path, subject=f"tape {name}", fix=_RECORD, limits=limits, expect=_expect(name, wanted))
        _check_episodes(f"tape {name}", kinds, arrays["terminated"], arrays["truncated"], arrays["reward"])
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
        states = _states(path, manifest, len(kinds), limits)
        platform = _platform(manifest)
        return cls(
            manifest["env"], obs_space, act_space, manifest["seed"], actions, entries, step_api, states, platform
        )

    # -- before a replay ------------------------------------------------------------------------
    def check_replayable(
        self, observation_space: spaces.Space, action_space: spaces.Space, env_id: Optional[str] = None
    ) -> None:
        """Refuse (ContractError) a tape that cannot say anything about an env with these spaces.

        Checked, in order: the tape holds at least one step (an empty tape agrees with any env);
        its entries, actions and episode ends agree with each other; ``env_id`` (when given)
        is the tape's; both spaces equal the tape's (naming the first place they differ); every
        recorded action lies in ``action_space`` (e.g. no float action for a Discrete space).
        """
        steps = sum(1 for e in self.entries if e.kind == "step")
        if steps == 0:
            got = f"{len(self.entries)} {'entry' if len(self.entries) == 1 else 'entries'} and no step"
            fix = "Record it again with envbridge conform ENV --record TAPE --steps N (N >= 1)"
            raise ContractError(message("tape", "hold at least one step (an empty tape agrees with any env)", got, fix))
        if len(self.actions) != steps:
            got = f"{len(self.actions)} actions for {steps} steps"
            raise ContractError(message("tape", "hold one action per step", got, _RECORD))
        kinds = "".join("r" if e.kind == "reset" else "s" for e in self.entries)
        flags = [(e.terminated, e.truncated, e.reward) for e in self.entries]
        _check_episodes("tape", kinds, *(np.array(column) for column in zip(*flags)))
        if env_id is not None and env_id != self.env_id:
            expectation = f"be {env_id!r} (the env it is replayed on)"
            fix = f"{_OTHER_ENV} (envbridge conform --any-env replays it anyway: the same env under another name)"
            raise ContractError(message("tape env id", expectation, repr(self.env_id), fix))
        for name, mine, theirs in (
            ("observation_space", self.observation_space, observation_space),
            ("action_space", self.action_space, action_space),
        ):
            found = spaces.difference(theirs, mine)
            if found is not None:
                path, expected, got = found
                raise ContractError(message(f"tape {name}{path}", f"be {expected} as in the env", got, _OTHER_ENV))
        for i, action in enumerate(self.actions):
            found = action_space.mismatch(action, f"tape action {i}")
            if found is not None:
                raise ContractError(message(found[0], found[1], found[2], f"{_RECORD} (the env cannot take it)"))


FORMAT = "envbridge-tape/3"
# 2 adds the step API, 3 where the tape was recorded ("platform"); the members are the same
FORMATS = ("envbridge-tape/1", "envbridge-tape/2", FORMAT)
_RECORD = "Record the tape again with envbridge conform --record"
_OTHER_ENV = "Replay a tape on the env it was recorded from, or record one for this env"
# manifest key -> (what it must be, test); checked before any value is used
_MANIFEST_TYPES = {
    "env": ("a str", lambda v: isinstance(v, str)),
    "seed": ("an int >= 0", lambda v: type(v) is int and v >= 0),
    "observation_space": ("a space dict (Space.to_dict())", lambda v: isinstance(v, dict)),
    "action_space": ("a space dict (Space.to_dict())", lambda v: isinstance(v, dict)),
    "kinds": ("a str of 'r' (reset) and 's' (step)", lambda v: isinstance(v, str) and set(v) <= {"r", "s"}),
    "npz_sha256": ("64 lowercase hex digits", lambda v: isinstance(v, str) and bool(re.fullmatch("[0-9a-f]{64}", v))),
}


STATES = ".states"  # the snapshots beside a tape: <tape>.npz.states


def _states(path: str, manifest: Dict[str, Any], entries: int, limits: Limits) -> Dict[int, Any]:
    """The snapshots the manifest declares, checked like the tape: its own hash, then the file."""
    declared = manifest.get("states")
    if declared is None:
        return {}
    name = os.path.basename(path) + STATES
    indices = declared.get("entries") if isinstance(declared, dict) else None
    ok = isinstance(indices, list) and all(type(i) is int and 0 <= i < entries for i in indices)
    if not ok or indices != sorted(set(indices)) or not isinstance(declared.get("sha256"), str):
        expectation = f"be {{'entries': [increasing entry indices below {entries}], 'sha256': hex}}"
        raise ContractError(message("tape manifest 'states'", expectation, safe_json.preview(declared), _RECORD))
    digest = _sha256(path + STATES)
    if digest != declared["sha256"]:
        got = f"{digest[:12]}..."
        expectation = f"have sha256 {declared['sha256'][:12]}..."
        raise ContractError(message(f"tape snapshots {name}", expectation, got, "Record the tape again"))
    found = _snapshot.load(path + STATES, limits=limits)
    if not isinstance(found, list) or len(found) != len(indices):
        got = f"{len(found)} snapshots" if isinstance(found, list) else type(found).__name__
        expectation = f"hold one snapshot per declared entry ({len(indices)})"
        raise ContractError(message(f"tape snapshots {name}", expectation, got, _RECORD))
    return dict(zip(indices, found))


def _platform(manifest: Dict[str, Any]) -> Optional[Dict[str, str]]:
    """The manifest's platform record (a stranger's: a small flat dict of short strings), or None."""
    found = manifest.get("platform")
    if found is None:
        return None
    ok = isinstance(found, dict) and len(found) <= 32
    ok = ok and all(
        isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 1024 for k, v in found.items()
    )
    if not ok:
        expectation = "be a dict of at most 32 short strings (python, numpy, blas, blas_kernel, cpu, simd, os)"
        raise ContractError(message("tape manifest 'platform'", expectation, repr(found)[:60], _RECORD))
    return dict(found)


def _check_manifest(manifest: Dict[str, Any]) -> None:
    for key, (expectation, test) in _MANIFEST_TYPES.items():
        if key not in manifest or not test(manifest[key]):
            got = safe_json.preview(manifest[key]) if key in manifest else "nothing"
            raise ContractError(message(f"tape manifest {key!r}", f"be {expectation}", got, _RECORD))


def _space(manifest: Dict[str, Any], key: str) -> spaces.Space:
    try:
        return spaces.from_dict(manifest[key])
    except SpecError as e:
        expectation = "be a space dict (Space.to_dict())"
        raise ContractError(
            message(f"tape manifest {key!r}", expectation, safe_json.preview(manifest[key]), _RECORD)
        ) from e


def _members(obs_space: spaces.Space, act_space: spaces.Space, entries: int, steps: int) -> Dict[str, tuple]:
    """Every member the manifest implies -> (dtype, shape): what save() writes for it."""
    wanted: Dict[str, tuple] = {
        "reward": (np.dtype(np.float64), (entries,)),
        "terminated": (np.dtype(bool), (entries,)),
        "truncated": (np.dtype(bool), (entries,)),
    }
    for prefix, space, rows in (("obs", obs_space, entries), ("act", act_space, steps)):
        if rows:  # save() writes no leaf member for an empty stream
            for path, leaf in _leaf_spaces(space).items():
                wanted[prefix + path] = (np.dtype(leaf.dtype), (rows,) + tuple(leaf.shape))
    return wanted


def _leaf_spaces(space: spaces.Space, path: str = "") -> Dict[str, spaces.Space]:
    if isinstance(space, spaces.Dict):
        return {p: s for key, sub in space.items() for p, s in _leaf_spaces(sub, f"{path}[{key!r}]").items()}
    if isinstance(space, spaces.Tuple):
        return {p: s for i, sub in enumerate(space) for p, s in _leaf_spaces(sub, f"{path}[{i}]").items()}
    return {path: space}


def _expect(name: str, wanted: Dict[str, tuple]) -> Any:
    def check(members: Dict[str, Any]) -> None:
        extra = sorted(set(members) - set(wanted))
        if extra:
            expectation = f"hold only the members its manifest declares ({', '.join(sorted(wanted))})"
            raise ContractError(message(f"tape {name}", expectation, f"a member {extra[0]!r}", _RECORD))
        missing = sorted(set(wanted) - set(members))
        if missing:
            expectation = "hold reward, terminated, truncated and one member per leaf of its spaces"
            raise ContractError(message(f"tape {name}", expectation, f"no member {missing[0]!r}", _RECORD))
        for key, (dtype, shape) in wanted.items():
            member = members[key]
            if member.dtype != dtype or member.shape != shape:
                expectation = f"be {dtype} of shape {shape}, as its manifest declares"
                got = f"{member.dtype} of shape {member.shape}"
                raise ContractError(message(f"tape {name} member {key + '.npy'!r}", expectation, got, _RECORD))

    return check


def _check_episodes(subject: str, kinds: str, terminated: Any, truncated: Any, reward: Any) -> None:
    """Entry 0 is a reset, and a reset comes exactly after each step that ended an episode."""
    for i, kind in enumerate(kinds):
        ended = i > 0 and kinds[i - 1] == "s" and bool(terminated[i - 1] or truncated[i - 1])
        if kind == "r" and i and not ended:
            problem = f"a reset at entry {i} after a step that did not end an episode"
        elif kind == "s" and (i == 0 or ended):
            problem = f"a step at entry {i}" + (" before any reset" if i == 0 else " right after an episode end")
        elif kind == "r" and (terminated[i] or truncated[i] or reward[i] != 0.0):
            problem = f"a reset at entry {i} with a reward or an episode end"
        else:
            continue
        expectation = "start with a reset and reset exactly after each episode end"
        raise ContractError(message(subject, expectation, problem, _RECORD))


def _split(arrays: Dict[str, np.ndarray], prefix: str, space: spaces.Space, count: int) -> List[Any]:
    stacked = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix + "[") or k == prefix}
    return [unleaves(space, {p: a[i] for p, a in stacked.items()}) for i in range(count)]


def _sha256(path: str) -> str:
    return sha256_file(path, subject=f"tape {os.path.basename(path)}", fix=_RECORD)

"""The crafted-file table, tape rows (through ``Tape.load``): manifests, containers with the hash
an attacker fixed, and members that disagree with their manifest."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Dict

import numpy as np
from crafted import Row, header_for, member, npy, stored, write, zip_bytes
from crafted_snapshot_rows import DEEP, GOOD, bomb

from bridge import safe_json
from bridge.conformance import record

T, FIX_T = "tape walk.npz", "Record the tape again with envbridge conform --record."

BASE = record("envbridge/GridWorld-v0", seed=0, steps=12)
ENTRIES, STEPS = len(BASE.entries), len(BASE.actions)


def _fix_hash(path: str) -> None:
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(path + ".json") as f:
        manifest = json.load(f)
    manifest["npz_sha256"] = digest  # a careful attacker fixes the hash
    with open(path + ".json", "w") as f:
        json.dump(manifest, f)


def tape_npz(data: Callable[[Dict[str, np.ndarray]], bytes]) -> Callable[[str], str]:
    """A recorded tape whose .npz is replaced by ``data(its arrays)``, the manifest's hash fixed."""

    def build(tmp: str) -> str:
        path = os.path.join(tmp, "walk.npz")
        BASE.save(path)
        with np.load(path, allow_pickle=False) as saved:
            arrays = {k: saved[k] for k in saved.files}
        write(path, data(arrays))
        _fix_hash(path)
        return path

    return build


def tape_members(**changes: Callable[[np.ndarray], np.ndarray]) -> Callable[[str], str]:
    """The tape's own members, some changed, written honestly (sizes, CRCs) and re-hashed."""

    def data(arrays: Dict[str, np.ndarray]) -> bytes:
        changed = {k: changes[k](v) if k in changes else v for k, v in arrays.items()}
        return zip_bytes([member(f"{k}.npy", v) for k, v in changed.items()])

    return tape_npz(data)


def _also_ended(flags: np.ndarray, index: int) -> np.ndarray:
    out = flags.copy()
    out[index] = True
    return out


def tape_manifest(raw: bytes) -> Callable[[str], str]:
    def build(tmp: str) -> str:
        path = os.path.join(tmp, "walk.npz")
        BASE.save(path)
        write(path + ".json", raw)
        return path

    return build


def tape_manifest_edit(**changes: Any) -> Callable[[str], str]:
    def build(tmp: str) -> str:
        path = os.path.join(tmp, "walk.npz")
        BASE.save(path)
        with open(path + ".json") as f:
            manifest = json.load(f)
        manifest.update(changes)
        write(path + ".json", json.dumps(manifest).encode())
        return path

    return build


def _nested_tuples(levels: int) -> Dict[str, Any]:
    space: Dict[str, Any] = {"type": "Discrete", "n": 2, "start": 0}
    for _ in range(levels):
        space = {"type": "Tuple", "spaces": [space]}
    return space


def _deep_list(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def tape_manifest_deep(key: str, value: Any) -> Callable[[str], str]:
    """The manifest with ``key`` set to a value too deep for ``json.dumps`` (written without recursion)."""

    def build(tmp: str) -> str:
        path = os.path.join(tmp, "walk.npz")
        BASE.save(path)
        with open(path + ".json") as f:
            manifest = json.load(f)
        manifest[key] = value
        write(path + ".json", safe_json.dumps(manifest, safe_json.depth_of(manifest)).encode())
        return path

    return build


TAPE_ROWS = [
    Row(
        "t-no-manifest",
        "tape",
        "a tape without its .json",
        "open",
        lambda tmp: (
            BASE.save(os.path.join(tmp, "walk.npz")),
            os.remove(os.path.join(tmp, "walk.npz.json")),
            os.path.join(tmp, "walk.npz"),
        )[2],
        f"tape manifest walk.npz.json must be a readable file, got FileNotFoundError (No such file or directory). {FIX_T}",
    ),
    Row(
        "t-deep-manifest",
        "tape",
        "a manifest nested 100,000 deep",
        "Limits.max_json_depth",
        tape_manifest(DEEP.encode()),
        f"tape manifest walk.npz.json must nest at most 1,024 levels (Limits.max_json_depth), got 100,000 levels. {FIX_T}",
    ),
    Row(  # within max_json_depth; the message's repr of it recursed once a level (RecursionError)
        "t-deep-space",
        "tape",
        "an observation_space of 500 nested Tuples (1,002 JSON levels)",
        "spaces.MAX_DEPTH, then a repr without recursion",
        tape_manifest_deep("observation_space", _nested_tuples(500)),
        "tape manifest 'observation_space' must be a space dict (Space.to_dict()), got "
        f"{{'type': 'Tuple', 'spaces': [{{'type': 'Tuple', 'spaces': [{{'. {FIX_T}",
    ),
    Row(
        "t-deep-format",
        "tape",
        "a format nested 1,000 lists deep",
        "manifest format, then a repr without recursion",
        tape_manifest_deep("format", _deep_list(1000)),
        f"tape manifest format must be one of ['envbridge-tape/1', 'envbridge-tape/2', 'envbridge-tape/3'], got {'[' * 60}. {FIX_T}",
    ),
    Row(
        "t-binary-manifest",
        "tape",
        "a manifest that is not UTF-8",
        "UTF-8",
        tape_manifest(b"\xff\xfe{}"),
        f"tape manifest walk.npz.json must be UTF-8 JSON text, got bytes that are not UTF-8 (invalid start byte at byte 0). {FIX_T}",
    ),
    Row(
        "t-empty-manifest",
        "tape",
        "an empty manifest",
        "parser",
        tape_manifest(b""),
        f"tape manifest walk.npz.json must be JSON text, got ''. {FIX_T}",
    ),
    Row(
        "t-format",
        "tape",
        "format envbridge-tape/9",
        "format",
        tape_manifest_edit(format="envbridge-tape/9"),
        f"tape manifest format must be one of ['envbridge-tape/1', 'envbridge-tape/2', 'envbridge-tape/3'], got 'envbridge-tape/9'. {FIX_T}",
    ),
    Row(
        "t-step-api",
        "tape",
        "another step API",
        "step API",
        tape_manifest_edit(step_api="gym-done-4-tuple"),
        f"tape manifest 'step_api' must be 'envbridge-step/1' (this envbridge's), got 'gym-done-4-tuple'. {FIX_T}",
    ),
    Row(
        "t-plain-npy",
        "tape",
        "a plain .npy (hash fixed)",
        "magic bytes",
        tape_npz(lambda a: npy(np.zeros(3))),
        f"{T} must be an .npz archive, got a plain .npy file (np.save output). {FIX_T}",
    ),
    Row(
        "t-empty-npz",
        "tape",
        "an empty .npz (hash fixed)",
        "file size",
        tape_npz(lambda a: b""),
        f"{T} must be an .npz archive, got an empty file (0 bytes). {FIX_T}",
    ),
    Row(
        "t-truncated-zip",
        "tape",
        "a tape cut in half (hash fixed)",
        "zip end record",
        tape_npz(lambda a: GOOD[: len(GOOD) // 2]),
        f"{T} must be a complete zip archive, got a truncated or damaged zip (no end-of-archive record). {FIX_T}",
    ),
    Row(
        "t-float-actions",
        "tape",
        "float actions for its Discrete(4) space",
        "members against the manifest",
        tape_members(act=lambda a: a.astype(np.float64)),
        f"{T} member 'act.npy' must be int64 of shape ({STEPS},), as its manifest declares, got float64 of shape ({STEPS},). {FIX_T}",
    ),
    Row(
        "t-short-member",
        "tape",
        "a reward member of 2 rows",
        "members against the manifest",
        tape_members(reward=lambda a: a[:2]),
        f"{T} member 'reward.npy' must be float64 of shape ({ENTRIES},), as its manifest declares, got float64 of shape (2,). {FIX_T}",
    ),
    Row(
        "t-truncated-member",
        "tape",
        "a reward member with 40 data bytes",
        "header size == directory size",
        tape_npz(lambda a: zip_bytes([stored("reward.npy", header_for("<f8", (ENTRIES,)) + bytes(40))])),
        f"{T} member 'reward.npy' must hold {8 * ENTRIES} bytes of <f8 data (shape ({ENTRIES},)), got 40 bytes (truncated). {FIX_T}",
    ),
    Row(
        "t-episode-ends",
        "tape",
        "an episode end the kinds do not follow",
        "episode structure",
        tape_members(terminated=lambda a: _also_ended(a, 2)),
        f"{T} must start with a reset and reset exactly after each episode end, got a step at entry 3 right after an episode end. {FIX_T}",
    ),
    Row(
        "t-zip-bomb",
        "tape",
        "the 2 MB zip bomb as a tape (hash fixed)",
        "Limits.max_member_bytes, from the directory",
        tape_npz(lambda a: bomb("obs.npy")),
        f"{T} member 'obs.npy' must hold at most 536,870,912 bytes (Limits.max_member_bytes), got 2,147,483,648 bytes declared by the archive. {FIX_T}",
    ),
]

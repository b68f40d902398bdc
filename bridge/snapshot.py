"""Snapshots as plain data: RNG state encoding and pickle-free ``.npz`` / JSON files.

A snapshot is nested dict / list / ndarray / str / int / float / bool / None. The RNG's 128-bit
integers become decimal strings so the tree fits both ``.npz`` (no object arrays) and JSON.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from bridge.errors import ContractError, SpecError, message

__all__ = ["rng_state", "set_rng_state", "save", "load", "to_json", "from_json"]

_ARRAY = "__ndarray__"
_PLAIN_KINDS = "biufcUS"  # numeric, bool and string dtypes: never object, void or structured
_RESAVE = "Recreate it with bridge.snapshot.save"
_REDUMP = "Recreate it with bridge.snapshot.to_json"


def rng_state(rng: np.random.Generator) -> dict:
    """The Generator's bit-generator state with every int as a decimal string."""
    return _ints_to_str(rng.bit_generator.state)


def set_rng_state(rng: np.random.Generator, state: dict) -> None:
    """Inverse of :func:`rng_state`; the bit generator's kind must match."""
    kind = rng.bit_generator.state["bit_generator"]
    if not isinstance(state, dict) or state.get("bit_generator") != kind:
        got = state.get("bit_generator") if isinstance(state, dict) else state
        raise ContractError(
            message("snapshot RNG", f"come from a {kind} generator", got, "Restore a snapshot of this env")
        )
    rng.bit_generator.state = _str_to_ints(state)


def _ints_to_str(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _ints_to_str(v) for k, v in tree.items()}
    if isinstance(tree, (int, np.integer)) and not isinstance(tree, bool):
        return str(int(tree))
    return tree


def _str_to_ints(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: (v if k == "bit_generator" else _str_to_ints(v)) for k, v in tree.items()}
    if isinstance(tree, str) and tree.lstrip("-").isdigit():
        return int(tree)
    return tree


def _flatten(tree: Any, arrays: list[np.ndarray]) -> Any:
    """Replace arrays by ``{"__ndarray__": index}`` and check every leaf is plain data."""
    if isinstance(tree, np.ndarray):
        if tree.dtype.kind not in _PLAIN_KINDS:
            raise SpecError(
                message("snapshot array", "have a numeric or string dtype", str(tree.dtype), "Store plain arrays")
            )
        arrays.append(tree)
        return {_ARRAY: len(arrays) - 1}
    if isinstance(tree, np.generic):
        return _flatten(np.asarray(tree), arrays)
    if isinstance(tree, dict):
        if not all(isinstance(k, str) for k in tree):
            raise SpecError(message("snapshot dict keys", "be str", list(tree), "Use string keys"))
        return {k: _flatten(v, arrays) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [_flatten(v, arrays) for v in tree]
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    raise SpecError(
        message(
            "snapshot leaf",
            "be a dict, list, ndarray, str, int, float, bool or None",
            type(tree).__name__,
            "Convert custom objects to plain data in get_state()",
        )
    )


def _unflatten(tree: Any, arrays: Any) -> Any:
    if isinstance(tree, dict):
        if set(tree) == {_ARRAY}:
            index = tree[_ARRAY]
            if type(index) is not int or not 0 <= index < len(arrays):  # a crafted tree: no bool, no -1
                expectation = f"reference only its arrays a0..a{len(arrays) - 1}"
                raise ContractError(message("snapshot file tree", expectation, json.dumps(tree), _RESAVE))
            return arrays[index]
        return {k: _unflatten(v, arrays) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_unflatten(v, arrays) for v in tree]
    return tree


def save(path: str, snapshot: Any) -> None:
    """Write ``snapshot`` to an ``.npz``: arrays as members, the tree as a JSON string member."""
    arrays: list[np.ndarray] = []
    tree = _flatten(snapshot, arrays)
    members = {f"a{i}": a for i, a in enumerate(arrays)}
    members["tree"] = np.array(json.dumps(tree))
    with open(path, "wb") as f:
        np.savez(f, **members)


def load(path: str) -> Any:
    """Read a file written by :func:`save`; pickled members are refused, never executed."""
    try:
        with np.load(path, allow_pickle=False) as data:
            members = {name: data[name] for name in data.files}
    except ValueError as e:
        raise ContractError(
            message(
                "snapshot file",
                "hold only plain arrays (no pickled objects)",
                path,
                "Recreate it with bridge.snapshot.save",
            )
        ) from e
    # a crafted file may still be well-formed npz: check the layout save() writes before trusting it
    expected = ["tree"] + [f"a{i}" for i in range(len(members) - 1)]
    if sorted(members) != sorted(expected):
        raise ContractError(message("snapshot file members", "be 'tree' and a0..aN", sorted(members), _RESAVE))
    text = members["tree"]
    if text.dtype.kind != "U" or text.ndim != 0:
        got = f"a {text.dtype} array of shape {text.shape}"
        raise ContractError(message("snapshot file tree", "be one JSON string", got, _RESAVE))
    try:
        tree = json.loads(str(text))
    except ValueError as e:
        raise ContractError(message("snapshot file tree", "be JSON text", f"{str(text)[:40]!r}", _RESAVE)) from e
    return _unflatten(tree, [members[f"a{i}"] for i in range(len(members) - 1)])


def to_json(snapshot: Any) -> str:
    """A JSON text of ``snapshot``; arrays keep dtype and shape."""

    def encode(tree: Any) -> Any:
        if isinstance(tree, (np.ndarray, np.generic)):
            arr = np.asarray(tree)
            return {_ARRAY: arr.ravel().tolist(), "dtype": arr.dtype.str, "shape": list(arr.shape)}
        if isinstance(tree, dict):
            return {k: encode(v) for k, v in tree.items()}
        if isinstance(tree, (list, tuple)):
            return [encode(v) for v in tree]
        return tree

    _flatten(snapshot, [])  # same leaf rules as .npz
    return json.dumps(encode(snapshot))


def from_json(text: str) -> Any:
    """Inverse of :func:`to_json`."""

    def decode(tree: Any) -> Any:
        if isinstance(tree, dict):
            if _ARRAY in tree:
                return _json_array(tree)
            return {k: decode(v) for k, v in tree.items()}
        if isinstance(tree, list):
            return [decode(v) for v in tree]
        return tree

    return decode(json.loads(text))


def _json_array(tree: dict) -> np.ndarray:
    """One ``{"__ndarray__": values, "dtype": ..., "shape": ...}`` of :func:`to_json`, checked."""
    try:
        dtype = np.dtype(tree["dtype"])
        if dtype.kind not in _PLAIN_KINDS:
            expectation = "be numeric, bool or string (no objects)"
            raise ContractError(message("snapshot JSON array dtype", expectation, str(dtype), _REDUMP))
        return np.array(tree[_ARRAY], dtype=dtype).reshape(tree["shape"])
    except (KeyError, TypeError, ValueError) as e:
        got = json.dumps(tree)[:80]
        expectation = "have values, a dtype and a matching shape"
        raise ContractError(message("snapshot JSON array", expectation, got, _REDUMP)) from e

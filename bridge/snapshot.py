"""Snapshots as plain data: RNG state encoding and pickle-free ``.npz`` / JSON files.

A snapshot is a tree of dict (str keys), list, tuple, ndarray, numpy scalar, str, int, float, bool
and None. Both files give back exactly that tree:

* dicts keep their key order; lists stay lists and tuples stay tuples (a namedtuple or a dict
  subclass comes back as a plain tuple / dict);
* arrays keep dtype, shape and bytes; a numpy scalar comes back as a numpy scalar of its dtype
  (files written before this rule hold 0-d arrays, and load as 0-d arrays);
* ints of any size, floats (NaN and infinities too), bools, None and str are unchanged;
* user keys that look like the file's own markers (``"__ndarray__"``, ``"__scalar__"``,
  ``"__tuple__"``, ``"__dict__"``) are escaped on save and come back as written.

Anything else is refused when saving (SpecError), and so is a tree that the loader would refuse
(deeper than ``Limits.max_json_depth``, arrays past the size limits). Loading goes through
:mod:`bridge.safe_files`: a file from a stranger is sized before anything is allocated, and every
failure is one ContractError naming its cause. The RNG's 128-bit integers are decimal strings.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from bridge import _pcg64, _plaindata, safe_files, safe_json
from bridge.errors import ContractError, SpecError, message
from bridge.safe_files import LIMITS, Limits

__all__ = [
    "rng_state",
    "set_rng_state",
    "check_rng_state",
    "check_rng_kind",
    "apply_rng_state",
    "rng_bytes",
    "write_rng_bytes",
    "rng_point",
    "roll_back_rng",
    "save",
    "load",
    "to_json",
    "from_json",
]

_ARRAY, _SCALAR, _PLAIN_KINDS = _plaindata.ARRAY, _plaindata.SCALAR, _plaindata.PLAIN_KINDS
_RESAVE = "Recreate it with bridge.snapshot.save"
_REDUMP = "Recreate it with bridge.snapshot.to_json"
_SCRATCH: Dict[type, Any] = {}  # one spare bit generator per kind, to try a state on


# -- the RNG ---------------------------------------------------------------------------------------
def rng_state(rng: np.random.Generator) -> dict:
    """The Generator's bit-generator state with every int as a decimal string."""
    raw = _pcg64.read(rng.bit_generator)  # a PCG64's bytes: the same dict without .state's round trip
    return _ints_to_str(rng.bit_generator.state) if raw is None else _pcg64.encode(raw)


def rng_point(rng: np.random.Generator) -> Any:
    """The state to put back with :func:`roll_back_rng` should a restore fail (not plain data)."""
    raw = _pcg64.read(rng.bit_generator)
    return rng.bit_generator.state if raw is None else raw


def roll_back_rng(rng: np.random.Generator, point: Any) -> None:
    """Put back the state :func:`rng_point` took."""
    if type(point) is tuple:
        _pcg64.write(rng.bit_generator, point)
    else:
        rng.bit_generator.state = point


def check_rng_state(rng: np.random.Generator, state: Any) -> dict:
    """The bit-generator state :func:`rng_state` encoded in ``state``, tried on a spare generator
    of ``rng``'s kind (``rng`` itself is untouched); a ContractError when it does not fit."""
    decoded = _decoded(rng, state)
    spare = _SCRATCH.get(type(rng.bit_generator))
    if spare is None:
        spare = _SCRATCH.setdefault(type(rng.bit_generator), type(rng.bit_generator)())
    _assign(spare, decoded, rng, state)
    return decoded


def set_rng_state(rng: np.random.Generator, state: Any) -> None:
    """Inverse of :func:`rng_state`; the state is checked whole before ``rng`` changes."""
    rng.bit_generator.state = check_rng_state(rng, state)


def check_rng_kind(rng: np.random.Generator, state: Any) -> None:
    """The cheap part of :func:`check_rng_state`: ``state`` is a dict of ``rng``'s kind."""
    kind = type(rng.bit_generator).__name__  # what its state calls "bit_generator"
    if not isinstance(state, dict) or state.get("bit_generator") != kind:
        got = state.get("bit_generator") if isinstance(state, dict) else state
        raise ContractError(
            message("snapshot RNG", f"come from a {kind} generator", got, "Restore a snapshot of this env")
        )


def apply_rng_state(rng: np.random.Generator, state: Any) -> None:
    """:func:`set_rng_state` without the spare: for callers that roll ``rng`` back themselves
    when this raises (``Env.restore_state``), so a restore pays for one state assignment."""
    raw = rng_bytes(rng, state)
    if raw is not None:
        _pcg64.write(rng.bit_generator, raw)
        return
    _assign(rng.bit_generator, _decoded(rng, state), rng, state)


def rng_bytes(rng: np.random.Generator, state: Any) -> Optional[_pcg64.Raw]:
    """The raw bytes of ``state`` when ``rng`` is a PCG64 and ``state`` is exactly as
    :func:`rng_state` writes it (then :func:`write_rng_bytes` cannot fail); None otherwise."""
    return _pcg64.decode(state) if type(rng.bit_generator) is np.random.PCG64 else None


def write_rng_bytes(rng: np.random.Generator, raw: _pcg64.Raw) -> None:
    """Set ``rng`` to the bytes :func:`rng_bytes` gave."""
    _pcg64.write(rng.bit_generator, raw)


def _decoded(rng: np.random.Generator, state: Any) -> dict:
    check_rng_kind(rng, state)
    return _str_to_ints(state)


def _assign(bit_generator: Any, decoded: dict, rng: np.random.Generator, state: Any) -> None:
    try:
        bit_generator.state = decoded
    except (TypeError, ValueError, KeyError, OverflowError, AttributeError) as e:
        kind = type(rng.bit_generator).__name__
        got = safe_json.short_json(state, 80)
        raise ContractError(
            message("snapshot RNG", f"be a {kind} state from clone_state()", got, "Restore a snapshot of this env")
        ) from e


def _ints_to_str(tree: Any) -> Any:
    if isinstance(tree, dict):
        return {k: _ints_to_str(v) for k, v in tree.items()}
    if isinstance(tree, (int, np.integer)) and not isinstance(tree, bool):
        return str(int(tree))
    return tree


_DECIMAL = re.compile(r"-?[0-9]{1,200}")  # ASCII digits only: "²".isdigit() is True, int("²") a ValueError


def _str_to_ints(tree: Any, depth: int = 0) -> Any:
    """Decimal strings back to ints, two dict levels deep (a bit-generator state's shape); anything
    else is left as it is for the bit generator's own assignment to refuse (:func:`_assign`)."""
    if isinstance(tree, dict) and depth < 2:
        return {k: (v if k == "bit_generator" else _str_to_ints(v, depth + 1)) for k, v in tree.items()}
    if isinstance(tree, str) and _DECIMAL.fullmatch(tree):
        return int(tree)
    return tree


# -- .npz files ------------------------------------------------------------------------------------
def save(path: str, snapshot: Any, *, limits: Limits = LIMITS, compress: bool = False) -> None:
    """Write ``snapshot`` to an ``.npz``: arrays as members ``a0..aN``, the tree as JSON in ``tree``
    (``compress``: deflated, for files kept around such as a tape's snapshots).

    Refuses (SpecError) what :func:`load` with the same ``limits`` would refuse.
    """
    safe_files.check_save_path(path, "snapshot.save path")  # before the snapshot is encoded
    arrays: List[np.ndarray] = []

    def leaf(array: np.ndarray, scalar: bool) -> Tuple[Any, int]:
        arrays.append(_plaindata.plain(array))
        return {_SCALAR if scalar else _ARRAY: len(arrays) - 1}, 1

    tree, depth = _plaindata.encode(snapshot, leaf, limits.max_json_depth)
    text = safe_json.dumps(tree, depth)
    _fits(arrays, text, limits)
    members = {f"a{i}": a for i, a in enumerate(arrays)}
    members["tree"] = np.array(text)
    safe_files.write_npz(path, members, compress=compress, subject="snapshot.save path")


def _fits(arrays: List[np.ndarray], text: str, limits: Limits) -> None:
    """Refuse at save time what load() with the same limits would refuse."""
    tree_bytes = 4 * len(text)  # the tree member is a <U string: 4 bytes a character
    total = sum(a.nbytes for a in arrays) + tree_bytes
    largest = max([a.nbytes for a in arrays] + [tree_bytes])
    wide = max(
        (a.dtype.itemsize // (4 if a.dtype.kind == "U" else 1) for a in arrays if a.dtype.kind in "US"), default=0
    )
    for ok, expectation, got in (
        (len(arrays) < limits.max_members, f"hold at most {limits.max_members - 1:,} arrays", f"{len(arrays):,}"),
        (
            largest <= limits.max_member_bytes,
            f"hold members of at most {limits.max_member_bytes:,} bytes",
            f"{largest:,}",
        ),
        (total <= limits.max_total_bytes, f"hold at most {limits.max_total_bytes:,} bytes in all", f"{total:,}"),
        (
            wide <= limits.max_string_chars,
            f"hold strings of at most {limits.max_string_chars:,} characters",
            f"{wide:,}",
        ),
        (
            len(text) <= limits.max_json_bytes,
            f"have a tree of at most {limits.max_json_bytes:,} characters",
            f"{len(text):,}",
        ),
    ):
        if not ok:
            fix = "Keep bulk data out of get_state(), or pass larger bridge.safe_files.Limits to save and load"
            raise SpecError(message("snapshot", f"{expectation} to load again", got, fix))


def load(path: str, *, limits: Limits = LIMITS) -> Any:
    """Read a file written by :func:`save`; anything else is refused, nothing in it is executed."""

    def expect(members: Dict[str, safe_files.Member]) -> None:
        # a crafted file may still be well-formed npz: check the layout save() writes before trusting it
        expected = ["tree"] + [f"a{i}" for i in range(len(members) - 1)]
        if sorted(members) != sorted(expected):
            raise ContractError(message("snapshot file members", "be 'tree' and a0..aN", sorted(members), _RESAVE))
        tree = members["tree"]
        if tree.dtype.kind != "U" or tree.shape != ():
            got = f"a {tree.dtype} array of shape {tree.shape}"
            raise ContractError(message("snapshot file tree", "be one JSON string", got, _RESAVE))

    members = safe_files.read_npz(
        path,
        subject="snapshot file",
        fix=_RESAVE,
        limits=limits,
        kinds=_PLAIN_KINDS,
        long_text=("tree",),
        expect=expect,
    )
    tree = safe_json.parse_json(str(members["tree"][()]), subject="snapshot file tree", fix=_RESAVE, limits=limits)
    arrays = [members[f"a{i}"] for i in range(len(members) - 1)]

    def leaf(item: dict) -> Any:
        key = _SCALAR if _SCALAR in item else _ARRAY
        index = item[key]
        if set(item) != {key} or type(index) is not int or not 0 <= index < len(arrays):  # no bool, no -1
            expectation = f"reference only its arrays a0..a{len(arrays) - 1}"
            raise ContractError(message("snapshot file tree", expectation, safe_json.short_json(item, 200), _RESAVE))
        if key == _SCALAR and arrays[index].shape != ():
            raise ContractError(
                message("snapshot file tree", "mark only 0-d arrays as scalars", json.dumps(item), _RESAVE)
            )
        return arrays[index][()] if key == _SCALAR else arrays[index]

    return _plaindata.decode(tree, leaf, "snapshot file tree", _RESAVE)


# -- JSON ------------------------------------------------------------------------------------------
def to_json(snapshot: Any, *, limits: Limits = LIMITS) -> str:
    """A JSON text of ``snapshot``; arrays keep dtype, shape and values, scalars their dtype."""
    tree, depth = _plaindata.encode(snapshot, _json_leaf, limits.max_json_depth)
    return safe_json.dumps(tree, depth)


def _json_leaf(array: np.ndarray, scalar: bool) -> Tuple[Any, int]:
    _plaindata.plain(array)
    if array.dtype.kind in "fc" and array.dtype.itemsize > (8 if array.dtype.kind == "f" else 16):
        raise SpecError(
            message(
                "snapshot JSON array", "have at most 64-bit floats", array.dtype.name, "Use .npz (bridge.snapshot.save)"
            )
        )
    flat = np.ascontiguousarray(array).reshape(-1)
    if array.dtype.kind == "c":  # complex: real and imaginary parts side by side
        flat = flat.view(np.dtype(f"{array.dtype.byteorder}f{array.dtype.itemsize // 2}"))
    values = [v.decode("latin-1") for v in flat.tolist()] if array.dtype.kind == "S" else flat.tolist()
    if scalar:
        return {_SCALAR: values, "dtype": array.dtype.str}, 2
    return {_ARRAY: values, "dtype": array.dtype.str, "shape": list(array.shape)}, 2


def from_json(text: str, *, limits: Limits = LIMITS) -> Any:
    """Inverse of :func:`to_json`, within ``limits`` (length, depth, array sizes) before allocating."""
    tree = safe_json.parse_json(text, subject="snapshot JSON", fix=_REDUMP, limits=limits)
    budget = [limits.max_total_bytes]
    return _plaindata.decode(tree, lambda item: _json_array(item, limits, budget), "snapshot JSON", _REDUMP)


_JSON_TYPES = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float), "c": (int, float), "U": (str,), "S": (str,)}


def _json_array(item: dict, limits: Limits, budget: List[int]) -> Any:
    """One array or scalar of :func:`to_json`, sized and type-checked before numpy sees it."""
    scalar = _SCALAR in item
    keys = {_SCALAR, "dtype"} if scalar else {_ARRAY, "dtype", "shape"}
    values, shape = item.get(_SCALAR if scalar else _ARRAY), [] if scalar else item.get("shape")
    try:
        ok = set(item) == keys and isinstance(values, list) and isinstance(item["dtype"], str)
        ok = ok and isinstance(shape, list) and len(shape) <= 32 and all(type(d) is int and d >= 0 for d in shape)
        dtype = np.dtype(item["dtype"]) if ok else None
    except (TypeError, ValueError, SyntaxError):
        ok, dtype = False, None
    if not ok or dtype is None:
        raise ContractError(
            message("snapshot JSON array", "have values, a dtype and a matching shape", _plaindata.shown(item), _REDUMP)
        )
    if dtype.kind not in _PLAIN_KINDS or dtype.fields is not None or dtype.subdtype is not None or not dtype.itemsize:
        raise ContractError(
            message("snapshot JSON array dtype", "be numeric, bool or string (no objects)", str(dtype), _REDUMP)
        )
    width = dtype.itemsize // 4 if dtype.kind == "U" else dtype.itemsize
    if dtype.kind in "US" and width > limits.max_string_chars:
        expectation = f"have strings of at most {limits.max_string_chars:,} characters (Limits.max_string_chars)"
        raise ContractError(message("snapshot JSON array dtype", expectation, dtype.str, _REDUMP))
    count, nbytes = math.prod(shape), math.prod(shape) * dtype.itemsize
    room = min(limits.max_member_bytes, budget[0])
    if nbytes > room:
        expectation = f"hold at most {room:,} more bytes (Limits.max_member_bytes and .max_total_bytes)"
        raise ContractError(
            message("snapshot JSON array", expectation, f"{dtype.str} of shape {shape}: {nbytes:,} bytes", _REDUMP)
        )
    budget[0] -= nbytes
    wanted = count * (2 if dtype.kind == "c" else 1)
    allowed = _JSON_TYPES[dtype.kind]
    ok = len(values) == wanted and all(type(v) in allowed for v in values)
    if ok and dtype.kind in "iu":  # numpy 1.19 would wrap -1 into a uint64
        info = np.iinfo(dtype)
        ok = not values or (info.min <= min(values) and max(values) <= info.max)
    if ok and dtype.kind in "US":  # numpy would cut a longer string to the width
        ok = all(len(v) <= width for v in values)
    if not ok:
        raise ContractError(
            message("snapshot JSON array", "have values, a dtype and a matching shape", _plaindata.shown(item), _REDUMP)
        )
    try:
        if dtype.kind == "c":
            array = np.array(values, dtype=f"{dtype.byteorder}f{dtype.itemsize // 2}").view(dtype)
        else:
            with np.errstate(over="ignore"):  # a float past the dtype's range becomes its infinity
                array = np.array([v.encode("latin-1") for v in values] if dtype.kind == "S" else values, dtype=dtype)
        array = array.reshape(shape)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError) as e:
        raise ContractError(
            message("snapshot JSON array", "have values that fit its dtype", _plaindata.shown(item), _REDUMP)
        ) from e
    return array[()] if scalar else array

"""Plain-data trees walked without recursion: the encoding snapshot files share.

:func:`encode` turns dict / list / tuple / ndarray / numpy scalar / str / int / float / bool / None
into a JSON-able tree in which arrays become leaves chosen by the caller (a member reference in
``.npz``, values in JSON), tuples become ``{"__tuple__": [...]}`` and a dict with a key that looks
like a marker becomes ``{"__dict__": [[key, value], ...]}``; :func:`decode` inverts it.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from bridge.errors import ContractError, SpecError, error, message
from bridge.safe_json import short_json

ARRAY, SCALAR, TUPLE, DICT = "__ndarray__", "__scalar__", "__tuple__", "__dict__"
MARKERS = frozenset((ARRAY, SCALAR, TUPLE, DICT))
PLAIN_KINDS = "biufcUS"  # numeric, bool and string dtypes: never object, void or structured

Leaf = Callable[[np.ndarray, bool], Tuple[Any, int]]  # (array, is a numpy scalar) -> (node, its depth)


def encode(tree: Any, leaf: Leaf, max_depth: int) -> Tuple[Any, int]:
    """Walk ``tree`` without recursion; return the encoded tree and its JSON nesting depth."""
    root: List[Any] = [None]
    stack: List[Tuple[Any, Any, Any, int]] = [(tree, root, 0, 0)]  # value, holder, slot, holder's depth
    deepest = 0

    def node(depth: int) -> int:
        nonlocal deepest
        if depth > max_depth:
            raise error(
                SpecError,
                "snapshot",
                f"nest at most {max_depth} levels once saved (Limits.max_json_depth)",
                "a deeper tree (or a cycle)",
                "Flatten the state in get_state()",
            )
        deepest = max(deepest, depth)
        return depth

    while stack:
        value, holder, slot, depth = stack.pop()
        if isinstance(value, (np.ndarray, np.generic)):
            holder[slot], extra = leaf(np.asarray(value), isinstance(value, np.generic))
            node(depth + extra)
        elif isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise error(SpecError, "snapshot dict keys", "be str", list(value), "Use string keys")
            if MARKERS.isdisjoint(value):
                out: Dict[str, Any] = dict.fromkeys(value)
                holder[slot], inner = out, node(depth + 1)
                stack.extend((v, out, k, inner) for k, v in value.items())
            else:  # a user key that looks like a marker: keep the dict as [key, value] pairs
                pairs = [[k, None] for k in value]
                holder[slot], inner = {DICT: pairs}, node(depth + 3)
                stack.extend((v, pair, 1, inner) for pair, v in zip(pairs, value.values()))
        elif isinstance(value, (list, tuple)):
            items: List[Any] = [None] * len(value)
            is_tuple = isinstance(value, tuple)
            holder[slot] = {TUPLE: items} if is_tuple else items
            inner = node(depth + (2 if is_tuple else 1))
            stack.extend((v, items, i, inner) for i, v in enumerate(value))
        elif value is None or isinstance(value, (bool, int, float, str)):
            holder[slot] = value
        else:
            raise error(
                SpecError,
                "snapshot leaf",
                "be a dict, list, tuple, ndarray, numpy scalar, str, int, float, bool or None",
                type(value).__name__,
                "Convert custom objects to plain data in get_state()",
            )
    return root[0], deepest


def plain(array: np.ndarray) -> np.ndarray:
    if array.dtype.kind not in PLAIN_KINDS or array.dtype.fields is not None:
        raise error(
            SpecError, "snapshot array", "have a numeric or string dtype", str(array.dtype), "Store plain arrays"
        )
    if array.dtype.itemsize == 0:
        raise error(SpecError, "snapshot array", "have a dtype of non-zero size", array.dtype.str, "Store plain arrays")
    return array


def decode(tree: Any, leaf: Callable[[dict], Any], subject: str, fix: str) -> Any:
    """Walk an encoded tree without recursion; ``leaf`` turns an array or scalar marker into its value."""
    root: List[Any] = [None]
    stack: List[Tuple[Any, Any, Any]] = [(tree, root, 0)]
    tuples: List[Tuple[Any, Any]] = []  # (holder, slot) of lists to freeze, innermost last
    while stack:
        item, holder, slot = stack.pop()
        if isinstance(item, list):
            out: List[Any] = [None] * len(item)
            holder[slot] = out
            stack.extend((v, out, i) for i, v in enumerate(item))
        elif not isinstance(item, dict):
            holder[slot] = item
        elif MARKERS.isdisjoint(item):
            mapping: Dict[str, Any] = dict.fromkeys(item)
            holder[slot] = mapping
            stack.extend((v, mapping, k) for k, v in item.items())
        elif set(item) == {TUPLE} and isinstance(item[TUPLE], list):
            items: List[Any] = [None] * len(item[TUPLE])
            holder[slot] = items
            tuples.append((holder, slot))
            stack.extend((v, items, i) for i, v in enumerate(item[TUPLE]))
        elif set(item) == {DICT} and _is_pairs(item[DICT]):
            escaped: Dict[str, Any] = dict.fromkeys(k for k, _ in item[DICT])
            holder[slot] = escaped
            stack.extend((v, escaped, k) for k, v in item[DICT])
        elif ARRAY in item or SCALAR in item:
            holder[slot] = leaf(item)
        else:
            raise ContractError(message(subject, "use the markers snapshot files write", shown(item), fix))
    for holder, slot in reversed(tuples):  # inner tuples are frozen before the lists holding them
        holder[slot] = tuple(holder[slot])
    return root[0]


def _is_pairs(value: Any) -> bool:
    pairs = isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in value
    )
    return pairs and len({p[0] for p in value}) == len(value)


def shown(item: Any) -> str:
    return short_json(item, 80)  # json.dumps recursed once a level: a deep stranger's tree raised RecursionError

"""The abstract :class:`Space` and the helpers every concrete space shares.

Trees of spaces (``Dict`` / ``Tuple``) nest at most :data:`MAX_DEPTH` levels; equality,
``to_dict`` and :func:`from_dict` walk them with explicit stacks, never by recursion, so no depth
the constructors accept can raise ``RecursionError``.
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from bridge.errors import ContractError, SpecError, message
from bridge.safe_json import FAST_DEPTH, depth_of, preview

# (subject, expectation, actual, fix): the four parts of an error sentence, built lazily so that
# `contains` never pays for formatting.
Mismatch = Tuple[str, str, str, str]

MAX_DEPTH = 256  # Dict/Tuple levels; documented in docs/safe-files.md
# what from_dict may allocate for the bounds of the leaves of one tree (a stranger's manifest)
MAX_BOUND_BYTES = 64 * 2**20

_FROM_DICT_FIX = "Pass the output of Space.to_dict()"
# type name -> (loader(data, where, children, budget), children(data, where) or None for a leaf)
_TYPES: Dict[str, Tuple[Callable[..., Space], Optional[Callable[[dict, str], list]]]] = {}
_default_rng: Optional[np.random.Generator] = None


def _rng(rng: Any, owner: str) -> np.random.Generator:
    """Return ``rng``, or a process-wide unseeded Generator when it is None."""
    global _default_rng
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is not None:
        raise SpecError(
            message(
                f"{owner}.sample rng",
                "be a numpy Generator or None",
                type(rng).__name__,
                "Pass np.random.default_rng(seed), or env.np_random (RandomState draws other numbers)",
            )
        )
    if _default_rng is None:
        _default_rng = np.random.default_rng()
    return _default_rng


def _masked(x: Any, path: str) -> Optional[Mismatch]:
    """A numpy masked array is refused: its comparisons skip masked values, but the env gets them."""
    if isinstance(x, np.ma.MaskedArray):
        expectation = "be a plain numpy array (a mask hides values from the bounds check, not from the env)"
        return (path, expectation, "a numpy.ma.MaskedArray", "Pass np.ma.getdata(value) or value.filled(fill)")
    return None


def _describe(x: Any) -> str:
    """A short, readable account of a value for error messages."""
    if isinstance(x, np.ndarray):
        text = np.array2string(x, threshold=8, edgeitems=2, separator=", ")
        return f"array({text}, shape={x.shape}, dtype={x.dtype})"
    if isinstance(x, np.generic):
        return f"{type(x).__name__}({x!r})" if not repr(x).startswith("np.") else repr(x)
    if isinstance(x, (dict, list, tuple)):
        depth = depth_of(x)
        if depth > FAST_DEPTH:  # repr would recurse once a level (RecursionError near 1,000)
            return f"{preview(x)}... (nested {depth} levels)"
    text = repr(x)
    # a cut text ends in ")", never in "...": the message's own period must not make "...."
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def _as_int(value: Any, name: str, owner: str, minimum: int) -> int:
    """Validate an integer constructor argument such as ``Discrete(n)``."""
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok or int(value) < minimum:
        raise SpecError(
            message(
                f"{owner} {name}",
                f"be an integer >= {minimum}",
                value,
                f"Pass a plain int, e.g. {owner}({name}={max(minimum, 1)})",
            )
        )
    return int(value)


def _register(name: str, loader: Callable[..., Space], children: Optional[Callable[[dict, str], list]] = None) -> None:
    _TYPES[name] = (loader, children)


def _field(data: dict, key: str, where: str, expectation: str, test: Callable[[Any], bool]) -> Any:
    """``data[key]`` from a space dict, or a SpecError naming the path and what it must be."""
    if key not in data or not test(data[key]):
        got = _describe(data[key]) if key in data else "nothing"
        raise SpecError(message(f"{where}[{key!r}]", f"be {expectation}", got, _FROM_DICT_FIX))
    return data[key]


class _Budget:
    """Bytes of bounds a :func:`from_dict` tree may still allocate."""

    def __init__(self, left: int) -> None:
        self.left = left

    def take(self, nbytes: int, where: str) -> None:
        if nbytes > self.left:
            expectation = f"allocate at most {MAX_BOUND_BYTES} bytes of bounds in one tree"
            raise SpecError(message(where, expectation, f"{nbytes} more bytes", "Use a smaller space"))
        self.left -= nbytes


def from_dict(data: Any) -> Space:
    """Rebuild a space from :meth:`Space.to_dict` output (exact round trip).

    ``data`` may come from a stranger's file: anything malformed is a :class:`SpecError` naming
    the path inside the dict (``space dict['spaces'][1]['shape']``); trees deeper than
    :data:`MAX_DEPTH` or whose bounds would take more than :data:`MAX_BOUND_BYTES` are refused
    before they are built.
    """
    budget = _Budget(MAX_BOUND_BYTES)
    # breadth-first: each node's children get higher indices, so building in reverse order
    # always finds a node's children already built
    nodes: List[Tuple[Any, str, int]] = [(data, "space dict", 0)]
    kids: List[List[Tuple[Any, int]]] = []
    for data_i, where, depth in nodes:
        _loader, children = _TYPES[_kind(data_i, where)]
        mine: List[Tuple[Any, int]] = []
        if children is not None:
            if depth >= MAX_DEPTH:
                expectation = f"nest at most {MAX_DEPTH} Dict/Tuple levels"
                raise SpecError(message(where, expectation, f"a Dict/Tuple at level {depth + 1}", _FROM_DICT_FIX))
            for key, child, child_where in children(data_i, where):
                mine.append((key, len(nodes)))
                nodes.append((child, child_where, depth + 1))
        kids.append(mine)
    built: List[Any] = [None] * len(nodes)
    for i in reversed(range(len(nodes))):
        data_i, where, _ = nodes[i]
        loader, _children = _TYPES[data_i["type"]]
        built[i] = loader(data_i, where, [(key, built[j]) for key, j in kids[i]], budget)
    return built[0]


def _kind(data: Any, where: str) -> str:
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in _TYPES:
        got = repr(kind) if kind is not None else _describe(data)
        raise SpecError(message(f"{where}['type']", f"be one of {sorted(_TYPES)}", got, _FROM_DICT_FIX))
    return kind


class Space(abc.ABC):
    """A set of values with a shape and a dtype, numpy only.

    Subclasses implement :meth:`mismatch` (why a value is outside, or None), :meth:`sample`,
    :meth:`_node_dict` (the JSON-able description, children given) and :meth:`_params` (the values
    that define equality, children excluded); composites also implement :meth:`_children`.
    """

    shape: Optional[Tuple[int, ...]] = None
    dtype: Optional[np.dtype] = None
    _depth = 0  # Dict/Tuple levels below and including this space

    @abc.abstractmethod
    def sample(self, rng: Optional[np.random.Generator] = None) -> Any:
        """Draw a value with ``rng`` (a numpy Generator; a shared unseeded one if None)."""

    @abc.abstractmethod
    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        """Explain why ``x`` is not in the space, as ``(subject, expectation, actual, fix)``."""

    @abc.abstractmethod
    def _node_dict(self, children: List[dict]) -> dict:
        """This node's description, given the descriptions of :meth:`_children` in order."""

    @abc.abstractmethod
    def _params(self) -> tuple:
        """The values that define equality (the children excluded)."""

    def _memory(self) -> int:
        """The bytes this space's arrays, a value and its checks take (checked against the machine's
        memory by ``bridge.spaces._memory``); a space with no arrays (Discrete) takes none to speak of."""
        return 0

    def _children(self) -> List[Tuple[Any, Space]]:
        """``(key or index, child)`` pairs of a composite space; none for a leaf."""
        return []

    def to_dict(self) -> dict:
        """A JSON-able description; :func:`bridge.spaces.from_dict` inverts it exactly."""
        return _walk_to_dict(self)

    def contains(self, x: Any) -> bool:
        """True when ``x`` has the exact dtype and shape of the space and lies inside it."""
        return self.mismatch(x) is None

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)

    def validate(self, x: Any, path: str = "value", error: type = ContractError) -> None:
        """Raise ``error`` with the house message when ``x`` is not in the space."""
        found = self.mismatch(x, path)
        if found is not None:
            raise error(message(*found))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return _walk_equal(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]  # spaces compare by value; keep them unhashable


def _walk_equal(a: Space, b: Space) -> bool:
    stack = [(a, b, 0)]
    while stack:
        x, y, depth = stack.pop()
        if type(x) is not type(y) or not _params_equal(x._params(), y._params()):
            return False
        x_kids, y_kids = x._children(), y._children()
        if len(x_kids) != len(y_kids):
            return False
        _check_depth(x, depth, bool(x_kids))
        for (kx, cx), (ky, cy) in zip(x_kids, y_kids):
            if kx != ky:
                return False
            stack.append((cx, cy, depth + 1))
    return True


def difference(expected: Space, got: Space) -> Optional[Tuple[str, str, str]]:
    """Where two spaces first differ, as ``(path, expected, got)``, or None when they are equal.

    ``path`` is like ``"['pos'][1]"`` (``""`` at the root); the two texts are the reprs of the
    subspaces there, with the field that differs when the reprs alone do not show it.
    """
    stack: List[Tuple[Space, Space, str, int]] = [(expected, got, "", 0)]
    while stack:
        x, y, path, depth = stack.pop()
        x_kids, y_kids = x._children(), y._children()
        same_keys = [kx for kx, _ in x_kids] == [ky for ky, _ in y_kids]
        if type(x) is type(y) and not same_keys:  # a Dict's keys or a Tuple's length: say only that
            return path, _outline(x), _outline(y)
        if type(x) is not type(y) or not _params_equal(x._params(), y._params()):
            x_text, y_text = repr(x), repr(y)
            if x_text == y_text:  # e.g. bounds that differ past what repr shows
                field = _first_field(x, y)
                x_text, y_text = f"{x_text} ({field} {_short(x, field)})", f"{y_text} ({field} {_short(y, field)})"
            return path, x_text, y_text
        _check_depth(x, depth, bool(x_kids))
        for (key, cx), (_, cy) in reversed(list(zip(x_kids, y_kids))):
            stack.append((cx, cy, f"{path}[{key!r}]", depth + 1))
    return None


def _outline(space: Space) -> str:
    keys = [key for key, _ in space._children()]
    if all(isinstance(k, int) for k in keys):
        return f"{type(space).__name__} of {len(keys)} spaces"
    return f"{type(space).__name__} with keys {keys}"


def _first_field(x: Space, y: Space) -> str:
    names = getattr(x, "_param_names", ())
    for name, a, b in zip(names, x._params(), y._params()):
        if not _params_equal(a, b):
            return name
    return "parameters"


def _short(space: Space, field: str) -> str:
    value = getattr(space, field, None)
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=6, edgeitems=2, separator=", ")
    return repr(value)


def _walk_to_dict(root: Space) -> dict:
    nodes: List[Tuple[Space, int]] = [(root, 0)]
    kids: List[List[int]] = []
    for node, depth in nodes:
        children = node._children()
        _check_depth(node, depth, bool(children))
        kids.append([len(nodes) + i for i in range(len(children))])
        nodes.extend((child, depth + 1) for _, child in children)
    built: List[Any] = [None] * len(nodes)
    for i in reversed(range(len(nodes))):
        built[i] = nodes[i][0]._node_dict([built[j] for j in kids[i]])
    return built[0]


def _check_depth(node: Space, depth: int, composite: bool) -> None:
    # only a tree changed after construction (a cycle through .spaces) can get here
    if composite and depth >= MAX_DEPTH:
        raise SpecError(
            message(
                f"{type(node).__name__} nesting",
                f"be at most {MAX_DEPTH} Dict/Tuple levels",
                "a deeper tree (changed after construction, or a cycle)",
                "Build spaces once and do not edit their .spaces",
            )
        )


def _params_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_params_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)

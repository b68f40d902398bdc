"""JSON text of any allowed depth, read and written without recursion, within :class:`Limits`.

``json.loads`` / ``json.dumps`` recurse once per nesting level and raise ``RecursionError`` on a
deep document (or deep in a caller's stack). Here the depth is measured first, without parsing;
shallow documents (the common case) then go through the C ``json`` module, deeper ones up to the
caller's limit through a small iterative parser that accepts exactly what ``json.loads`` accepts
(including ``NaN`` / ``Infinity``, which ``json.dumps`` writes for non-finite floats).

A text is also bounded by what it expands to, not only by its length: 60 MB of ``{},`` are twenty
million dicts (gigabytes once parsed). Before parsing, a text longer than the limits on containers
and values (it cannot hold more of them than it has characters) has its containers (``[`` / ``{``)
and values (separators ``,`` plus containers) counted outside strings, vectorized, and is refused
past :attr:`Limits.max_json_containers` / :attr:`Limits.max_json_values`.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # the C implementation where available; never recursive
from typing import Any, List, Tuple

import numpy as np

from bridge.regular_file import Refusal as _Refusal
from bridge.regular_file import read_regular
from bridge.safe_files import LIMITS, Limits

__all__ = [
    "parse_json",
    "read_json_file",
    "depth_of_text",
    "shape_of_text",
    "depth_of",
    "loads",
    "dumps",
    "preview",
    "short_json",
    "FAST_DEPTH",
]

FAST_DEPTH = 100  # documents at most this deep use the json module's C code
# a JSON string: from an opening quote to the closing one, or to the end of a text that never
# closes it (so the pattern never backtracks: linear time on any input)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_OPEN, _CLOSE, _COMMA = (ord("["), ord("{")), (ord("]"), ord("}")), ord(",")
_CHUNK = 1 << 20


def depth_of_text(text: str) -> int:
    """The deepest nesting of ``[`` / ``{`` in ``text`` outside strings (vectorized, no parsing)."""
    return shape_of_text(text)[0]


def shape_of_text(text: str) -> Tuple[int, int, int]:
    """``(depth, containers, values)`` of ``text`` outside strings, vectorized, without parsing:
    the deepest nesting, the ``[`` / ``{`` it opens, and its values (each ``,`` separates one more;
    each container is one; a key counts with its value). An upper bound for text that is not JSON."""
    bare = np.frombuffer(_STRING.sub('""', text).encode("utf-8", "ignore"), dtype=np.uint8)
    deepest = level = containers = commas = 0
    for start in range(0, len(bare), _CHUNK):
        chunk = bare[start : start + _CHUNK]
        opens = np.isin(chunk, _OPEN)
        step = opens.astype(np.int64) - np.isin(chunk, _CLOSE)
        containers += int(np.count_nonzero(opens))
        commas += int(np.count_nonzero(chunk == _COMMA))
        if step.size:
            running = level + np.cumsum(step)
            deepest, level = max(deepest, int(running.max())), int(running[-1])
    return deepest, containers, commas + containers + 1


def depth_of(tree: Any) -> int:
    """The nesting of dicts and lists (tuples count as lists) in a Python tree, without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, (list, tuple)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item)
    return deepest


def loads(text: str, depth: int) -> Any:
    """Parse ``text``, already measured by :func:`depth_of_text` as ``depth`` levels deep.

    Raises ``ValueError`` (``json.JSONDecodeError`` or our own) for text that is not JSON.
    """
    return json.loads(text) if depth <= FAST_DEPTH else _Parser(text).parse()


def dumps(tree: Any, depth: int, indent: Any = None) -> str:
    """``json.dumps(tree)`` for a tree ``depth`` levels deep; compact and iterative when deep."""
    return json.dumps(tree, indent=indent) if depth <= FAST_DEPTH else _dumps_deep(tree)


def preview(tree: Any, limit: int = 60) -> str:
    """``repr(tree)[:limit]`` for nested dicts, lists and tuples of any depth, without recursion.

    ``repr`` of a stranger's tree nested a few hundred levels deep raises ``RecursionError``
    (in an error message about that very tree); this writes the same text, left to right, and
    stops once ``limit`` characters are out.
    """
    return _cut(tree, limit, as_json=False)


def short_json(tree: Any, limit: int = 80) -> str:
    """``json.dumps(tree, default=repr)[:limit]`` at any depth, without recursion (as :func:`preview`)."""
    return _cut(tree, limit, as_json=True)


def _cut(tree: Any, limit: int, as_json: bool) -> str:
    out: List[str] = []
    size, stack = 0, [tree]
    while stack and size < limit:
        item = stack.pop()
        if isinstance(item, _Raw):
            text = str(item)
        elif type(item) is dict:
            text, pairs = "{", list(item.items())
            stack.append(_Raw("}"))
            for i in reversed(range(len(pairs))):
                key = json.dumps(str(pairs[i][0])) if as_json else repr(pairs[i][0])
                stack.append(pairs[i][1])
                stack.append(_Raw((", " if i else "") + key + ": "))
        elif type(item) in (list, tuple):
            is_list = as_json or type(item) is list
            text = "[" if is_list else "("
            stack.append(_Raw("]" if is_list else ",)" if len(item) == 1 else ")"))
            for i in reversed(range(len(item))):
                stack.append(item[i])
                if i:
                    stack.append(_Raw(", "))
        else:
            text = json.dumps(item, default=repr) if as_json else repr(item)
        out.append(text)
        size += len(text)
    return "".join(out)[:limit]


# -- within limits, as the house error ------------------------------------------------------------
def parse_json(text: str, *, subject: str, fix: str, limits: Limits = LIMITS) -> Any:
    """``json.loads(text)`` within the limits: length and depth first, then no recursion."""
    refuse = _Refusal(subject, fix)
    if len(text) > limits.max_json_bytes:
        expectation = f"be at most {limits.max_json_bytes:,} characters of JSON (Limits.max_json_bytes)"
        raise refuse(expectation, f"{len(text):,} characters")
    opens = text.count("[") + text.count("{")  # no deeper than its opening brackets: small texts skip the scan
    counted = len(text) > min(limits.max_json_containers, limits.max_json_values)  # else it holds too few to matter
    if counted or opens > min(FAST_DEPTH, limits.max_json_depth):
        depth, containers, values = shape_of_text(text)
    else:
        depth, containers, values = opens, 0, 0
    if depth > limits.max_json_depth:
        raise refuse(f"nest at most {limits.max_json_depth:,} levels (Limits.max_json_depth)", f"{depth:,} levels")
    if containers > limits.max_json_containers:
        expectation = f"open at most {limits.max_json_containers:,} lists and dicts (Limits.max_json_containers)"
        raise refuse(expectation, f"{containers:,}")
    if values > limits.max_json_values:
        raise refuse(f"hold at most {limits.max_json_values:,} values (Limits.max_json_values)", f"{values:,}")
    try:
        return loads(text, depth)
    except ValueError as e:
        raise refuse("be JSON text", f"{text[:40]!r}") from e


def read_json_file(path: str, *, subject: str, fix: str, limits: Limits = LIMITS) -> Any:
    """A JSON file, sized before it is read, decoded as UTF-8, parsed by :func:`parse_json`."""
    refuse = _Refusal(subject, fix)
    expectation = f"be at most {limits.max_json_bytes:,} bytes of JSON (Limits.max_json_bytes)"
    data = read_regular(path, limits.max_json_bytes, refuse, expectation)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise refuse("be UTF-8 JSON text", f"bytes that are not UTF-8 ({e.reason} at byte {e.start})") from e
    return parse_json(text, subject=subject, fix=fix, limits=limits)


# -- the iterative parser ------------------------------------------------------------------------
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_CONSTANTS = {"null": None, "true": True, "false": False, "NaN": float("nan"), "Infinity": float("inf")}
_CONSTANTS["-Infinity"] = float("-inf")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0

    def _skip(self) -> str:
        self.i = _WHITESPACE.match(self.text, self.i).end()  # type: ignore[union-attr]
        return self.text[self.i] if self.i < len(self.text) else ""

    def _fail(self, what: str) -> ValueError:
        return ValueError(f"{what} at char {self.i}")

    def parse(self) -> Any:
        # each open container: [container, pending dict key or None]
        stack: List[List[Any]] = []
        root: List[Any] = []
        while True:
            ch = self._skip()
            if stack and isinstance(stack[-1][0], dict) and stack[-1][1] is None:
                if ch == "}" and not stack[-1][0]:
                    value = stack.pop()[0]
                    self.i += 1
                else:
                    stack[-1][1] = self._key(ch)
                    continue
            elif ch == "]" and stack and isinstance(stack[-1][0], list) and not stack[-1][0]:
                value = stack.pop()[0]
                self.i += 1
            elif ch in "[{" and ch:
                stack.append([[] if ch == "[" else {}, None])
                self.i += 1
                continue
            else:
                value = self._scalar(ch)
            # attach the finished value, then close every container that ends here
            while True:
                if not stack:
                    root.append(value)
                    break
                container, key = stack[-1]
                if isinstance(container, list):
                    container.append(value)
                else:
                    container[key] = value
                    stack[-1][1] = None
                ch = self._skip()
                if ch == ",":
                    self.i += 1
                    if isinstance(container, dict):
                        stack[-1][1] = self._key(self._skip())
                    break
                if ch == ("]" if isinstance(container, list) else "}"):
                    self.i += 1
                    value = stack.pop()[0]
                    continue
                raise self._fail("Expecting ',' delimiter")
            if not stack:
                if self._skip():
                    raise self._fail("Extra data")
                return root[0]

    def _key(self, ch: str) -> str:
        if ch != '"':
            raise self._fail("Expecting property name enclosed in double quotes")
        key, self.i = scanstring(self.text, self.i + 1)
        if self._skip() != ":":
            raise self._fail("Expecting ':' delimiter")
        self.i += 1
        return key

    def _scalar(self, ch: str) -> Any:
        if ch == '"':
            value, self.i = scanstring(self.text, self.i + 1)
            return value
        for word, value in _CONSTANTS.items():
            if self.text.startswith(word, self.i):
                self.i += len(word)
                return value
        match = _NUMBER.match(self.text, self.i)
        if match is None or not ch:
            raise self._fail("Expecting value")
        self.i = match.end()
        whole, fraction, exponent = match.groups()
        return float(whole + (fraction or "") + (exponent or "")) if fraction or exponent else int(whole)


# -- the iterative writer ------------------------------------------------------------------------
class _Raw(str):
    """Text to emit as it is (punctuation), as opposed to a value to encode."""


def _dumps_deep(tree: Any) -> str:
    out: List[str] = []
    stack: List[Any] = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            out.append(item)
        elif isinstance(item, dict):
            pairs: List[Tuple[str, Any]] = list(item.items())
            out.append("{")
            stack.append(_Raw("}"))
            for i in reversed(range(len(pairs))):
                key, value = pairs[i]
                if not isinstance(key, str):
                    raise TypeError(f"keys must be str, not {type(key).__name__}")
                stack.append(value)
                stack.append(_Raw(("," if i else "") + json.dumps(key) + ":"))
        elif isinstance(item, (list, tuple)):
            out.append("[")
            stack.append(_Raw("]"))
            for i in reversed(range(len(item))):
                stack.append(item[i])
                if i:
                    stack.append(_Raw(","))
        else:
            out.append(json.dumps(item))
    return "".join(out)

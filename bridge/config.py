"""``--config`` for every ``envbridge train`` command: ``KEY=VALUE`` pairs and small YAML files,
read without a YAML library and checked against a declared schema before anything runs.

The file format is the subset of YAML a config needs: ``key: value`` lines, nested mappings by
indentation (flattened to dotted keys, as ``KEY=VALUE`` writes them), ``#`` comments, scalars and
flow lists (``[32, 32]``). Anchors, aliases, tags, multi-line strings and documents are refused by
name: a file from a stranger cannot expand, run code or exhaust memory (:data:`LIMITS`). A key set
twice in one file (``prefill: 10`` then ``prefill: 20``, or ``dataset:`` opened twice) is refused:
YAML keys are unique, and keeping either value would be a guess. Across ``--config`` values, later wins.
A ``key:`` with neither a value nor nested keys is refused too (it was dropped without a word).

Scalars read as YAML 1.2 core does, with one rule for switches: only ``true`` / ``false`` are
booleans (``yes``, ``no``, ``on``, ``off`` are refused where a bool is wanted, never read as one).
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from bridge.errors import SpecError, error
from bridge.regular_file import Refusal, read_regular

__all__ = [
    "LIMITS",
    "read",
    "scalar",
    "Key",
    "check_keys",
    "number",
    "count",
    "flag",
    "fraction",
    "choice",
    "text",
    "items",
]

LIMITS = {"bytes": 65536, "entries": 1000, "depth": 8, "list": 1000}
_INT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_SPECIAL = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
_REFUSED = ("&", "*", "!", "|", ">", "---", "...", "{", "?")


def _refuse(subject: str, expectation: str, got: str, fix: str) -> SpecError:
    return error(SpecError, subject, expectation, got, fix)  # type: ignore[return-value]


def scalar(text: str, where: str) -> Any:
    """One YAML scalar (or a flow list of them)."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        items = [] if not inner else [scalar(part, where) for part in inner.split(",")]
        if len(items) > LIMITS["list"]:
            raise _refuse(where, f"hold at most {LIMITS['list']} items", f"{len(items)} items", "Shorten the list")
        return items
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text.startswith(_REFUSED):
        fix = "Write the value out (anchors, aliases, tags, flow mappings and block strings are not read)"
        raise _refuse(where, "be a plain YAML scalar or a flow list", repr(text), fix)
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "~", ""):
        return None
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    if lowered in _SPECIAL:
        return _SPECIAL[lowered]
    return text


def read(values: Iterable[str], flag_name: str = "--config") -> Dict[str, Any]:
    """``--config`` values (``KEY=VALUE`` or a ``.yaml``/``.yml`` file), later wins, as dotted keys."""
    out: Dict[str, Any] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep and value.endswith((".yaml", ".yml")):
            out.update(_read_file(value, flag_name))
        elif sep and key.strip():
            out[key.strip()] = scalar(raw, f"{flag_name} {key.strip()}")
        else:
            fix = f"Pass e.g. {flag_name} learning_rate=0.001 or {flag_name} run.yaml"
            raise _refuse(flag_name, "be KEY=VALUE or a YAML file (.yaml, .yml)", repr(value), fix)
    return out


def _read_file(name: str, flag_name: str) -> Dict[str, Any]:
    subject = f"{flag_name} file {name}"
    refuse = Refusal(subject, f"Pass a YAML file (a regular file of at most {LIMITS['bytes']} bytes)", SpecError)
    data = read_regular(name, LIMITS["bytes"], refuse, f"be at most {LIMITS['bytes']} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _refuse(subject, "be UTF-8 text", f"a byte that is not ({e.reason})", "Save it as UTF-8") from e
    return _mapping(text.splitlines(), subject)


def _mapping(lines: List[str], subject: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    stack: List[Tuple[int, str]] = []  # (indent, key) of the open mappings
    seen: Dict[str, int] = {}  # dotted key (a value or an open mapping) -> the line that set it
    opened: Optional[Tuple[int, str, int]] = None  # (indent, dotted key, line) of a `key:` awaiting nested keys
    for number, line in enumerate(lines, 1):
        body = _strip_comment(line)
        if not body.strip():
            continue
        where = f"{subject} line {number}"
        indent = len(body) - len(body.lstrip(" "))
        if "\t" in body[:indent]:
            raise _refuse(where, "be indented with spaces", "a tab", "Indent with spaces")
        key, sep, value = body.strip().partition(":")
        if not sep or not key or key.startswith(_REFUSED) or key.startswith("-"):
            raise _refuse(where, "read `key: value`", repr(body.strip()), "Write one `key: value` a line")
        if opened is not None and indent <= opened[0]:
            raise _empty(subject, opened)
        opened = None
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if len(stack) >= LIMITS["depth"]:
            raise _refuse(where, f"nest at most {LIMITS['depth']} levels", f"{len(stack) + 1}", "Flatten it")
        dotted = ".".join([k for _, k in stack] + [key.strip()])
        if dotted in seen:  # YAML keys are unique; a reader that kept one of the two would guess
            got = f"{dotted!r} again (line {seen[dotted]} sets it too)"
            raise _refuse(where, "set each key once", got, "Keep one of the two lines")
        seen[dotted] = number
        if value.strip():
            out[dotted] = scalar(value, f"{subject} {dotted}")
            if len(out) > LIMITS["entries"]:
                raise _refuse(subject, f"hold at most {LIMITS['entries']} keys", "more", "Split the config")
        else:
            stack.append((indent, key.strip()))
            opened = (indent, dotted, number)
    if opened is not None:
        raise _empty(subject, opened)
    return out


def _empty(subject: str, opened: Tuple[int, str, int]) -> SpecError:
    """``prefill:`` with nothing after the colon and nothing indented under it (YAML's null): it was
    dropped without a word; a value forgotten is refused, never read as "keep the default"."""
    _, dotted, number = opened
    fix = "Write the value after the colon, or indent the nested keys under it"
    return _refuse(f"{subject} line {number}", "give the key a value or nested keys", f"{dotted!r} with neither", fix)


def _strip_comment(line: str) -> str:
    quote = None
    for i, ch in enumerate(line):
        if ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


# -- the schema: one declared type and range per key ---------------------------------------------
Check = Callable[[str, Any], Any]


class Key:
    """One config key a command takes: its check (returns the value) and what it means."""

    __slots__ = ("check", "meaning")

    def __init__(self, check: Check, meaning: str) -> None:
        self.check, self.meaning = check, meaning


def number(low: float = -math.inf, high: float = math.inf, *, open_low: bool = False) -> Check:
    """A finite real in [low, high] (``(low, high]`` with ``open_low``)."""

    def check(subject: str, value: Any) -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        inside = ok and (value > low if open_low else value >= low) and value <= high
        if not inside:
            where = f"{'(' if open_low else '['}{low}, {high}]"
            raise _refuse(subject, f"be a finite number in {where}", repr(value), "Pass a number in range")
        return float(value)

    return check


def count(low: int = 0, high: Optional[int] = None, *, whole_floats: bool = False) -> Check:
    """A whole number >= ``low`` (and <= ``high``); ``64.7`` is refused, never truncated.

    ``whole_floats`` also takes a float that is a whole number (``1e5`` in YAML is a float), as an int.
    """

    def check(subject: str, value: Any) -> int:
        if whole_floats and type(value) is float and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            expectation = f"be an int >= {low}" + (f" and <= {high}" if high is not None else "")
            raise _refuse(subject, expectation, repr(value), "Pass a whole number in range")
        return value

    return check


def text(subject: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _refuse(subject, "be a string", repr(value), "Quote the value")
    return value


def items(each: Check, low: int = 0) -> Check:
    """A list (or tuple) of at least ``low`` values, each passing ``each``; a tuple comes back."""

    def check(subject: str, value: Any) -> tuple:
        if not isinstance(value, (list, tuple)) or len(value) < low:
            raise _refuse(subject, f"be a list of at least {low} values", repr(value), "Write e.g. [32, 32]")
        return tuple(each(f"{subject}[{i}]", v) for i, v in enumerate(value))

    return check


def flag(subject: str, value: Any) -> bool:
    if type(value) is not bool:
        raise _refuse(subject, "be true or false", repr(value), "Write true or false (yes/no/on/off are not read)")
    return value


def fraction(subject: str, value: Any) -> float:
    return number(0.0, 1.0)(subject, value)


def choice(*values: Any) -> Check:
    def check(subject: str, value: Any) -> Any:
        if value not in values:
            raise _refuse(subject, f"be one of {list(values)}", repr(value), "Pick one")
        return value

    return check


def check_keys(given: Dict[str, Any], schema: Dict[str, Key], flag_name: str = "--config") -> Dict[str, Any]:
    """``given`` checked against ``schema``: an unknown key is refused with the known ones listed."""
    out = {}
    for key, value in given.items():
        if key not in schema:
            fix = "Known keys: " + ", ".join(sorted(schema))
            raise _refuse(f"{flag_name} key", "be one this command takes", repr(key), fix)
        out[key] = schema[key].check(f"{flag_name} {key}", value)
    return out

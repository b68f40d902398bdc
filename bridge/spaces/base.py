"""The abstract :class:`Space` and the helpers every concrete space shares."""

from __future__ import annotations

import abc
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from bridge.errors import ContractError, SpecError, message

# (subject, expectation, actual, fix): the four parts of an error sentence, built lazily so that
# `contains` never pays for formatting.
Mismatch = Tuple[str, str, str, str]

_TYPES: Dict[str, Callable[[dict], Space]] = {}
_default_rng: Optional[np.random.Generator] = None


def _rng(rng: Optional[np.random.Generator]) -> np.random.Generator:
    """Return ``rng``, or a process-wide unseeded Generator when it is None."""
    global _default_rng
    if rng is not None:
        return rng
    if _default_rng is None:
        _default_rng = np.random.default_rng()
    return _default_rng


def _describe(x: Any) -> str:
    """A short, readable account of a value for error messages."""
    if isinstance(x, np.ndarray):
        text = np.array2string(x, threshold=8, edgeitems=2, separator=", ")
        return f"array({text}, shape={x.shape}, dtype={x.dtype})"
    if isinstance(x, np.generic):
        return f"{type(x).__name__}({x!r})" if not repr(x).startswith("np.") else repr(x)
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


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


def _register(name: str, loader: Callable[[dict], Space]) -> None:
    _TYPES[name] = loader


def from_dict(data: dict) -> Space:
    """Rebuild a space from :meth:`Space.to_dict` output (exact round trip)."""
    kind = data.get("type") if isinstance(data, dict) else None
    if kind not in _TYPES:
        raise SpecError(
            message(
                "space dict 'type'",
                f"be one of {sorted(_TYPES)}",
                repr(kind) if kind is not None else _describe(data),
                "Pass the output of Space.to_dict()",
            )
        )
    return _TYPES[kind](data)


class Space(abc.ABC):
    """A set of values with a shape and a dtype, numpy only.

    Subclasses implement :meth:`mismatch` (why a value is outside, or None), :meth:`sample`,
    :meth:`to_dict` and :meth:`_params` (the values that define equality).
    """

    shape: Optional[Tuple[int, ...]] = None
    dtype: Optional[np.dtype] = None

    @abc.abstractmethod
    def sample(self, rng: Optional[np.random.Generator] = None) -> Any:
        """Draw a value with ``rng`` (a numpy Generator; a shared unseeded one if None)."""

    @abc.abstractmethod
    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        """Explain why ``x`` is not in the space, as ``(subject, expectation, actual, fix)``."""

    @abc.abstractmethod
    def to_dict(self) -> dict:
        """A JSON-able description; :func:`bridge.spaces.from_dict` inverts it exactly."""

    @abc.abstractmethod
    def _params(self) -> tuple:
        """The values that define equality."""

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
        return _params_equal(self._params(), other._params())  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]  # spaces compare by value; keep them unhashable


def _params_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_params_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)

"""Composite spaces: Dict (ordered, string keys) and Tuple."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union
from typing import Tuple as TupleT

import numpy as np

from bridge.errors import SpecError, message
from bridge.spaces.base import Mismatch, Space, _describe, _register, _rng, from_dict


class Dict(Space):
    """A mapping of string keys to spaces; the key order is the order given (never sorted)."""

    def __init__(
        self,
        spaces: Union[Mapping[str, Space], Iterable[TupleT[str, Space]], None] = None,
        **kwargs: Space,
    ) -> None:
        pairs = list(spaces.items() if isinstance(spaces, Mapping) else (spaces or []))
        pairs += list(kwargs.items())
        self.spaces: dict[str, Space] = {}
        for key, space in pairs:
            if not isinstance(key, str):
                raise SpecError(message("Dict key", "be a str", key, "Name every entry with a string"))
            if not isinstance(space, Space):
                raise SpecError(
                    message(
                        f"Dict[{key!r}]",
                        "be a bridge.spaces.Space",
                        _describe(space),
                        "Build it from bridge.spaces (Box, Discrete, ...)",
                    )
                )
            self.spaces[key] = space

    def __getitem__(self, key: str) -> Space:
        return self.spaces[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.spaces)

    def __len__(self) -> int:
        return len(self.spaces)

    def keys(self):  # noqa: D102 - mapping protocol
        return self.spaces.keys()

    def items(self):  # noqa: D102 - mapping protocol
        return self.spaces.items()

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if not isinstance(x, Mapping):
            return (path, f"be a dict with keys {list(self.spaces)}", _describe(x), "Return a dict")
        if set(x) != set(self.spaces):
            missing = [k for k in self.spaces if k not in x]
            extra = [k for k in x if k not in self.spaces]
            return (
                path,
                f"have exactly the keys {list(self.spaces)}",
                f"missing {missing}, extra {extra}",
                "Return every declared key and no other",
            )
        for key, space in self.spaces.items():
            found = space.mismatch(x[key], f"{path}[{key!r}]")
            if found is not None:
                return found
        return None

    def sample(self, rng: Optional[np.random.Generator] = None) -> dict:
        rng = _rng(rng)
        return {key: space.sample(rng) for key, space in self.spaces.items()}

    def _params(self) -> tuple:
        return (list(self.spaces), list(self.spaces.values()))

    def to_dict(self) -> dict:
        return {"type": "Dict", "spaces": [[k, s.to_dict()] for k, s in self.spaces.items()]}

    def __repr__(self) -> str:
        return "Dict(" + ", ".join(f"{k!r}: {s!r}" for k, s in self.spaces.items()) + ")"


class Tuple(Space):
    """A fixed-length sequence of spaces; values are tuples (lists are accepted)."""

    def __init__(self, spaces: Sequence[Space]) -> None:
        self.spaces: TupleT[Space, ...] = tuple(spaces)
        for i, space in enumerate(self.spaces):
            if not isinstance(space, Space):
                raise SpecError(
                    message(
                        f"Tuple[{i}]",
                        "be a bridge.spaces.Space",
                        _describe(space),
                        "Build it from bridge.spaces (Box, Discrete, ...)",
                    )
                )

    def __getitem__(self, index: int) -> Space:
        return self.spaces[index]

    def __len__(self) -> int:
        return len(self.spaces)

    def __iter__(self) -> Iterator[Space]:
        return iter(self.spaces)

    def mismatch(self, x: Any, path: str = "value") -> Optional[Mismatch]:
        if not isinstance(x, (tuple, list)) or len(x) != len(self.spaces):
            return (path, f"be a tuple of length {len(self.spaces)}", _describe(x), "Return a tuple")
        for i, (space, value) in enumerate(zip(self.spaces, x)):
            found = space.mismatch(value, f"{path}[{i}]")
            if found is not None:
                return found
        return None

    def sample(self, rng: Optional[np.random.Generator] = None) -> tuple:
        rng = _rng(rng)
        return tuple(space.sample(rng) for space in self.spaces)

    def _params(self) -> tuple:
        return self.spaces

    def to_dict(self) -> dict:
        return {"type": "Tuple", "spaces": [s.to_dict() for s in self.spaces]}

    def __repr__(self) -> str:
        return "Tuple(" + ", ".join(repr(s) for s in self.spaces) + ")"


_register("Dict", lambda d: Dict([(k, from_dict(v)) for k, v in d["spaces"]]))
_register("Tuple", lambda d: Tuple([from_dict(v) for v in d["spaces"]]))

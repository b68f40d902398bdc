"""Composite spaces: Dict (ordered, string keys) and Tuple."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, List, Mapping, Optional, Sequence, Union
from typing import Tuple as TupleT

import numpy as np

from bridge.errors import SpecError, message
from bridge.spaces._memory import check_together
from bridge.spaces.base import MAX_DEPTH, Mismatch, Space, _Budget, _describe, _field, _register, _rng


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
            if key in self.spaces:  # a list of pairs (or a mapping plus keywords) naming a key twice
                raise SpecError(message("Dict key", "name one entry", f"{key!r} twice", "Give every entry its own key"))
            self.spaces[key] = space
        self._depth = _nested(self, self.spaces.values())
        check_together("Dict", [space._memory() for space in self.spaces.values()])

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

    def _memory(self) -> int:
        return sum(space._memory() for space in self.spaces.values())

    def sample(self, rng: Optional[np.random.Generator] = None) -> dict:
        rng = _rng(rng, "Dict")
        return {key: space.sample(rng) for key, space in self.spaces.items()}

    def _params(self) -> tuple:
        return ()

    def _children(self) -> List[TupleT[Any, Space]]:
        return list(self.spaces.items())

    def _node_dict(self, children: List[dict]) -> dict:
        return {"type": "Dict", "spaces": [[k, child] for k, child in zip(self.spaces, children)]}

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
        self._depth = _nested(self, self.spaces)
        check_together("Tuple", [space._memory() for space in self.spaces])

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

    def _memory(self) -> int:
        return sum(space._memory() for space in self.spaces)

    def sample(self, rng: Optional[np.random.Generator] = None) -> tuple:
        rng = _rng(rng, "Tuple")
        return tuple(space.sample(rng) for space in self.spaces)

    def _params(self) -> tuple:
        return ()

    def _children(self) -> List[TupleT[Any, Space]]:
        return list(enumerate(self.spaces))

    def _node_dict(self, children: List[dict]) -> dict:
        return {"type": "Tuple", "spaces": children}

    def __repr__(self) -> str:
        return "Tuple(" + ", ".join(repr(s) for s in self.spaces) + ")"


def _nested(owner: Space, children: Iterable[Space]) -> int:
    depth = 1 + max((child._depth for child in children), default=0)
    if depth > MAX_DEPTH:
        raise SpecError(
            message(
                f"{type(owner).__name__} nesting",
                f"be at most {MAX_DEPTH} Dict/Tuple levels",
                f"{depth} levels",
                "Flatten the space: nest fewer Dict/Tuple levels",
            )
        )
    return depth


def _is_pair_list(v: Any) -> bool:
    if not (isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in v)):
        return False
    return len({p[0] for p in v}) == len(v)  # a repeated key would silently drop a space


def _dict_children(d: dict, where: str) -> list:
    pairs = _field(d, "spaces", where, "a list of [key, space dict] pairs with distinct keys", _is_pair_list)
    return [(key, child, f"{where}['spaces'][{i}][1]") for i, (key, child) in enumerate(pairs)]


def _tuple_children(d: dict, where: str) -> list:
    items = _field(d, "spaces", where, "a list of space dicts", lambda v: isinstance(v, list))
    return [(i, child, f"{where}['spaces'][{i}]") for i, child in enumerate(items)]


def _load_dict(d: dict, where: str, children: list, budget: _Budget) -> Dict:
    return Dict(children)


def _load_tuple(d: dict, where: str, children: list, budget: _Budget) -> Tuple:
    return Tuple([child for _, child in children])


_register("Dict", _load_dict, _dict_children)
_register("Tuple", _load_tuple, _tuple_children)

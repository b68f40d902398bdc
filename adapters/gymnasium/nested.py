"""Gymnasium's own presentation of composites: a neutral Dict is a Gymnasium Dict and a Tuple a
Gymnasium Tuple, nested as they are, each entry lowered by the Gymnasium lowering
(:mod:`bridge.adapters.gymnasium.lowering`, which SB3's one-level flattening also lives in)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from bridge.adapters._shared.lowering import Check, Fn, Lowering, combined
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.errors import ConversionError, error
from bridge.spaces.base import Mismatch, _describe

gymnasium = optional_import("gymnasium", "the Gymnasium export")

__all__ = ["lower_nested"]


def lower_nested(space: ns.Space, path: str, lower_entry: Callable[[ns.Space, str], Lowering]) -> Lowering:
    """A Dict or Tuple lowered entry by entry (``lower_entry(child, path)``) into Gymnasium's own
    Dict or Tuple (batches as Gymnasium's vector envs hold them: a dict or tuple of batched entries)."""
    if len(space) == 0:
        raise error(
            ConversionError, path, "have at least one entry", repr(space), "Drop the empty entry or give it a space"
        )
    is_dict = isinstance(space, ns.Dict)
    items = list(space.items()) if is_dict else list(enumerate(space))
    parts = [(key, lower_entry(child, f"{path}[{key!r}]")) for key, child in items]
    if is_dict:
        target = gymnasium.spaces.Dict([(key, low.space) for key, low in parts])  # pairs keep the neutral order
    else:
        target = gymnasium.spaces.Tuple([low.space for _, low in parts])
    keys = [key for key, _ in parts]

    def mapper(pick: Any) -> Fn:
        fns = [(key, pick(low)) for key, low in parts]
        if is_dict:
            return lambda x: {key: fn(x[key]) for key, fn in fns}
        return lambda x: tuple(fn(x[key]) for key, fn in fns)

    def checker(batch: bool) -> Check:
        fns = [(key, low.invalid_batch if batch else low.invalid) for key, low in parts]
        kind, want = (dict, f"a dict with the keys {keys}") if is_dict else (tuple, f"a tuple of {len(keys)} entries")

        def check(x: Any, where: str) -> Optional[Mismatch]:
            if is_dict:
                shape_ok = isinstance(x, dict) and x.keys() == set(keys)
                got = sorted(x) if isinstance(x, dict) else _describe(x)
            else:
                shape_ok = isinstance(x, (tuple, list)) and len(x) == len(keys)
                got = f"a {type(x).__name__} of {len(x)}" if isinstance(x, (tuple, list)) else _describe(x)
            if not shape_ok:
                fix = "Pass one entry per key of the space" if kind is dict else "Pass one value per entry of the space"
                return (where, f"be {want}", got, fix)
            for key, inner in fns:
                bad = inner(x[key], f"{where}[{key!r}]")
                if bad is not None:
                    return bad
            return None

        return check

    return Lowering(
        space,
        target,
        mapper(lambda low: low.encode),
        mapper(lambda low: low.decode),
        checker(False),
        encode_batch=mapper(lambda low: low.encode_batch),
        decode_batch=mapper(lambda low: low.decode_batch),
        invalid_batch=checker(True),
        roundings=combined([(str(key), low) for key, low in parts]),
    )

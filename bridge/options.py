"""The one catalogue of export options: every name means one thing in every export that takes it.

Each runtime's row in :mod:`bridge.runtimes` lists the options its scalar export and its batched
export honour; :func:`resolve` checks the values a caller passed against that list, before anything
is built. A name of this catalogue that the export does not honour is refused by name (never
accepted and dropped); a name outside it is an env kwarg where the source builds an env, and a
refusal otherwise. docs/options.md is the table of every export x option with its default.

The float policy has one documented default: ``float64_as_float32`` follows the runtime's compute
precision (``Runtime.float32``): True where the runtime computes in float32 (SB3, RLlib,
DreamerV2), False where float64 reaches the user unchanged (Gymnasium, gym 0.23, MATLAB, dm_env).
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from bridge import runtimes
from bridge.errors import SpecError, error
from bridge.registry import load_entry_point, registry
from bridge.workers import DEFAULT_TIMEOUT, seconds_or_none

__all__ = ["Option", "OPTIONS", "RUNTIME_PRECISION", "resolve", "split", "declared", "value_options", "honoured_by"]

RUNTIME_PRECISION = "the runtime's compute precision"  # the default of float64_as_float32
Check = Callable[[str, Any], Any]


class Option:
    """One export option: its meaning, its default, the check of a value (returns it normalized),
    and whether it changes what an export presents (``value``: a snapshot carries it, and a
    restore into an export built with another value is refused)."""

    __slots__ = ("name", "check", "default", "meaning", "value")

    def __init__(self, name: str, check: Check, default: Any, meaning: str, value: bool = False) -> None:
        self.name, self.check, self.default, self.meaning, self.value = name, check, default, meaning, value

    def __repr__(self) -> str:
        return f"Option({self.name!r}, default={self.default!r})"


def _refuse(subject: str, expectation: str, value: Any, fix: str) -> SpecError:
    return error(SpecError, subject, expectation, repr(value), fix)  # type: ignore[return-value]


def _flag(subject: str, value: Any) -> bool:
    if type(value) is not bool:  # 0/1, "no", None are not booleans: a typo never flips a switch
        raise _refuse(subject, "be True or False", value, "Pass a bool")
    return value


def _choice(*values: Any) -> Check:
    def check(subject: str, value: Any) -> Any:
        if not any(value is v or (type(value) is str and value == v) for v in values):
            raise _refuse(subject, f"be one of {list(values)}", value, f"Pass one of {list(values)}")
        return value

    return check


def _count(low: int, none: bool) -> Check:
    def check(subject: str, value: Any) -> Optional[int]:
        if value is None and none:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            expectation = f"be an int >= {low}" + (" or None" if none else "")
            raise _refuse(subject, expectation, value, f"Pass e.g. {max(low, 1) * 100}")
        return int(value)

    return check


def _seed(subject: str, value: Any) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _refuse(subject, "be an int >= 0 or None", value, "Pass e.g. 0")
    return int(value)


# the largest image side DreamerV2's ResizeImage may produce: an image is allocated at this size (and
# the resize maps read off PIL at it) before the first step, so (20000, 20000) was a MemoryError
MAX_IMAGE_SIDE = 4096


def _size(subject: str, value: Any) -> Tuple[int, int]:
    ok = isinstance(value, (tuple, list)) and len(value) == 2
    if not ok or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value):
        raise _refuse(subject, "be (height, width), two ints >= 1", value, "Pass e.g. (64, 64)")
    if max(value) > MAX_IMAGE_SIDE:  # bounded before anything is allocated
        expectation = f"be at most {MAX_IMAGE_SIDE} pixels a side (an image of that size is allocated)"
        raise _refuse(subject, expectation, value, "Pass e.g. (64, 64), the size DreamerV2's world model is built for")
    return (int(value[0]), int(value[1]))


def _bounds(subject: str, value: Any) -> Any:
    if value is not None and not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise _refuse(subject, "be None or a (low, high) pair", value, "Pass e.g. (-1.0, 1.0)")
    return value  # the action lowering checks the numbers against the space


OPTIONS: Dict[str, Option] = {
    o.name: o
    for o in (
        Option("check_actions", _flag, True, "check every action in the runtime's terms before the env moves"),
        Option("strict", _flag, False, "also check the float bounds of every observation (not free)"),
        Option(
            "image_layout", _choice("CHW", "HWC"), "CHW", "how images are presented: CHW (SB3's CNN) or HWC", value=True
        ),
        Option("normalize_actions", _flag, False, "expose a bounded float Box action as [-1, 1]", value=True),
        Option(
            "float64_as_float32",
            _flag,
            RUNTIME_PRECISION,
            "present float64 Box observations as float32 (rounded to nearest, announced by the check)",
            value=True,
        ),
        Option("max_episode_steps", _count(1, True), None, "cap episodes with bridge.TimeLimit (truncated=True)"),
        Option(
            "autoreset_mode", _choice(None, "next-step", "same-step", "disabled"), None, "the autoreset mode presented"
        ),
        Option("size", _size, (64, 64), "the image size DreamerV2's ResizeImage produces", value=True),
        Option("time_limit", _count(0, False), 0, "DreamerV2's own TimeLimit duration (0: none)"),
        Option("parallel", _choice(None, "thread", "process"), None, "DreamerV2's common.Async strategy"),
        Option("action_bounds", _bounds, None, "finite (low, high) for a Box action with infinite bounds", value=True),
        Option("seed", _seed, None, "the seed of the first reset"),
        Option("timeout", seconds_or_none, DEFAULT_TIMEOUT, "seconds a worker may answer one call in (None/inf: none)"),
    )
}


def split(given: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``given`` -> (the names of the catalogue, the rest)."""
    return {k: v for k, v in given.items() if k in OPTIONS}, {k: v for k, v in given.items() if k not in OPTIONS}


def resolve(
    export: str,
    honoured: Iterable[str],
    given: Dict[str, Any],
    float32: bool,
    refusals: Optional[Dict[str, str]] = None,
) -> Dict[str, Any]:
    """Every option ``export`` honours, checked and with its default filled in.

    Args:
        export: how the export is called in messages, e.g. ``"to_rllib"``.
        honoured: the option names the export declares (its runtime row).
        given: what the caller passed; only names of the catalogue (see :func:`split`).
        float32: the runtime computes in float32 (the default of ``float64_as_float32``).
        refusals: option name -> why this runtime cannot honour it (the fix of the refusal).
    """
    honoured = tuple(honoured)
    for name in given:
        if name not in honoured:
            why = (refusals or {}).get(name) or (
                f"Drop {name} (an argument of the env's own goes in env_kwargs={{{name!r}: ...}})"
            )
            raise _refuse(f"{export} option", f"be one of {list(honoured)}", name, why)
    out = {}
    for name in honoured:
        option = OPTIONS[name]
        if name in given:
            out[name] = option.check(f"{export} {name}", given[name])
        else:
            out[name] = float32 if option.default is RUNTIME_PRECISION else option.default
    return out


def value_options() -> Tuple[str, ...]:
    """The options that change what an export presents (snapshots carry them, in the catalogue's order)."""
    return tuple(name for name, option in OPTIONS.items() if option.value)


def honoured_by(runtime: str, batch: Optional[bool] = False) -> Tuple[str, ...]:
    """The options ``runtime``'s scalar export (``batch=False``), batched export (True) or either
    (None: one entry point that builds both, as SB3's ``make_vec_env``) honours (its row)."""
    row = runtimes.get(runtime)
    if batch is None:
        return row.options + tuple(n for n in row.batch_options if n not in row.options)
    return row.batch_options if batch else row.options


def declared(
    runtime: str,
    export: str,
    given: Dict[str, Any],
    env_kwargs: Optional[Dict[str, Any]] = None,
    *,
    batch: Optional[bool] = False,
    source: Any = None,
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``given`` (an export's keywords) -> (its options, checked, defaults filled in; the env's
    kwargs), before anything is built. Names of the catalogue are options; ``env_kwargs=`` (among
    ``given`` or passed here) holds env kwargs whatever their names. A keyword that is neither an
    option nor an argument the env's constructor names (when ``source``'s signature says) is
    refused by name, with the nearest option suggested."""
    given = dict(given)
    kwargs = {**(given.pop("env_kwargs", None) or {}), **(env_kwargs or {})}
    options, rest = split(given)
    row = runtimes.get(runtime)
    checked = resolve(export, honoured_by(runtime, batch), options, row.float32, row.refusals)
    if rest and source is not None:
        _refuse_strangers(export, honoured_by(runtime, batch), rest, source)
    return checked, {**rest, **kwargs}


def _refuse_strangers(export: str, honoured: Tuple[str, ...], names: Dict[str, Any], source: Any) -> None:
    """Refuse a keyword the env's constructor does not take (a typo of an option, mostly)."""
    takes = _parameters(source)
    if takes is None:
        return
    for name in names:
        if name in takes:
            continue
        near = difflib.get_close_matches(name, list(OPTIONS), n=1, cutoff=0.75)
        hint = f"Did you mean {near[0]}?" if near else f"The env takes {sorted(takes) or 'no keyword'}"
        raise _refuse(
            f"{export} keyword", f"be one of its options {list(honoured)} or an argument of the env", name, hint
        )


def _parameters(source: Any) -> Optional[set]:
    """The keyword names the env's constructor (or factory) takes, or None when it takes any
    (``**kwargs``) or its signature cannot be read."""
    target = source
    if isinstance(source, str):
        spec = registry.get(source)
        if spec is None:
            return None  # module:attr and schemes: the resolver reads them (and names their errors)
        try:
            target = load_entry_point(spec.entry_point)
        except Exception:  # noqa: BLE001 - the resolver raises it with its own message
            return None
    if not callable(target):
        return None
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    names = set()
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            names.add(parameter.name)
    return names

"""One rule for values that come in from another framework or process: taken exactly, or refused.

Every entry where a value crosses into the neutral API from code we did not write reads it here:
the importers (``from_gymnasium``, ``from_gym``: ``adapters/importers``), the dm_env importer
(``from_dm_env``), and the hosted env's host (``bridge/hosted``). The rule: a value is taken only as
exactly what its space says. No ``float()``, ``bool()`` or ``int()`` turns a lie into a value:

* a flag (``terminated``, ``truncated``, gym's ``done``) is a ``bool`` or ``numpy.bool_``: never
  ``"False"`` (``bool("False")`` is True), ``0``/``1`` or None;
* a reward (and dm_env's discount) is a real number: ``int``, ``float``, a numpy integer or float,
  or a 0-d numeric array, whose value a Python float holds exactly; never a str, a bool or None;
* a Discrete value is an integer (``int``, a numpy integer, a 0-d integer array) that int64 holds:
  never ``2.7`` (``int(2.7)`` is 2) or ``'3'``;
* an array leaf (Box, Image, MultiDiscrete) holds numbers its dtype represents exactly
  (:func:`exact_cast`, the same rule as every export's action check): integers for an integer
  dtype, none past the dtype's range (``2**40`` is not an int32, ``1e300`` not a float32), in the
  space's shape; a list's ints are checked before numpy reads a list mixing ints and floats as
  float64 (``[2**53 + 1, 0.5]`` would round).

The common valid case is one identity test; a refusal is a :class:`bridge.errors.ContractError`
whose message names the entry and the path inside the space (``where``, or ``at`` plus the path a
:func:`decoder` was built with), the value, and the fix the caller gives (:data:`ENV_FIX` by
default). Numpy only: the core, the adapters and the host all import it.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from bridge import spaces
from bridge.errors import ContractError, error

__all__ = ["exact_cast", "flag", "real", "integer", "decoder", "Decode", "ENV_FIX"]

Decode = Callable[[Any, str], Any]  # decode(x, at): ``at`` names the entry, e.g. "from_dm_env env's step()"
ENV_FIX = "Fix the env, or wrap it, so that it returns exactly the values its spaces and API declare"

_INT64 = np.iinfo(np.int64)


def exact_cast(x: np.ndarray, dtype: np.dtype) -> bool:
    """True if the numbers in ``x`` are ``dtype`` values exactly: a dtype that casts safely, or
    values that cast without rounding (float64 actions a float32 policy computed), in every era."""
    if np.can_cast(x.dtype, dtype):
        return True
    if x.dtype.kind not in "iuf":
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.array_equal(x.astype(dtype), x))


def _shown(x: Any) -> str:
    """``x`` and its type, the same in both numpy eras (numpy 2 writes ``np.True_``, 1.19 ``True``)."""
    if isinstance(x, np.generic):
        text, kind = repr(x.item()), f"numpy {x.dtype}"
    else:
        text, kind = repr(x), type(x).__name__
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} ({kind})"


def flag(x: Any, where: str, fix: str = ENV_FIX) -> bool:
    """``x`` as a Python bool if it is one (``bool`` or ``numpy.bool_``), else a ContractError."""
    if type(x) is bool:
        return x
    if isinstance(x, np.bool_):
        return bool(x)
    raise error(ContractError, where, "be a bool (True or False)", _shown(x), fix)


def real(x: Any, where: str, fix: str = ENV_FIX) -> float:
    """``x`` as a Python float if it is a real number a float holds exactly, else a ContractError."""
    if type(x) is float:
        return x
    number = x
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iuf":
        number = x[()]
    if isinstance(number, (int, float, np.integer, np.floating)) and not isinstance(number, (bool, np.bool_)):
        value = _float(number)
        if value is not None and (value == number or value != value):  # exact (NaN stays NaN; the exports refuse it)
            return value
        raise error(ContractError, where, "be a real number a float holds exactly", _shown(x), fix)
    raise error(ContractError, where, "be a real number (an int or a float)", _shown(x), fix)


def integer(x: Any, where: str, fix: str = ENV_FIX) -> np.int64:
    """``x`` as ``numpy.int64`` if it is an integer int64 holds (a Discrete value), else a ContractError."""
    if type(x) is np.int64:
        return x
    number = x
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        number = x[()]
    if isinstance(number, (int, np.integer)) and not isinstance(number, (bool, np.bool_)):
        value = int(number)
        if _INT64.min <= value <= _INT64.max:
            return np.int64(value)
        raise error(ContractError, where, "be an integer int64 holds", _shown(x), fix)
    raise error(ContractError, where, "be an integer (an int or a numpy integer)", _shown(x), fix)


def _array(dtype: np.dtype, shape: tuple, path: str, fix: str) -> Decode:
    kinds = "iu" if dtype.kind in "iu" else "iuf"

    def decode(x: Any, at: str) -> np.ndarray:
        if type(x) is np.ndarray and x.dtype is dtype and x.shape == shape:
            return x
        a = x if isinstance(x, np.ndarray) else _read(x)
        if a is None or a.dtype.kind not in kinds:
            got = _shown(x) if a is None else f"an array of dtype {a.dtype}"
            raise error(ContractError, f"{at} {path}", "hold integers" if kinds == "iu" else "hold numbers", got, fix)
        if a.shape != shape:
            raise error(ContractError, f"{at} {path}", f"have the shape {shape}", f"shape {a.shape}", fix)
        rounded = _rounded_int(x, ()) if a.dtype.kind == "f" and not isinstance(x, np.ndarray) else None
        if rounded is not None:  # np.asarray read a list mixing ints and floats as floats, rounding this int
            expectation = f"hold numbers {a.dtype} holds exactly (a list mixing ints and floats is read as {a.dtype})"
            got = f"{rounded[0]} ({type(rounded[0]).__name__}){f' at {list(rounded[1])}' if rounded[1] else ''}"
            raise error(ContractError, f"{at} {path}", expectation, got, fix)
        if not exact_cast(a, dtype):
            raise error(ContractError, f"{at} {path}", _lossy(a, dtype), _first_lossy(a, dtype), fix)
        return a.astype(dtype)

    return decode


def _read(x: Any) -> Any:
    """``np.asarray(x)`` for plain numbers (see :func:`_plain_numbers`), else None (also a ragged list)."""
    if not _plain_numbers(x):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy 1.19 warns of a ragged list, then makes an object array
            a = np.asarray(x)
    except (ValueError, OverflowError, Warning):  # ragged (numpy 2 raises), or ints no integer dtype holds
        return None
    return None if a.dtype == object else a


def _rounded_int(x: Any, index: tuple) -> Any:
    """The first integer in the (nested) list ``x`` that a float64 does not hold exactly, with its index."""
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            found = _rounded_int(v, index + (i,))
            if found is not None:
                return found
        return None
    if isinstance(x, (int, np.integer)) and _float(x) != int(x):  # int(): a numpy int compares as a float
        return x, index
    return None


def _float(number: Any) -> Any:
    """``float(number)``, or None for an int past the largest float (``10**400``: an OverflowError)."""
    try:
        return float(number)
    except OverflowError:
        return None


def _plain_numbers(x: Any) -> bool:
    """A Python number, numpy scalar or (nested) list/tuple of them: what ``np.asarray`` reads exactly."""
    if isinstance(x, (list, tuple)):
        return all(_plain_numbers(v) for v in x)
    return isinstance(x, (int, float, np.generic)) and not isinstance(x, (bool, np.bool_))


def _lossy(a: np.ndarray, dtype: np.dtype) -> str:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return f"hold {dtype} values exactly (integers in {info.min}..{info.max})"
    biggest = float(np.finfo(dtype).max)
    with np.errstate(invalid="ignore"):
        over = bool((np.isfinite(a) & (np.abs(a) > biggest)).any()) if a.dtype.kind == "f" else False
    if over:
        return f"hold finite {dtype} values (magnitude at most {biggest!r})"
    return f"hold {dtype} values exactly (a cast that rounds is refused)"


def _first_lossy(a: np.ndarray, dtype: np.dtype) -> str:
    with np.errstate(over="ignore", invalid="ignore"):
        cast = a.astype(dtype)
        bad = ~((cast == a) | ((cast != cast) & (a != a)))
    index = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else ()
    value = a[index] if index or a.ndim == 0 else a
    at = f" at {list(index)}" if index else ""
    return f"{value.item() if np.ndim(value) == 0 else value!r} ({a.dtype}){at}"


def decoder(space: spaces.Space, path: str, fix: str = ENV_FIX) -> Decode:
    """``decode(x, at)``: the neutral value of ``space`` that the foreign value ``x`` is exactly
    (dicts become plain dicts, sequences tuples), else a ContractError whose subject is ``at`` (the
    entry, e.g. "from_dm_env env's step()") and ``path`` inside the space (e.g. "observation['pos']")."""
    if isinstance(space, spaces.Dict):
        parts = [(key, decoder(sub, f"{path}[{key!r}]", fix)) for key, sub in space.items()]
        keys = set(space.keys())

        def decode_dict(x: Any, at: str) -> dict:
            if not isinstance(x, dict) or x.keys() != keys:
                got = f"the keys {sorted(x, key=repr)}" if isinstance(x, dict) else _shown(x)
                expectation = f"be a dict with the keys {sorted(keys, key=repr)}"
                raise error(ContractError, f"{at} {path}", expectation, got, fix)
            return {key: dec(x[key], at) for key, dec in parts}

        return decode_dict
    if isinstance(space, spaces.Tuple):
        items = [decoder(sub, f"{path}[{i}]", fix) for i, sub in enumerate(space)]

        def decode_tuple(x: Any, at: str) -> tuple:
            if not isinstance(x, (tuple, list)) or len(x) != len(items):
                raise error(ContractError, f"{at} {path}", f"be a tuple of {len(items)} values", _shown(x), fix)
            return tuple(dec(v, at) for dec, v in zip(items, x))

        return decode_tuple
    if isinstance(space, spaces.Discrete):
        return lambda x, at: x if type(x) is np.int64 else integer(x, f"{at} {path}", fix)
    return _array(np.dtype(space.dtype), tuple(space.shape), path, fix)

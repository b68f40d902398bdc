"""Gymnasium's vector info layout: the one info merge every batched path uses.

A batch of infos is a dict: ``infos[key]`` holds one row per sub-env and ``infos["_" + key]`` is
the bool mask of the sub-envs that reported ``key``; a dict value nests (its own keys and masks).
Columns take the dtype Gymnasium 1.3's ``VectorEnv._add_info`` gives them, so a batch built here
``==`` Gymnasium's own, dtypes included: a Python int, float or bool -> int64, float64, bool; a
numpy number -> its dtype; an array -> ``(num_envs, *shape)`` of its dtype; anything else (strings
of any width, None, lists, numpy bools, objects) -> an object array, None where nobody reported.
Rows nobody reported hold the column's blank (0, or None).

Exact where Gymnasium would cast: a value that does not fit its column exactly (another type,
dtype or shape, an int beyond int64) turns the column into an object array holding every value as
given (Gymnasium would truncate ``1.5`` into an int column, or fail on a shape). A dict reported
where another env reported a non-dict under the same key (or the reverse) is refused.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from bridge.errors import ContractError, error

__all__ = ["add_info", "merge_env_infos", "merge_infos", "select_rows", "env_infos", "blank_column"]

_SCALARS = (int, float, bool)


def blank_column(value: Any, n: int) -> np.ndarray:
    """The column Gymnasium makes for ``value`` (its first report) in a batch of ``n``."""
    if type(value) in _SCALARS or isinstance(value, np.number):
        return np.zeros(n, dtype=type(value))
    if isinstance(value, np.ndarray):
        return np.zeros((n, *value.shape), dtype=value.dtype)
    return np.full(n, None, dtype=object)


def _fits(column: np.ndarray, value: Any) -> bool:
    """True if ``value`` is stored in ``column`` exactly (same dtype and shape, no cast)."""
    if column.dtype.kind == "O":
        return column.ndim == 1
    if not (type(value) in _SCALARS or isinstance(value, (np.number, np.ndarray))):
        return False
    found = np.asarray(value)  # a Python int beyond int64 is an object array here
    return found.dtype == column.dtype and found.shape == column.shape[1:]


def _objects(column: np.ndarray) -> np.ndarray:
    """``column`` as a 1-d object array of its rows (each row its own copy)."""
    out = np.full(len(column), None, dtype=object)
    for j in range(len(column)):
        row = column[j]
        out[j] = row.copy() if isinstance(row, np.ndarray) else row
    return out


def _nesting(key: str, i: Any, value_is_dict: bool) -> Exception:
    kind, other = ("a dict", "a non-dict") if value_is_dict else ("a non-dict", "a dict")
    return error(
        ContractError,
        f"env {i} info[{key!r}]",
        f"be {other} like the other envs' (nested infos merge key by key)",
        kind,
        "Report the same kind of value under a key in every env",
    )


def add_info(infos: Dict[str, Any], info: Dict[str, Any], i: int, n: int) -> Dict[str, Any]:
    """Sub-env ``i``'s ``info`` merged into ``infos`` (in place, returned), as Gymnasium's ``_add_info``."""
    for key, value in info.items():
        if key == "final_obs":  # Gymnasium keeps final observations as objects, one per sub-env
            column = infos.get(key)
            if column is None:
                column = np.full(n, None, dtype=object)
            column[i] = value
        elif isinstance(value, dict):
            nested = infos.get(key, {})
            if not isinstance(nested, dict):
                raise _nesting(key, i, True)
            column = add_info(nested, value, i, n)
        else:
            column = infos.get(key)
            if isinstance(column, dict):
                raise _nesting(key, i, False)
            if column is None:
                column = blank_column(value, n)
            elif not _fits(column, value):
                column = _objects(column)
            column[i] = value
        mask = infos.get("_" + key)
        if mask is None:
            mask = np.zeros(n, dtype=bool)
        mask[i] = True
        infos[key], infos["_" + key] = column, mask
    return infos


def merge_env_infos(infos: List[Optional[dict]], n: int) -> Dict[str, Any]:
    """Per-sub-env info dicts (None: nothing from that sub-env) as one batch in the layout above."""
    merged: Dict[str, Any] = {}
    for i, info in enumerate(infos):
        if info:
            add_info(merged, info, i, n)
    return merged


def _mask(infos: Dict[str, Any], key: str, n: int) -> np.ndarray:
    """The mask of ``key`` (a batched env that gives none reports it in every row)."""
    mask = infos.get("_" + key)
    return np.ones(n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)


def select_rows(infos: Dict[str, Any], rows: np.ndarray) -> Dict[str, Any]:
    """A new batch of ``infos`` holding only the rows where ``rows`` is True (the others blank);
    a key no kept row reports is left out, as Gymnasium never adds it."""
    n = len(rows)
    out: Dict[str, Any] = {}
    for key, value in infos.items():
        if key.startswith("_") and key[1:] in infos:
            continue
        mask = _mask(infos, key, n) & rows
        if not mask.any():
            continue
        if isinstance(value, dict):
            out[key] = select_rows(value, rows)
        else:
            column = np.asarray(value)
            if not mask.all():
                column = np.array(column, copy=True)
                column[~mask] = None if column.dtype.kind == "O" else 0
            out[key] = column
        out["_" + key] = mask
    return out


def merge_infos(infos: Dict[str, Any], fresh: Dict[str, Any], rows: np.ndarray) -> Dict[str, Any]:
    """A new batch: ``fresh``'s rows where ``rows`` is True (the sub-envs just reset: their step
    infos are gone, as Gymnasium reports only the reset info of a sub-env it resets), ``infos`` elsewhere."""
    if not rows.any():
        return infos
    out = select_rows(infos, ~rows)
    return _put_rows(out, fresh, rows) if fresh else out


def _put_rows(out: Dict[str, Any], fresh: Dict[str, Any], rows: np.ndarray) -> Dict[str, Any]:
    n = len(rows)
    for key, value in fresh.items():
        if key.startswith("_") and key[1:] in fresh:
            continue
        given = _mask(fresh, key, n) & rows
        if not given.any():
            continue
        column, previous = out.get(key), out.get("_" + key)
        if isinstance(value, dict):
            if column is not None and not isinstance(column, dict):
                raise _nesting(key, int(given.nonzero()[0][0]), True)
            out[key] = _put_rows(dict(column or {}), value, given)
        else:
            if isinstance(column, dict):
                raise _nesting(key, int(given.nonzero()[0][0]), False)
            value = np.asarray(value)
            if column is None:
                column = np.full(n, None, dtype=object) if value.dtype.kind == "O" else np.zeros_like(value)
            elif column.dtype != value.dtype or column.shape[1:] != value.shape[1:]:
                column, value = _objects(column), _objects(value)
            else:
                column = np.array(column, copy=True)
            column[given] = value[given]
            out[key] = column
        out["_" + key] = given if previous is None else np.asarray(previous, dtype=bool) | given
    return out


def env_infos(infos: Dict[str, Any], out: List[Dict[str, Any]], skip: tuple = ()) -> List[Dict[str, Any]]:
    """A batch of infos back to one dict per sub-env (SB3's layout), written into ``out``.

    Values come back as the sub-envs gave them where the column says so: int64, float64 and bool
    columns (Gymnasium's columns of Python ints, floats and bools) as Python scalars, object
    columns as the objects themselves, other columns as numpy scalars or rows (arrays).
    """
    n = len(out)
    for key, value in infos.items():
        if key in skip or (key.startswith("_") and key[1:] in infos):
            continue
        where = np.flatnonzero(_mask(infos, key, n)).tolist()
        if isinstance(value, dict):
            nested = env_infos(value, [{} for _ in out])
            for i in where:
                out[i][key] = nested[i]
            continue
        column = np.asarray(value)
        if column.ndim == 1 and column.dtype in _PYTHON:
            listed = column.tolist()
            for i in where:
                out[i][key] = listed[i]
        else:
            for i in where:
                out[i][key] = column[i]
    return out


_PYTHON = (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.bool_), np.dtype(object))

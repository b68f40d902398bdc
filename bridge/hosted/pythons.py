"""Which interpreter an era name means, for :func:`bridge.remote` and ``--host-python``.

An era name NAME is ``$ENVBRIDGE_PYTHON_<NAME>`` when that is set (tox sets it for the host venvs it
builds). Otherwise an era of the runtime table (``modern``, ``legacy``) is the venv the set-up makes
for it (:data:`bridge.runtimes.ERA_VENVS`: ``.venv``, ``.venv-legacy``), looked for next to this
interpreter's own venv, then in the current folder and each folder above it: in a checkout set up as
the README says, ``python="legacy"`` needs nothing exported.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from bridge.errors import SpecError, error
from bridge.runtimes import ERA_VENVS

__all__ = ["PYTHON_VARIABLE", "era_python", "not_found", "variable", "venv_python", "search_folders"]

PYTHON_VARIABLE = "ENVBRIDGE_PYTHON_{}"  # an era name NAME resolves through $ENVBRIDGE_PYTHON_<NAME>


def venv_python(venv: str) -> str:
    """The interpreter of the venv folder ``venv`` (``bin/python``; ``Scripts\\python.exe`` on Windows)."""
    return os.path.join(venv, "Scripts", "python.exe") if os.name == "nt" else os.path.join(venv, "bin", "python")


def search_folders(cwd: Optional[str] = None) -> List[str]:
    """Where an era's venv is looked for: beside this interpreter's venv, then ``cwd`` and its parents."""
    folders = [os.path.dirname(os.path.abspath(sys.prefix))]
    here = os.path.abspath(cwd or os.getcwd())
    while here not in folders:
        folders.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return folders


def era_python(name: str) -> str:
    """The interpreter path the era name ``name`` stands for, or "" when none is found.

    ``$ENVBRIDGE_PYTHON_<NAME>`` first; for an era with a set-up venv (:data:`ERA_VENVS`), the
    first ``<folder>/<venv>`` of :func:`search_folders` that holds an interpreter.
    """
    path = os.environ.get(variable(name), "")
    if path or name not in ERA_VENVS:
        return path
    for folder in search_folders():
        candidate = venv_python(os.path.join(folder, ERA_VENVS[name]))
        if os.path.isfile(candidate):
            return candidate
    return ""


def variable(name: str) -> str:
    """``$ENVBRIDGE_PYTHON_<NAME>`` for the era name ``name`` (upper-cased, ``-`` as ``_``)."""
    return PYTHON_VARIABLE.format(name.upper().replace("-", "_"))


def not_found(name: str) -> SpecError:
    """The error for an era name :func:`era_python` found no interpreter for (naming where it looked)."""
    var = variable(name)
    fix = f"Set {var}=/path/to/that/venv/bin/python, or pass the interpreter's path"
    if name not in ERA_VENVS:
        return error(SpecError, f"remote python {name!r}", f"name a venv through ${var}", "it unset", fix)
    venv = ERA_VENVS[name]
    got = f"neither ({var} unset, no {venv} in {', '.join(search_folders())})"
    fix = f"Make {venv} in your project's folder as the README says, or set {var}=/path/to/that/venv/bin/python"
    return error(SpecError, f"remote python {name!r}", f"name a venv through ${var} or a {venv} folder", got, fix)

"""Which interpreter an era name means, for :func:`bridge.remote` and ``--host-python``.

An era name NAME is ``$ENVBRIDGE_PYTHON_<NAME>`` when that is set (tox sets it for the host venvs it
builds). Otherwise an era of the runtime table (``modern``, ``legacy``) is the venv the set-up makes
for it (:data:`bridge.runtimes.ERA_VENVS`: ``.venv``, ``.venv-legacy``), looked for next to this
interpreter's own venv, then in the current folder and each folder above it up to the project's root
(the first folder holding ``pyproject.toml``, ``setup.py`` or ``.git``; without one, the current folder
only): in a checkout set up as the README says, ``python="legacy"`` needs nothing exported.

A found interpreter is run, so it is taken only when nobody else could have put it there: the venv
folder, its ``bin`` and the interpreter (and what a symlink points to) must be owned by this user or
root and writable by neither group nor others; a refused one is named in the not-found message.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import List, Optional, Tuple

from bridge.errors import SpecError, error
from bridge.runtimes import ERA_VENVS

__all__ = ["PYTHON_VARIABLE", "era_python", "not_found", "variable", "venv_python", "search_folders"]

PYTHON_VARIABLE = "ENVBRIDGE_PYTHON_{}"  # an era name NAME resolves through $ENVBRIDGE_PYTHON_<NAME>
PROJECT_MARKERS = ("pyproject.toml", "setup.py", ".git")  # a folder holding one is a project's root


def venv_python(venv: str) -> str:
    """The interpreter of the venv folder ``venv`` (``bin/python``; ``Scripts\\python.exe`` on Windows)."""
    return os.path.join(venv, "Scripts", "python.exe") if os.name == "nt" else os.path.join(venv, "bin", "python")


def search_folders(cwd: Optional[str] = None) -> List[str]:
    """Where an era's venv is looked for: beside this interpreter's venv, then ``cwd`` and its parents
    up to the project's root (the first holding a :data:`PROJECT_MARKERS` entry; none: ``cwd`` only)."""
    folders = [os.path.dirname(os.path.abspath(sys.prefix))]
    here = os.path.abspath(cwd or os.getcwd())
    upward = [here]
    while not any(os.path.exists(os.path.join(here, marker)) for marker in PROJECT_MARKERS):
        parent = os.path.dirname(here)
        if parent == here:  # no project root above: only the current folder is the user's to mean
            upward = upward[:1]
            break
        here = parent
        upward.append(here)
    return folders + [folder for folder in upward if folder not in folders]


def _untrusted(path: str) -> str:
    """Why ``path`` could have been put there by someone else ("" when it is this user's or root's alone)."""
    for info, what in ((os.lstat(path), path), (os.stat(path), os.path.realpath(path))):
        if info.st_uid not in (0, os.getuid()):
            return f"{what} is owned by uid {info.st_uid}, neither you nor root"
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{what} is writable by its group or by others"
    return ""


def _candidates(name: str) -> List[Tuple[str, str]]:
    """Each existing interpreter of the era's venv in :func:`search_folders`, with why it is refused ("")."""
    found = []
    for folder in search_folders():
        venv = os.path.join(folder, ERA_VENVS[name])
        candidate = venv_python(venv)
        if os.path.isfile(candidate):
            parts = (venv, os.path.dirname(candidate), candidate)
            found.append((candidate, next((why for why in map(_untrusted, parts) if why), "")))
    return found


def era_python(name: str) -> str:
    """The interpreter path the era name ``name`` stands for, or "" when none is found.

    ``$ENVBRIDGE_PYTHON_<NAME>`` first; for an era with a set-up venv (:data:`ERA_VENVS`), the
    first ``<folder>/<venv>`` of :func:`search_folders` that holds an interpreter nobody else could
    have put there (see the module's text).
    """
    path = os.environ.get(variable(name), "")
    if path or name not in ERA_VENVS:
        return path
    return next((candidate for candidate, why in _candidates(name) if not why), "")


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
    refused = "".join(f"; refused {candidate}: {why}" for candidate, why in _candidates(name) if why)
    got = f"neither ({var} unset, no {'usable ' if refused else ''}{venv} in {', '.join(search_folders())}{refused})"
    fix = f"Make {venv} in your project's folder as the README says, or set {var}=/path/to/that/venv/bin/python"
    return error(SpecError, f"remote python {name!r}", f"name a venv through ${var} or a {venv} folder", got, fix)

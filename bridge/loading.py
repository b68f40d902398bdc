"""Naming an env where a string is all there is (the command line): a registered id, ``module:attr``
or ``path/to/file.py:attr``, after importing the user's modules that register ids (``--import``).

One loader for every command, so ``check``, ``conform`` and ``train`` accept the same names.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Iterable

from bridge.env import Env
from bridge.errors import SpecError, message
from bridge.registry import load_entry_point, make, registry, suggestion

__all__ = ["import_modules", "env_source", "load_env", "importable_cwd"]

_FORMS = "module:attr or path/to/file.py:attr"
_NAMES = f"a registered id, {_FORMS}"


def importable_cwd() -> None:
    """Make the current directory importable (an entry-point script does not, ``python -m`` does).

    Appended, not prepended: installed packages win, so a folder that holds a package of the same
    name (a checkout of envbridge itself) cannot shadow them, in this process or its workers.
    """
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)


def import_modules(names: Iterable[str]) -> None:
    """Import each module (a dotted name, or a ``.py`` file) so the ids it registers exist."""
    for name in names:
        if name.endswith(".py"):
            _import_file(name)
            continue
        try:
            importlib.import_module(name)
        except ImportError as e:
            fix = f"Check the spelling, run from the folder that holds it, or pass the file as --import path/{name}.py"
            raise SpecError(message("--import module", "be importable", f"{name!r} ({e})", fix)) from e


def _import_file(path: str) -> Any:
    """Import ``path/to/file.py`` as module ``file`` (its folder goes on sys.path, so worker
    processes can import it too); refuse when that name already means another module."""
    if not os.path.isfile(path):
        raise SpecError(message("env file", "exist", repr(path), "Check the path (relative to the current folder)"))
    folder, stem = os.path.split(os.path.abspath(path))
    stem = stem[: -len(".py")]
    if folder not in sys.path:
        sys.path.append(folder)  # after the installed packages, as importable_cwd
    module = importlib.import_module(stem)
    found = getattr(module, "__file__", None)
    if found is None or not os.path.samefile(found, path):
        got = f"{stem!r} is already {found or 'a built-in module'}"
        raise SpecError(message(f"the module name of {path}", "be free", got, "Rename the file"))
    return module


def env_source(name: str) -> Any:
    """What ``name`` names: the id itself (str), or the class, factory or instance at ``attr``."""
    if not isinstance(name, str) or not name:
        raise SpecError(message("env", f"be {_NAMES}", repr(name), "Pass e.g. envbridge/GridWorld-v0"))
    if name in registry:
        return name
    if ":" not in name:
        known = suggestion(name)
        known += "" if known.endswith("?") else "."
        fix = f"{known} If a module of yours registers it, pass --import MODULE; or name the env as {_FORMS}"
        raise SpecError(message("env id", "be registered", repr(name), fix))
    where, _, attr = name.rpartition(":")
    if where.endswith(".py"):
        target = _import_file(where)
        for part in attr.split("."):
            if not hasattr(target, part):
                fix = "Check the name after the colon"
                raise SpecError(message(f"the attribute of {where}", "exist", repr(attr), fix))
            target = getattr(target, part)
    else:
        target = load_entry_point(name)
    if isinstance(target, str):  # an id string would be looked up again: say what it is instead
        raise _not_an_env(name, target)
    return target


def _not_an_env(name: str, found: Any) -> SpecError:
    got = f"{name} gives {type(found).__name__}"
    fix = "Point at a bridge.Env subclass, a function that returns one, or an instance"
    return SpecError(message("env", "be a bridge.Env", got, fix))


def load_env(name: str) -> Env:
    """A new env for ``name`` (the instance itself when ``attr`` names one)."""
    source = env_source(name)
    env = make(source) if isinstance(source, str) else source() if callable(source) else source
    if not isinstance(env, Env):
        raise _not_an_env(name, env)
    return env

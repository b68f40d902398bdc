"""The user's modules: the current folder importable, ``--import MODULE`` / ``file.py``, and the
object ``module:attr`` or ``path/to/file.py:attr`` names (an env, a factory, a wrapper class), each
failure a house message. Used by the one resolver (:mod:`bridge.loading`)."""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Optional

from bridge.errors import SpecError, message
from bridge.registry import import_user_module, load_entry_point
from bridge.regular_file import Refusal, opened

__all__ = ["importable_cwd", "import_modules", "import_file", "load_attribute", "FORMS"]

FORMS = "module:attr or path/to/file.py:attr"


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
            import_file(name)
            continue
        fix = f"Check the spelling, run from the folder that holds it, or pass the file as --import path/{name}.py"
        import_user_module(name, "--import module", fix)


def import_file(path: str) -> Any:
    """Import ``path/to/file.py`` as module ``file`` (its folder goes on sys.path, so worker
    processes can import it too); refuse when that name already means another module."""
    if not os.path.exists(path):
        raise SpecError(message("env file", "exist", repr(path), "Check the path (relative to the current folder)"))
    with opened(path, Refusal(f"env file {path!r}", "Point at the .py file itself", SpecError)):
        pass  # a FIFO, a directory or a device named x.py is refused by what it is (never opened blocking)
    folder, stem = os.path.split(os.path.abspath(path))
    stem = stem[: -len(".py")]
    if "." in stem:  # import_module("dotted.name") looks for a package "dotted": "No module named 'dotted'"
        fix = f"Rename the file without the dot, e.g. {stem.replace('.', '_')}.py"
        got = f"{os.path.basename(path)!r} (Python reads a dot in a module name as a package)"
        raise SpecError(message("env file name", "be importable as one module (no dot before .py)", got, fix))
    if folder not in sys.path:
        sys.path.append(folder)  # after the installed packages, as importable_cwd
    module = import_user_module(stem, f"env file {path}")
    found = getattr(module, "__file__", None)
    if found is None or not os.path.samefile(found, path):
        got = f"{stem!r} is already {found or 'a built-in module'}"
        raise SpecError(message(f"the module name of {path}", "be free", got, "Rename the file"))
    return module


def load_attribute(name: str, missing: Optional[str] = None) -> Any:
    """The object ``module:attr`` or ``path/to/file.py:attr`` names (``missing``: the fix when the
    module is not installed)."""
    where, _, attr = name.rpartition(":")
    if where.endswith(".py"):
        target = import_file(where)
    elif missing is not None:
        target = import_user_module(where, f"the module of {name}", missing)
    else:
        return load_entry_point(name)
    for part in attr.split("."):
        if not hasattr(target, part):
            fix = "Check the name after the colon"
            raise SpecError(message(f"the attribute of {where}", "exist", repr(attr), fix))
        target = getattr(target, part)
    return target

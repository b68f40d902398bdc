"""The MATLAB path, and what a step or reset function given as text names.

``rlFunctionEnv`` takes its functions as MATLAB does: a function name (``"myStepFunction"``, found
as ``myStepFunction.m`` in the current folder first, then in the folders given to :func:`addpath`,
the last added first, as MATLAB's ``addpath`` puts a folder on top), a path to the file
(``"envs/myStepFunction.m"``), or MATLAB handle text with extra parameters
(``"@(Action,LoggedSignals) myStepFunction(Action,LoggedSignals,EnvConstants)"``, the variables
given from Python as ``workspace={"EnvConstants": ...}``).

Which wins, for text: text that starts with ``@`` is a MATLAB handle; text with exactly one ``:``
and no ``@``, ``(`` or ``/`` is a Python ``"module:function"``; any other text is MATLAB (a name or
a ``.m`` path). So ``"cartpole_step"`` runs ``cartpole_step.m`` even when a ``cartpole_step.py``
sits beside it; ``"cartpole_step:cartpole_step"`` runs the Python function.
"""

from __future__ import annotations

import os
import re
from typing import List, Optional

from bridge.errors import SpecError, error

__all__ = ["addpath", "rmpath", "matlab_path", "is_matlab_text", "MFunction"]

_PATH: List[str] = []  # the folders added, the most recent first (MATLAB's order)
_NAME = re.compile(r"^[A-Za-z]\w{0,62}$")
_CALLED = re.compile(r"^@\s*\(([^)]*)\)\s*([A-Za-z]\w*)\s*\(")
_WORD = re.compile(r"(?<![\w.'\"])([A-Za-z]\w*)\b(?!\s*\()")  # a variable: not a field, a call or in a string
_KEYWORDS = {"end", "true", "false", "pi", "inf", "Inf", "nan", "NaN", "eps", "i", "j"}


def addpath(*folders: str) -> List[str]:
    """Put ``folders`` on top of the MATLAB path (the first given ends on top), as MATLAB's ``addpath``."""
    for folder in reversed(folders):
        if not isinstance(folder, str) or not os.path.isdir(folder):
            fix = "Pass a folder that holds your .m files, e.g. addpath('envs')"
            raise error(SpecError, "addpath folder", "be an existing folder", repr(folder), fix)
        found = os.path.abspath(folder)
        if found in _PATH:
            _PATH.remove(found)
        _PATH.insert(0, found)
    return matlab_path()


def rmpath(*folders: str) -> List[str]:
    """Take ``folders`` off the MATLAB path (a folder not on it is ignored)."""
    for folder in folders:
        found = os.path.abspath(folder)
        if found in _PATH:
            _PATH.remove(found)
    return matlab_path()


def matlab_path() -> List[str]:
    """The folders searched for a function name after the current folder, in order."""
    return list(_PATH)


def is_matlab_text(fcn: object) -> bool:
    """True for text that names MATLAB code (see the module docstring for which wins)."""
    if not isinstance(fcn, str):
        return False
    text = fcn.strip()
    if text.startswith("@"):
        return True
    python = text.count(":") == 1 and not any(c in text for c in "(/\\") and not text.endswith(".m")
    return not python


class MFunction:
    """A step or reset function given as MATLAB text, resolved to its ``.m`` file.

    Attributes:
        text: what Octave evaluates: the function name, or the handle text.
        name: the function called (the name, or the one the handle calls).
        file: its ``.m`` file (absolute).
        folder: a folder Octave must have on its path first (a file given by path), or None.
    """

    def __init__(self, given: str, prop: str) -> None:
        text = given.strip()
        self.given, self.folder = given, None
        self.free: List[str] = []  # the handle's variables other than its parameters (from workspace=)
        if text.startswith("@"):
            called = _CALLED.match(text)
            if called is None:
                fix = 'Write it as "@(Action,LoggedSignals) myStepFunction(Action,LoggedSignals,EnvConstants)"'
                raise error(SpecError, prop, "be a handle that calls one function by name", repr(given), fix)
            self.text, self.name = text, called.group(2)
            self.file = self._find(self.name, prop, given)
            params = {p.strip() for p in called.group(1).split(",")}
            self.free = sorted(set(_WORD.findall(text[called.end() :])) - params - _KEYWORDS)
            return
        if text.endswith(".m"):
            if not os.path.isfile(text):
                fix = "Check the path (relative to the current folder)"
                raise error(SpecError, prop, "name an existing .m file", repr(given), fix)
            self.folder, base = os.path.split(os.path.abspath(text))
            self.name = self.text = base[: -len(".m")]
            self.file = os.path.join(self.folder, base)
            if not _NAME.match(self.name):
                fix = "Rename the file to a valid MATLAB function name (a letter, then letters, digits, _)"
                raise error(SpecError, prop, "name a .m file that is a MATLAB function", repr(given), fix)
            return
        if not _NAME.match(text):
            fix = "Pass a function name, a path/to/file.m, MATLAB handle text, a callable or 'module:function'"
            raise error(SpecError, prop, "be a MATLAB function name", repr(given), fix)
        self.text = self.name = text
        self.file = self._find(text, prop, given)

    @staticmethod
    def _find(name: str, prop: str, given: str) -> str:
        found = find_file(name)
        if found is None:
            where = ", ".join([os.getcwd()] + _PATH)
            expectation = "name a .m function on the MATLAB path (the current folder, then the addpath folders)"
            fix = f"Add its folder: bridge.adapters.matlab.addpath('path/to/folder'), or pass 'path/to/{name}.m'"
            raise error(SpecError, f"{prop} {given!r}", expectation, f"no {name}.m in {where}", fix)
        return found

    def __repr__(self) -> str:
        return self.given


def find_file(name: str) -> Optional[str]:
    """``name.m`` in the current folder, else in the path folders in order; None when nowhere."""
    for folder in [os.getcwd()] + _PATH:
        candidate = os.path.join(folder, name + ".m")
        if os.path.isfile(candidate):
            return candidate
    return None

"""Era knowledge: the optional-import helper with era-aware install hints, and the pinned constraint
files beside this module (``constraints-<tox env>.txt``, what tox installs per era).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from bridge import runtimes
from bridge.errors import MissingDependencyError, message

__all__ = ["optional_import", "install_hint"]

# modules of the command line's extras (plots, progress bars): the same pip line in both eras
_CLI_MODULES = ("matplotlib", "tqdm", "rich")


def install_hint(module: str) -> str:
    """The sentence that installs top-level ``module`` in this interpreter's era."""
    top = module.split(".")[0]
    if top in _CLI_MODULES:
        return "Run: pip install 'envbridge[cli]'"
    if top in runtimes.ENV_EXTRAS:  # an env package: its extra, into this interpreter
        return runtimes.env_package_hint(top)
    for name, runtime in runtimes.RUNTIMES.items():
        if top in runtime.probe:
            return runtimes.install_hint(name)
    return f"Run: pip install {top}"


def optional_import(name: str, purpose: str = "") -> ModuleType:
    """Import ``name`` or raise :class:`MissingDependencyError` with the pip command that fixes it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        top = name.split(".")[0]
        need = f"be installed for {purpose}" if purpose else "be installed"
        raise MissingDependencyError(
            message(f"the package {top!r}", need, f"ImportError: {e}", install_hint(top))
        ) from e

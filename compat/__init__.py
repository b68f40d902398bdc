"""Era knowledge: the optional-import helper, capability probes and the pinned constraint files.

The constraint files beside this module (``constraints-*.txt``) are what tox installs per era.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from bridge.errors import MissingDependencyError, message

__all__ = ["optional_import", "constraints_path", "INSTALL_HINTS"]

# module -> the pip command that provides it
INSTALL_HINTS = {
    "gymnasium": "pip install 'envbridge[gymnasium]'",
    "stable_baselines3": "pip install 'envbridge[sb3]' torch==2.13.0",
    "torch": "pip install torch==2.13.0",
    "gym": "pip install -c compat/constraints-legacy.txt gym==0.23.1",
    "tensorflow": "pip install -c compat/constraints-legacy.txt tensorflow==2.6.0",
    "dreamerv2": "pip install --no-deps dreamerv2==2.2.0 (after the legacy pins in compat/constraints-legacy.txt)",
    "matplotlib": "pip install 'envbridge[cli]'",
    "tqdm": "pip install 'envbridge[cli]'",
}


def optional_import(name: str, purpose: str = "") -> ModuleType:
    """Import ``name`` or raise :class:`MissingDependencyError` with the pip command that fixes it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        top = name.split(".")[0]
        hint = INSTALL_HINTS.get(top, f"pip install {top}")
        need = f"be installed for {purpose}" if purpose else "be installed"
        raise MissingDependencyError(message(f"the package {top!r}", need, f"ImportError: {e}", f"Run: {hint}")) from e


def constraints_path(era: str) -> str:
    """The constraints file tox uses for ``era`` ("core-py39", "modern" or "legacy")."""
    return os.path.join(os.path.dirname(__file__), f"constraints-{era}.txt")

"""gym 0.23.1's contained import: ``load_gym()`` undoes two side effects of ``import gym``.

``import gym`` prints the ``gym_notices`` banner ("Gym has been unmaintained since 2022 ...", three
lines on stderr) and sets ``warnings.simplefilter("once", DeprecationWarning)`` for the whole
process (which then shows TensorFlow's own import-time DeprecationWarnings in every command). We use
gym 0.23 on purpose, for DreamerV2: the banner is kept in :data:`notice` (``train(verbose=True)``
prints it) and the warning filters are restored. Any other output of the import passes through.
"""

from __future__ import annotations

import contextlib
import io
import sys
import warnings
from types import ModuleType
from typing import Optional

from bridge.compat import optional_import

__all__ = ["load_gym", "notice"]

_GYM: Optional[ModuleType] = None
notice = ""  # the banner gym printed at import ("" if it printed none, or gym was imported elsewhere)


def load_gym(purpose: str = "the gym 0.23 export") -> ModuleType:
    """Import gym once, without its banner and with the warning filters as they were."""
    global _GYM, notice
    if _GYM is not None:
        return _GYM
    if "gym" in sys.modules:  # imported by the user first: its banner, if any, is already out
        _GYM = optional_import("gym", purpose)
        return _GYM
    printed = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(printed):
            _GYM = optional_import("gym", purpose)
    finally:
        text = printed.getvalue()
        banner = _banner(sys.modules.get("gym"))
        if banner and text.startswith(banner):
            notice, text = banner, text[len(banner) :].lstrip("\n")
        if text:
            sys.stderr.write(text)
    return _GYM


def _banner(gym: Optional[ModuleType]) -> str:
    try:
        import gym_notices.notices as notices  # what gym itself prints from

        text = notices.notices.get(getattr(gym, "__version__", ""))
        return f"{text}\n" if text else ""
    except Exception:  # noqa: BLE001 - no notices package: nothing was printed
        return ""

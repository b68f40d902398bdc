"""DreamerV2 2.2.0's contained import: ``load_dreamerv2()`` undoes its import side effects."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from types import ModuleType
from typing import Optional

from bridge.compat import optional_import

__all__ = ["load_dreamerv2"]

_API: Optional[ModuleType] = None


def load_dreamerv2() -> ModuleType:
    """Import ``dreamerv2.api`` once, undoing its import side effects.

    DreamerV2 2.2.0 appends its folders to ``sys.path`` (it imports ``common`` and ``agent`` as
    top-level modules), sets the root logger to ERROR, sets ``TF_CPP_MIN_LOG_LEVEL=3`` and adds a
    warnings filter. All four are restored; the modules it imported stay in ``sys.modules``.
    Use ``load_dreamerv2().common`` for its classes: they are the ones ``api.train`` uses.
    """
    global _API
    if _API is not None:
        return _API
    path, level = list(sys.path), logging.getLogger().level
    tf_level = os.environ.get("TF_CPP_MIN_LOG_LEVEL")
    with warnings.catch_warnings():  # restores the filters DreamerV2 adds
        try:
            _API = optional_import("dreamerv2.api", "DreamerV2 export")
        finally:
            sys.path[:] = path
            logging.getLogger().setLevel(level)
            if tf_level is None:
                os.environ.pop("TF_CPP_MIN_LOG_LEVEL", None)
            else:
                os.environ["TF_CPP_MIN_LOG_LEVEL"] = tf_level
    return _API

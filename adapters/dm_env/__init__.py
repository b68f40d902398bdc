"""The dm_env export (modern era): ``to_dm_env``.

Inside: ``export`` (the ``dm_env.Environment``), ``lowering`` (neutral spaces and values <-> dm_env
specs), ``profile`` (the "dm_env" check), ``view`` (its conformance view). The importer the other
way, ``bridge.from_dm_env``, lives in :mod:`bridge.adapters.dm_env.importer`.
"""

from __future__ import annotations

from bridge.adapters.dm_env.export import DmEnv, to_dm_env
from bridge.adapters.dm_env.lowering import to_dm_spec

__all__ = ["to_dm_env", "DmEnv", "to_dm_spec"]

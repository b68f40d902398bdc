"""Suite-wide settings: a Ray instance started by a test is token-protected with a fresh token held
in this process's environment (Ray then writes no ~/.ray/auth_token) and sends no usage stats."""

from __future__ import annotations

import os
import secrets

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
if "RAY_AUTH_MODE" not in os.environ:
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

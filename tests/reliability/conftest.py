"""Hypothesis profiles for tests/reliability/test_fuzz_spaces.py.

"default" keeps the regular tox runs short; "fuzz" (HYPOTHESIS_PROFILE=fuzz, tox -e fuzz-modern /
fuzz-legacy) runs 10,000 examples per test. Other test files keep their own @settings.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
_COMMON = dict(deadline=None, suppress_health_check=_CHECKS)
settings.register_profile("default", max_examples=300, **_COMMON)
settings.register_profile("fuzz", max_examples=10_000, **_COMMON)
settings.register_profile("probe", max_examples=1_000, **_COMMON)  # a quick deeper look while developing
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

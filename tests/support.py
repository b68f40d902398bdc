"""Helpers shared by the test suites (on the path through pytest's ``pythonpath``)."""

from __future__ import annotations

import importlib
import os
import re
from types import ModuleType
from typing import Any

import pytest

from bridge import runtimes

ERA = os.environ.get("ENVBRIDGE_ERA", "")
# In an era's tox env these must import (the probes of the runtimes whose row names that env); a
# skip there would hide a broken install.
ERA_PACKAGES = {
    env: {m for row in runtimes.RUNTIMES.values() if env in row.tox_envs for m in row.probe}
    for row in runtimes.RUNTIMES.values()
    for env in row.tox_envs
}


def require(module: str) -> ModuleType:
    """Import ``module``; skip the test module outside its era, fail inside it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if module.split(".")[0] in ERA_PACKAGES.get(ERA, set()):
            pytest.fail(f"{module} must import in tox env {ERA!r}: {e}", pytrace=False)
        pytest.skip(f"{module} is not installed (not this era)", allow_module_level=True)
        raise  # unreachable


def raises_exactly(error: type, text: str) -> Any:
    """``pytest.raises`` that asserts the whole message, not a fragment."""
    return pytest.raises(error, match=f"^{re.escape(text)}$")


TESTS = os.path.dirname(os.path.abspath(__file__))  # this folder: what a subprocess puts on PYTHONPATH


def other_kernel() -> str:
    """An OpenBLAS kernel other than the one this interpreter runs (Prescott, or Haswell where
    Prescott is already in use): ``OPENBLAS_CORETYPE`` set to it in a subprocess emulates another
    machine (docs/conformance.md)."""
    from bridge.conformance.machine import describe

    return "Haswell" if describe()["blas_kernel"] in ("Prescott", "Katmai") else "Prescott"


def probe_export(env: Any, label: str = "probe env") -> Any:
    """``env`` behind the Export base alone, with its neutral spaces unchanged (no framework): the
    guard's lifecycle, output and exception checks as every export runs them."""
    from bridge.adapters._shared.export import Export
    from bridge.adapters._shared.lowering import Lowering, same

    class ProbeExport(Export):
        runtime, export_name = "matlab", "probe_export"

        @staticmethod
        def lower(space: Any, *, path: str, options: Any) -> Lowering:
            return Lowering(space, space, same, same, space.mismatch, identity=True)

    ProbeExport.label = label
    return ProbeExport.build(env, {})

"""Install hints name the extra and the pip line that work in the running interpreter's era (and
send the user to the other era's Python when the runtime belongs there). Whole sentences."""

from __future__ import annotations

import sys

import pytest
from bridge.compat import install_hint

from bridge import runtimes

LEGACY_LINE = "pip install 'envbridge[legacy]' && pip install --no-deps dreamerv2==2.2.0"
# in either era: RLlib's own venv, never the modern one (its gymnasium pin would move)
RLLIB = (
    "The rllib runtime gets its own Python 3.11 environment (ray[rllib] 2.60.0 pins gymnasium 1.2.2, so it must not "
    "go into this one): python3.11 -m venv .venv-rllib && . .venv-rllib/bin/activate && pip install "
    "'envbridge[rllib]' torch==2.13.0"
)
HINTS = {
    (3, 11): {
        "gymnasium": "Run: pip install 'envbridge[gymnasium]'",
        "sb3": "Run: pip install 'envbridge[sb3]' torch==2.13.0",
        "rllib": RLLIB,
        "gym": "The gym runtime belongs to the legacy era (Python 3.9); this is Python 3.11. In a Python 3.9 "
        f"environment run: {LEGACY_LINE}",
        "dreamerv2": "The dreamerv2 runtime belongs to the legacy era (Python 3.9); this is Python 3.11. In a "
        f"Python 3.9 environment run: {LEGACY_LINE}",
        "dm_env": "Run: pip install 'envbridge[dm]'",
        "matlab": "Reinstall envbridge",
    },
    (3, 9): {
        "gymnasium": "The gymnasium runtime belongs to the modern era (Python 3.11); this is Python 3.9. In a "
        "Python 3.11 environment run: pip install 'envbridge[gymnasium]'",
        "sb3": "The sb3 runtime belongs to the modern era (Python 3.11); this is Python 3.9. In a Python 3.11 "
        "environment run: pip install 'envbridge[sb3]' torch==2.13.0",
        "rllib": RLLIB,
        "gym": f"Run: {LEGACY_LINE}",
        "dreamerv2": f"Run: {LEGACY_LINE}",
        "dm_env": "The dm_env runtime belongs to the modern era (Python 3.11); this is Python 3.9. In a Python 3.11 "
        "environment run: pip install 'envbridge[dm]'",
        "matlab": "Reinstall envbridge",
    },
}


@pytest.mark.parametrize("version", sorted(HINTS), ids=lambda v: f"py{v[0]}{v[1]}")
def test_each_runtime_hint_fits_the_era(version, monkeypatch):
    monkeypatch.setattr(sys, "version_info", (*version, 0, "final", 0))
    assert {name: runtimes.install_hint(name) for name in runtimes.RUNTIMES} == HINTS[version]


@pytest.mark.parametrize("version", sorted(HINTS), ids=lambda v: f"py{v[0]}{v[1]}")
def test_a_missing_module_maps_to_its_runtimes_hint(version, monkeypatch):
    monkeypatch.setattr(sys, "version_info", (*version, 0, "final", 0))
    assert install_hint("tensorflow.keras") == HINTS[version]["dreamerv2"]
    assert install_hint("stable_baselines3.common") == HINTS[version]["sb3"]
    assert install_hint("matplotlib") == "Run: pip install 'envbridge[cli]'"


def test_from_gymnasium_without_gymnasium_raises_the_eras_hint():
    import importlib.util

    from support import raises_exactly

    import bridge
    from bridge.errors import MissingDependencyError

    if importlib.util.find_spec("gymnasium") is not None:
        pytest.skip("gymnasium is installed here (the framework eras test from_gymnasium itself)")
    text = (
        "the package 'gymnasium' must be installed for from_gymnasium, got ImportError: No module named "
        f"'gymnasium'. {runtimes.install_hint('gymnasium')}."
    )
    with raises_exactly(MissingDependencyError, text):
        bridge.from_gymnasium("CartPole-v1")

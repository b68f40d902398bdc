"""Install hints name the extra and the pip line that work in the running interpreter's era (and
send the user to the other era's Python when the runtime belongs there). Whole sentences."""

from __future__ import annotations

import sys

import pytest
from bridge.compat import install_hint

from bridge import runtimes

LEGACY_LINE = "pip install 'envbridge[legacy]' && pip install --no-deps dreamerv2==2.2.0"
# RLlib's own venv, never the modern one (its gymnasium pin would move)
RLLIB = "pip install 'envbridge[rllib]' torch==2.13.0 in its own venv, .venv-rllib (ray pins gymnasium 1.2.2)"
HINTS = {
    (3, 11): {
        "gymnasium": "Run: pip install 'envbridge[gymnasium]'",
        "sb3": "Run: pip install 'envbridge[sb3]' torch==2.13.0",
        "rllib": f"Run: {RLLIB}",
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
        "rllib": "The rllib runtime belongs to the modern era (Python 3.11); this is Python 3.9. In a Python 3.11 "
        f"environment run: {RLLIB}",
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


@pytest.mark.parametrize("version", sorted(HINTS), ids=lambda v: f"py{v[0]}{v[1]}")
def test_an_env_package_names_its_extra_and_this_interpreter(version, monkeypatch):
    monkeypatch.setattr(sys, "version_info", (*version, 0, "final", 0))
    hints = {module: install_hint(f"{module}.sub") for module in ("minigrid", "ale_py", "dm_control", "mujoco")}
    extras = {"minigrid": "gymnasium-envs", "ale_py": "atari", "dm_control": "dm", "mujoco": "dm"}
    if version == (3, 11):
        assert hints == {m: f"Run: {sys.executable} -m pip install 'envbridge[{e}]'" for m, e in extras.items()}
    else:
        assert hints == {
            m: f"The package {m} belongs to the modern era (Python 3.11); this is Python 3.9. Host the env in a "
            "Python 3.11 environment (--host-python modern, or bridge.remote(..., python='modern')) where you run: "
            f"pip install 'envbridge[{e}]'"
            for m, e in extras.items()
        }


def test_a_factory_missing_a_package_names_this_interpreter_and_the_pip_line(tmp_path, monkeypatch):
    from support import raises_exactly

    from bridge.errors import MissingDependencyError
    from bridge.loading import load_env

    (tmp_path / "needs_pkg.py").write_text("def env():\n    import envbridge_test_absent.sub\n")
    monkeypatch.chdir(tmp_path)
    with raises_exactly(
        MissingDependencyError,
        f"the package 'envbridge_test_absent' must be installed in {sys.executable} for env needs_pkg.py:env, got "
        "ModuleNotFoundError: No module named 'envbridge_test_absent'. "
        f"Run: {sys.executable} -m pip install envbridge_test_absent.",
    ):
        load_env("needs_pkg.py:env")


def test_an_env_file_importing_a_missing_env_package_names_its_pip_line(tmp_path, monkeypatch):
    from support import raises_exactly

    from bridge.errors import SpecError
    from bridge.loading import load_env

    monkeypatch.setitem(runtimes.ENV_EXTRAS, "envbridge_absent_envs", "gymnasium-envs")  # as minigrid where absent
    (tmp_path / "needs_envs.py").write_text("import envbridge_absent_envs\n\ndef env():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    with raises_exactly(
        SpecError,
        "env file needs_envs.py must be importable, got 'needs_envs' (No module named 'envbridge_absent_envs'). "
        f"{runtimes.env_package_hint('envbridge_absent_envs')}.",
    ):
        load_env("needs_envs.py:env")

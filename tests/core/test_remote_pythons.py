"""An era name's interpreter: $ENVBRIDGE_PYTHON_<NAME>, else the era's set-up venv (.venv, .venv-legacy)
next to this interpreter's venv or in the current folder or above it up to the project's root: nothing
exported by hand; an interpreter someone else could have put there is refused and named."""

from __future__ import annotations

import os
import sys

import pytest
from support import raises_exactly

from bridge.errors import SpecError
from bridge.hosted.client import host_python
from bridge.hosted.pythons import era_python, search_folders, venv_python
from bridge.runtimes import ERA_VENVS


def make_venv(folder) -> str:
    """A venv-shaped folder whose interpreter is this one (a symlink)."""
    python = venv_python(str(folder))
    os.makedirs(os.path.dirname(python))
    os.symlink(sys.executable, python)
    return python


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder as the README sets it up, entered from a subfolder by an interpreter elsewhere."""
    for era in ERA_VENVS:
        monkeypatch.delenv(f"ENVBRIDGE_PYTHON_{era.upper()}", raising=False)
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "elsewhere" / "venv"))
    (tmp_path / "project" / "src" / "deep").mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    monkeypatch.chdir(tmp_path / "project" / "src" / "deep")
    return tmp_path


def test_the_readme_venv_names_are_the_eras_venvs():
    assert ERA_VENVS == {"modern": ".venv", "legacy": ".venv-legacy"}
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md"), encoding="utf-8") as f:
        readme = f.read()
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "remote.md"), encoding="utf-8") as f:
        remote = f.read()
    for venv, version in ((".venv", "3.11"), (".venv-legacy", "3.9")):
        assert f"python{version} -m venv {venv} " in readme and f"python{version} -m venv {venv}\n" in remote


def test_an_era_name_finds_its_venv_in_the_project_folder_above(project):
    legacy = make_venv(project / "project" / ".venv-legacy")
    assert era_python("legacy") == legacy == host_python("legacy")
    assert era_python("modern") == ""  # no .venv anywhere here
    modern = make_venv(project / "project" / ".venv")
    assert host_python("modern") == modern


def test_an_era_venv_beside_this_interpreters_venv_comes_first(project):
    make_venv(project / "project" / ".venv-legacy")
    beside = make_venv(project / "elsewhere" / ".venv-legacy")
    assert search_folders()[0] == str(project / "elsewhere")
    assert host_python("legacy") == beside


def test_the_variable_wins_over_the_venv(project, monkeypatch):
    make_venv(project / "project" / ".venv-legacy")
    chosen = make_venv(project / "chosen")
    monkeypatch.setenv("ENVBRIDGE_PYTHON_LEGACY", chosen)
    assert host_python("legacy") == chosen


def test_an_era_without_variable_or_venv_says_both_ways(project):
    folders = ", ".join(
        [str(project / "elsewhere"), str(project / "project" / "src" / "deep"), str(project / "project" / "src")]
        + [str(project / "project")]
    )
    assert search_folders() == folders.split(", ")
    with raises_exactly(
        SpecError,
        "remote python 'legacy' must name a venv through $ENVBRIDGE_PYTHON_LEGACY or a .venv-legacy folder, got "
        f"neither (ENVBRIDGE_PYTHON_LEGACY unset, no .venv-legacy in {folders}). Make .venv-legacy in your "
        "project's folder as the README says, or set ENVBRIDGE_PYTHON_LEGACY=/path/to/that/venv/bin/python.",
    ):
        host_python("legacy")


def test_the_search_stops_at_the_project_root(project):
    make_venv(project / ".venv-legacy")  # above the project's root: not the project's venv
    assert search_folders()[-1] == str(project / "project")
    assert era_python("legacy") == ""


def test_without_a_project_root_only_the_current_folder_is_searched(project, monkeypatch):
    (project / "loose" / "x").mkdir(parents=True)
    monkeypatch.chdir(project / "loose" / "x")
    make_venv(project / "loose" / ".venv-legacy")  # e.g. /tmp/.venv-legacy seen from /tmp/x
    assert search_folders() == [str(project / "elsewhere"), str(project / "loose" / "x")]
    assert era_python("legacy") == ""
    here = make_venv(project / "loose" / "x" / ".venv-legacy")
    assert era_python("legacy") == here


@pytest.mark.parametrize("writable", ["venv", "bin"])
def test_a_venv_others_can_write_is_refused_and_named(project, writable):
    python = make_venv(project / "project" / ".venv-legacy")
    folder = {"venv": project / "project" / ".venv-legacy", "bin": project / "project" / ".venv-legacy" / "bin"}
    os.chmod(folder[writable], 0o777)
    assert era_python("legacy") == ""
    with raises_exactly(
        SpecError, refused_message(project, f"{python}: {folder[writable]} is writable by its group or by others")
    ):
        host_python("legacy")


def test_a_venv_another_user_owns_is_refused(project):
    if os.getuid() != 0:
        pytest.skip("giving a file to another user takes root")
    python = make_venv(project / "project" / ".venv-legacy")
    os.chown(project / "project" / ".venv-legacy", 12345, 12345)
    assert era_python("legacy") == ""
    why = f"{project / 'project' / '.venv-legacy'} is owned by uid 12345, neither you nor root"
    with raises_exactly(SpecError, refused_message(project, f"{python}: {why}")):
        host_python("legacy")


def refused_message(project, refusal: str) -> str:
    """The not-found message of the ``project`` fixture when one candidate was refused (``refusal``)."""
    deep = project / "project" / "src" / "deep"
    listed = ", ".join(str(p) for p in [project / "elsewhere", deep, deep.parent, deep.parent.parent])
    return (
        "remote python 'legacy' must name a venv through $ENVBRIDGE_PYTHON_LEGACY or a .venv-legacy folder, got "
        f"neither (ENVBRIDGE_PYTHON_LEGACY unset, no usable .venv-legacy in {listed}; refused {refusal}). Make "
        ".venv-legacy in your project's folder as the README says, or set "
        "ENVBRIDGE_PYTHON_LEGACY=/path/to/that/venv/bin/python."
    )

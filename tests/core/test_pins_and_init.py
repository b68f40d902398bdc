"""`envbridge pins` (the constraint files as package data) and `envbridge init tox` (the era matrix
for a user's project): what they print and write, and what they refuse. Whole messages."""

from __future__ import annotations

import configparser
import os

import pytest
from bridge.compat import pins, project
from support import raises_exactly

from bridge import __version__, runtimes
from bridge.cli import main
from bridge.errors import SpecError

COMPAT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "compat")
WRITTEN = [
    "tox.ini",
    ".python-version",
    os.path.join("tests", "test_conformance_eras.py"),
    os.path.join("constraints", "core-py39.txt"),
    os.path.join("constraints", "core-py311.txt"),
    os.path.join("constraints", "modern.txt"),
    os.path.join("constraints", "rllib.txt"),
    os.path.join("constraints", "legacy.txt"),
]


def test_every_tox_env_has_its_shipped_constraints_file():
    # in a tox env envbridge is installed from its wheel: this also proves the wheel carries them
    assert set(pins.TOX_ENVS) <= set(pins.eras())
    for era in pins.eras():
        with open(os.path.join(COMPAT, f"constraints-{era}.txt"), encoding="utf-8") as f:
            assert pins.text(era) == f.read()


def test_pins_prints_the_content_or_the_path(capsys):
    assert main(["pins", "core-py39"]) == 0
    assert capsys.readouterr().out == pins.text("core-py39")
    assert main(["pins", "legacy", "--path"]) == 0
    assert capsys.readouterr().out == pins.path("legacy") + "\n"


def test_pins_of_an_unknown_era_names_the_known_ones(capsys):
    assert main(["pins", "py27"]) == 2
    known = ", ".join(pins.eras())
    assert capsys.readouterr().err == (
        f"envbridge pins: SpecError: era must name a constraints file of envbridge, got 'py27'. Pick one of: {known}.\n"
    )


def test_the_legacy_row_installs_dreamerv2_as_the_runtime_table_says():
    ((requirement, _),) = pins.TOX_ENVS["legacy"].after
    assert f"pip install --no-deps {requirement}" in runtimes.ERAS["legacy"][1]
    extras = {x for e in pins.TOX_ENVS.values() if e.extra for x in e.extra.split(",")}
    assert extras <= {r.extra for r in runtimes.RUNTIMES.values()} | {"sb3"}


def test_init_tox_writes_the_matrix(tmp_path, capsys):
    assert main(["init", "tox", "--dir", str(tmp_path), "--env", "corridor_pkg.envs:Corridor"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"envbridge init tox: wrote in {tmp_path}:"
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == sorted(WRITTEN)
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(tmp_path / "tox.ini")
    assert ini["tox"]["envlist"] == "core-py39, core-py311, modern, rllib, legacy"
    assert ini["testenv:legacy"]["basepython"] == "python3.9"
    assert ini["testenv:legacy"]["commands_pre"] == "python -m pip install --no-deps dreamerv2==2.2.0"
    assert "{env:ENVBRIDGE_SOURCE:envbridge}[legacy]" in ini["testenv:legacy"]["deps"]
    assert "torch==2.13.0" in ini["testenv:modern"]["deps"]
    assert "{env:ENVBRIDGE_SOURCE:envbridge}[sb3,dm]" in ini["testenv:modern"]["deps"]
    assert "ENVBRIDGE_VIEWS = neutral,gymnasium,sb3,dm_env,matlab" in ini["testenv:modern"]["setenv"]
    assert "ENVBRIDGE_VIEWS = neutral,gymnasium,rllib,matlab" in ini["testenv:rllib"]["setenv"]
    assert "torch==2.13.0" in ini["testenv:rllib"]["deps"]
    assert (tmp_path / ".python-version").read_text() == "3.11\n3.9\n"
    for era in pins.TOX_ENVS:
        assert (tmp_path / "constraints" / f"{era}.txt").read_text() == pins.text(era)
    test = (tmp_path / "tests" / "test_conformance_eras.py").read_text()
    compile(test, "test_conformance_eras.py", "exec")
    assert "from corridor_pkg.envs import Corridor" in test and f"envbridge {__version__}" in test
    assert 'tapes_dir = os.path.join(TAPES, "corridor_pkg.envs.Corridor")' in test


def test_init_tox_no_rllib_leaves_the_rllib_env_out(tmp_path):
    assert main(["init", "tox", "--dir", str(tmp_path), "--env", "corridor_pkg.envs:Corridor", "--no-rllib"]) == 0
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(tmp_path / "tox.ini")
    assert ini["tox"]["envlist"] == "core-py39, core-py311, modern, legacy" and "testenv:rllib" not in ini
    assert not (tmp_path / "constraints" / "rllib.txt").exists()


def test_every_tox_env_a_runtime_names_has_its_row_and_each_row_a_runtime_or_the_core():
    named = {env for row in runtimes.RUNTIMES.values() for env in row.tox_envs}
    assert named == set(pins.TOX_ENVS)
    assert pins.TOX_ENVS["rllib"].views == ("neutral", "gymnasium", "rllib", "matlab")


def test_init_tox_refuses_to_overwrite_and_names_the_files(tmp_path, capsys):
    (tmp_path / "tox.ini").write_text("[tox]\n")
    (tmp_path / "constraints").mkdir()
    (tmp_path / "constraints" / "legacy.txt").write_text("mine\n")
    assert main(["init", "tox", "--dir", str(tmp_path), "--env", "m:E"]) == 2
    assert capsys.readouterr().err == (
        f"envbridge init tox: SpecError: the files envbridge init tox writes in {tmp_path} must not exist yet, got "
        "constraints/legacy.txt, tox.ini. Move them away, or pass --force to overwrite them.\n"
    )
    assert (tmp_path / "tox.ini").read_text() == "[tox]\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["constraints", "legacy.txt", "tox.ini"]
    assert main(["init", "tox", "--dir", str(tmp_path), "--env", "m:E", "--force"]) == 0
    assert (tmp_path / "constraints" / "legacy.txt").read_text() == pins.text("legacy")


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    (tmp_path / "tests").write_text("a file where the tests folder goes\n")
    with pytest.raises(SpecError) as caught:
        project.write_all(str(tmp_path), project.render(["m:E"]))
    assert str(caught.value) == (
        f"writing {tmp_path}/tests must succeed, got FileExistsError: File exists. Check the folder's permissions "
        "and free space; nothing was written."
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tests"]


def test_a_failed_forced_write_puts_the_old_files_back(tmp_path, monkeypatch):
    (tmp_path / "tox.ini").write_text("[tox]\n")
    (tmp_path / ".python-version").write_text("3.12\n")
    real, calls = os.replace, []

    def replace(src, dst):  # the third rename fails: the disk is full, say
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(28, "No space left on device", dst)
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(SpecError) as caught:
        project.write_all(str(tmp_path), project.render(["m:E"]), force=True)
    assert str(caught.value) == (
        f"writing {calls[2]} must succeed, got OSError: No space left on device. Check the folder's permissions "
        "and free space; nothing was written."
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [".python-version", "tox.ini"]
    assert (tmp_path / "tox.ini").read_text() == "[tox]\n"
    assert (tmp_path / ".python-version").read_text() == "3.12\n"


@pytest.mark.parametrize("env", ["corridor", "corridor.py:Corridor", "a b:C", "m:E.F"])
def test_init_tox_wants_module_attr(env):
    fix = "Name the env as module:attr, e.g. --env mypkg.envs:Corridor (a bridge.Env class or a factory)."
    with raises_exactly(SpecError, f"--env must be module:attr, got {env!r}. {fix}"):
        project.render([env])


def test_init_tox_wants_an_existing_folder(tmp_path, capsys):
    assert main(["init", "tox", "--dir", str(tmp_path / "nope"), "--env", "m:E"]) == 2
    assert capsys.readouterr().err == (
        f"envbridge init tox: SpecError: --dir must be an existing folder, got {str(tmp_path / 'nope')!r}. "
        "Create it first, or pass your project's folder.\n"
    )


def test_stale_constraint_copies_are_named_with_the_refresh_command(tmp_path):
    (tmp_path / "legacy.txt").write_text(pins.text("legacy"))
    pins.check_copies(str(tmp_path))  # equal: fine
    (tmp_path / "modern.txt").write_text("gymnasium==0.29\n")
    msg = (
        f"the constraints in {tmp_path} must equal the installed envbridge's pins, got modern.txt differ. "
        "Refresh them: envbridge pins modern > constraints/modern.txt."
    )
    with raises_exactly(SpecError, msg):
        pins.check_copies(str(tmp_path))


def test_a_failed_forced_write_keeps_a_symlinked_tox_ini_a_symlink(tmp_path, monkeypatch):
    (tmp_path / "shared.ini").write_text("[tox]\n")
    (tmp_path / "tox.ini").symlink_to(tmp_path / "shared.ini")
    real, calls = os.replace, []

    def replace(src, dst):  # the last rename fails, after tox.ini was replaced
        calls.append(dst)
        if len(calls) == len(project.render(["m:E"])):
            raise OSError(28, "No space left on device", dst)
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(SpecError):
        project.write_all(str(tmp_path), project.render(["m:E"]), force=True)
    assert os.path.islink(tmp_path / "tox.ini") and os.readlink(tmp_path / "tox.ini") == str(tmp_path / "shared.ini")
    assert (tmp_path / "shared.ini").read_text() == "[tox]\n"


# env lists whose names collide with each other or with the generated file's own names
COLLIDING = [
    ["a.envs:Env", "b.envs:Env"],
    ["a.envs:CrossEraSuite"],
    ["a.envs:os"],
    ["a.envs:pins"],
    ["a.envs:HERE", "b.envs:TAPES"],
    ["a.envs:Env", "b.envs:Env", "c.envs:Env"],
    ["a.envs:Env2", "b.envs:Env", "c.envs:Env"],
    ["a.b:Env", "a_b:Env"],
    ["a.envs:Env_2", "b.envs:Env"],
    ["os:Env", "a.envs:Env"],
    ["a.envs:test_constraints_are_the_installed_envbridges_pins"],
]


@pytest.mark.parametrize("envs", COLLIDING, ids=["+".join(e) for e in COLLIDING])
def test_init_tox_tests_every_env_it_is_given(tmp_path, monkeypatch, envs):
    import importlib.util
    import sys
    import types

    from bridge.conformance.eras import CrossEraSuite

    made = {}
    for spec in envs:  # each env a distinct class in a module that exists only in sys.modules
        module_name, attr = spec.split(":")
        parts = module_name.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name not in sys.modules or name == "os":
                monkeypatch.setitem(sys.modules, name, sys.modules.get(name) or types.ModuleType(name))
        made[spec] = type(attr, (), {})
        monkeypatch.setattr(sys.modules[module_name], attr, made[spec], raising=False)
    path = tmp_path / "test_conformance_eras.py"
    path.write_text(project.conformance_test(envs))
    loaded = importlib.util.spec_from_file_location("generated_eras", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    suites = [v for k, v in vars(module).items() if k.startswith("Test") and isinstance(v, type)]
    assert all(issubclass(s, CrossEraSuite) for s in suites)
    built = {s.tapes_dir: type(s.make_env(None)) for s in suites}
    assert built == {os.path.join(str(tmp_path), "tapes", e.replace(":", ".")): made[e] for e in envs}


def test_init_tox_refuses_an_env_named_twice():
    with raises_exactly(SpecError, "--env must name each env once, got 'a.envs:Env' twice. Pass each --env once."):
        project.render(["a.envs:Env", "b.envs:Env", "a.envs:Env"])


def test_init_tox_env_era_hosts_the_env_in_the_other_python(tmp_path):
    argv = ["init", "tox", "--dir", str(tmp_path), "--env", "corridor_pkg.envs:Corridor", "--env-era", "legacy"]
    assert main(argv) == 0
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(tmp_path / "tox.ini")
    host = [
        "env -u PIP_CONSTRAINT python3.9 -m venv {envtmpdir}/host",
        "env -u PIP_CONSTRAINT {envtmpdir}/host/bin/python -m pip install -q -c {toxinidir}/constraints/legacy.txt "
        "{toxinidir} {env:ENVBRIDGE_SOURCE:envbridge}",
    ]
    for name in ("core-py311", "modern", "rllib"):  # Python 3.11: the env is built in a 3.9 host venv
        section = ini[f"testenv:{name}"]
        assert section["skip_install"] == "true" and section["allowlist_externals"] == "env, python3.9"
        assert section["commands_pre"].strip().split("\n") == host
        assert section["setenv"].split("\n")[-1] == "ENVBRIDGE_PYTHON_LEGACY = {envtmpdir}/host/bin/python"
    assert "ENVBRIDGE_VIEWS = neutral,gymnasium,sb3,dm_env,matlab" in ini["testenv:modern"]["setenv"]
    for name in ("core-py39", "legacy"):  # Python 3.9: the env's own era, built in-process
        assert "skip_install" not in ini[f"testenv:{name}"] and "host" not in ini[f"testenv:{name}"].get("setenv", "")
    assert ini["testenv:legacy"]["commands_pre"] == "python -m pip install --no-deps dreamerv2==2.2.0"
    test = (tmp_path / "tests" / "test_conformance_eras.py").read_text()
    compile(test, "test_conformance_eras.py", "exec")
    assert "corridor_pkg.envs import" not in test  # its packages may not install in 3.11
    assert 'return hosted("corridor_pkg.envs:Corridor", "legacy")' in test


def test_the_generated_hosted_suite_builds_the_env_here_or_in_the_other_era(tmp_path, monkeypatch):
    import importlib.util

    from test_remote import other_python

    from bridge.hosted.client import RemoteEnv, host_python

    here = runtimes.era_of_interpreter()
    other = "legacy" if here == "modern" else "modern"
    monkeypatch.setenv(f"ENVBRIDGE_PYTHON_{other.upper()}", host_python(other_python()))
    built = {}
    for era in (here, other):
        path = tmp_path / f"test_{era}.py"
        path.write_text(project.conformance_test(["bridge.examples:GridWorld"], env_era=era))
        loaded = importlib.util.spec_from_file_location(f"generated_{era}", path)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
        built[era] = module.TestGridWorldAcrossEras().make_env()
    try:
        assert type(built[here]).__name__ == "GridWorld"
        assert isinstance(built[other], RemoteEnv)
        assert built[other].peer["python"].startswith("3.9." if other == "legacy" else "3.11.")
        assert built[other].reset(seed=3)[0].tolist() == built[here].reset(seed=3)[0].tolist()
    finally:
        built[other].close()

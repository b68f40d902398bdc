"""Every CLI command on a table of bad arguments: exit code 2 and one house message on stderr, no
traceback (the user's own exception appears only as the named cause)."""

from __future__ import annotations

import sys

import pytest

from bridge.cli import main

RAISES_AT_IMPORT = "raise ValueError('boom at import')\n"
FACTORY = "def broken():\n    raise RuntimeError('boom in the factory')\n\nNUMBER = 3\n"

BAD = [
    (["check", ":Corridor"], "envbridge check: SpecError: entry_point must name a module and an attribute"),
    (["check", "nope/Env-v0"], "envbridge check: SpecError: env id must be registered"),
    (["check", "raises.py:Env"], "envbridge check: ContractError: env file raises.py must import without raising"),
    (["check", "raises:Env"], "envbridge check: ContractError: entry_point module must import without raising"),
    (["check", "factories:broken"], "envbridge check: ContractError: env factory broken must build the env"),
    (["check", "factories:NUMBER"], "envbridge check: SpecError: env must be a bridge.Env"),
    (["check", "factories:missing"], "envbridge check: SpecError: entry_point attribute of factories must exist"),
    (["check", "envbridge/GridWorld-v0", "--seed", "-1"], "envbridge check: --seed must be a whole number >= 0"),
    (["check", "envbridge/GridWorld-v0", "--import", "raises"], "envbridge check: ContractError: --import module"),
    (["check", "envbridge/GridWorld-v0", "--target", "nope"], "envbridge check: SpecError: check target must be"),
    (["conform", "envbridge/GridWorld-v0", "--record", "t.npz", "--steps", "0"], "envbridge conform: --steps must"),
    (["conform", "envbridge/GridWorld-v0", "--verify", "absent.npz"], "envbridge conform: "),
    (
        ["conform", "envbridge/GridWorld-v0", "--record", "/dev/null/t.npz"],
        "envbridge conform: SpecError: --record must",
    ),
    (["conform", "envbridge/GridWorld-v0", "--verify", "/dev/zero"], "envbridge conform: ContractError: tape manifest"),
    (["conform", "envbridge/GridWorld-v0", "--verify", "/dev"], "envbridge conform: ContractError: tape manifest"),
    (["train", "sb3", "--steps", "-5"], "envbridge train sb3: --steps must be a whole number >= 1, got '-5'"),
    (["train", "sb3", "--steps", "lots"], "envbridge train sb3: --steps must be a whole number >= 1, got 'lots'"),
    (["train", "sb3", "--n-envs", "0"], "envbridge train sb3: --n-envs must be a whole number >= 1, got '0'"),
    (["train", "sb3", "--algo", "PPO2"], "envbridge train sb3: invalid choice: 'PPO2'"),
    (["train", "rllib", "--env-runners", "-1"], "envbridge train rllib: --env-runners must be a whole number >= 0"),
    (["train", "dreamerv2", "--seed", "x"], "envbridge train dreamerv2: --seed must be a whole number >= 0"),
    (["train", "nope"], "envbridge train: invalid choice: 'nope'"),
    (["pins", "py27"], "envbridge pins: SpecError: era must name a constraints file of envbridge"),
    (["init", "tox", "--env", "not a name"], "envbridge init tox: SpecError: --env must be module:attr"),
    (["demo", "--steps", "0"], "envbridge demo: --steps must be a whole number >= 1, got '0'"),
    (["nope"], "envbridge: invalid choice: 'nope'"),
]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "raises.py").write_text(RAISES_AT_IMPORT)
    (tmp_path / "factories.py").write_text(FACTORY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name in ("raises", "factories"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("argv, start", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_argument_is_one_house_message_and_exit_2(folder, capsys, argv, start):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse exits itself, with our error() formatting
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), err
    assert "Traceback" not in err and lines[0].endswith((".", "?", ")")) or "invalid choice" in lines[0], err


# issue 35, item 15: what exited 0 silently, and files named x.py that are not files, whole messages
EXITS = "import sys\nsys.exit(0)\n"
NOT_EXITING = "(importing a module must not end the program)."
SEAMS = [
    (
        ["check", "sys:exit"],
        "envbridge check: ContractError: env factory exit must build the env without exiting, got sys.exit(None). "
        "Point at a bridge.Env subclass or a function that returns one (building an env must not exit).",
    ),
    (
        ["check", "envbridge/GridWorld-v0", "--import", "exits"],
        "envbridge check: ContractError: --import module must import without exiting, got 'exits': sys.exit(0). "
        f"Move the exit under if __name__ == '__main__': {NOT_EXITING}",
    ),
    (
        ["check", "exits.py:Env"],
        "envbridge check: ContractError: env file exits.py must import without exiting, got 'exits': sys.exit(0). "
        f"Move the exit under if __name__ == '__main__': {NOT_EXITING}",
    ),
    (
        ["check", "fifo.py:Env"],
        "envbridge check: SpecError: env file 'fifo.py' must be a regular file, got a named pipe (FIFO). "
        "Point at the .py file itself.",
    ),
    (
        ["check", "folder.py:Env"],
        "envbridge check: SpecError: env file 'folder.py' must be a regular file, got a directory. "
        "Point at the .py file itself.",
    ),
    (
        ["check", "zero.py:Env"],
        "envbridge check: SpecError: env file 'zero.py' must be a regular file, got a character device. "
        "Point at the .py file itself.",
    ),
    (
        ["check", "envbridge/GridWorld-v0", "--import", "fifo.py"],
        "envbridge check: SpecError: env file 'fifo.py' must be a regular file, got a named pipe (FIFO). "
        "Point at the .py file itself.",
    ),
    (  # issue 40: "No module named 'dotted'" did not say the dot in the file name is the cause
        ["check", "dotted.name.py:Corridor"],
        "envbridge check: SpecError: env file name must be importable as one module (no dot before .py), got "
        "'dotted.name.py' (Python reads a dot in a module name as a package). Rename the file without the dot, "
        "e.g. dotted_name.py.",
    ),
    (
        ["check", "absent.py:Env"],
        "envbridge check: SpecError: env file must exist, got 'absent.py'. Check the path (relative to the "
        "current folder).",
    ),
]


@pytest.mark.parametrize("argv, text", SEAMS, ids=[" ".join(a) for a, _ in SEAMS])
def test_an_exit_or_a_file_that_is_not_a_file_is_one_whole_message_and_exit_2(folder, capsys, argv, text):
    import os

    (folder / "exits.py").write_text(EXITS)
    (folder / "dotted.name.py").write_text("import bridge\nCorridor = None\n")
    os.mkfifo(folder / "fifo.py")
    (folder / "folder.py").mkdir()
    os.symlink("/dev/zero", folder / "zero.py")
    try:
        code = main(argv)
    finally:
        sys.modules.pop("exits", None)
    out, err = capsys.readouterr()
    assert (code, err) == (2, text + "\n"), (out, err)


def test_an_interrupt_is_one_line_and_exit_130(folder, capsys):
    (folder / "interrupts.py").write_text("raise KeyboardInterrupt\n")
    try:
        code = main(["check", "interrupts.py:Env"])
    finally:
        sys.modules.pop("interrupts", None)
    out, err = capsys.readouterr()
    assert (code, err) == (130, "envbridge check: interrupted\n"), (out, err)

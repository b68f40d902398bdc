"""Every loader refuses a path that is not a regular file, whatever ``os.stat`` says, within 1 s.

A named pipe blocks a plain ``open``; ``/dev/zero`` and ``/dev/urandom`` report size 0 and never
end. Each case runs in a forked child joined with a timeout, so a regression fails one case instead
of hanging the suite; the child sends back the whole message, which is asserted here.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil

import pytest

from bridge import config, safe_json, snapshot
from bridge.conformance import Tape
from bridge.conformance.recording import record
from bridge.examples import GridWorld

RESAVE = "Recreate it with bridge.snapshot.save."
RECORD = "Record the tape again with envbridge conform --record."
YAML_FIX = "Pass a YAML file (a regular file of at most 65536 bytes)."

KINDS = {
    "fifo": "a named pipe (FIFO)",
    "dev-zero": "a character device",
    "dev-urandom": "a character device",
    "directory": "a directory",
    "symlink-loop": None,  # the open itself fails: ELOOP
}


def _make(kind: str, path: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "dev-urandom":
        os.symlink("/dev/urandom", path)
    elif kind == "directory":
        os.mkdir(path)
    else:
        os.symlink(path + ".other", path)
        os.symlink(path, path + ".other")


def _good_tape(folder: str) -> str:
    path = os.path.join(folder, "good.npz")
    record(GridWorld(), seed=0, steps=3).save(path)
    return path


def _snapshot(path: str, folder: str) -> None:
    snapshot.load(path)


def _tape(path: str, folder: str) -> None:  # the .npz itself, next to a sound manifest
    shutil.copy(_good_tape(folder) + ".json", path + ".json")
    Tape.load(path)


def _manifest(path: str, folder: str) -> None:  # the manifest, next to a sound .npz
    shutil.copy(_good_tape(folder), path[: -len(".json")])
    Tape.load(path[: -len(".json")])


def _json(path: str, folder: str) -> None:
    safe_json.read_json_file(path, subject="manifest m.json", fix="Write it again.")


def _config(path: str, folder: str) -> None:
    config.read([path])


LOADERS = {
    "snapshot.load": (_snapshot, "x.npz", lambda p, f: f"snapshot file must {{}}, got {{}}. {RESAVE}"),
    "Tape.load": (_tape, "x.npz", lambda p, f: f"tape x.npz must {{}}, got {{}}. {RECORD}"),
    "Tape.load manifest": (
        _manifest,
        "t.npz.json",
        lambda p, f: f"tape manifest t.npz.json must {{}}, got {{}}. {RECORD}",
    ),
    "safe_json.read_json_file": (_json, "m.json", lambda p, f: "manifest m.json must {}, got {}. Write it again."),
    "config.read": (_config, "x.yaml", lambda p, f: f"--config file {p} must {{}}, got {{}}. {YAML_FIX}"),
}


def _child(loader: str, path: str, folder: str, queue: object) -> None:
    try:
        LOADERS[loader][0](path, folder)
        queue.put(("accepted", ""))  # type: ignore[attr-defined]
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which asserts on it
        queue.put((type(e).__name__, str(e)))  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("loader", list(LOADERS))
def test_loader_refuses_what_is_not_a_regular_file_within_a_second(tmp_path, loader, kind):
    _, name, template = LOADERS[loader]
    path = str(tmp_path / name)
    _make(kind, path)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(loader, path, str(tmp_path), queue))
    child.start()
    try:
        child.join(1.0)
        assert not child.is_alive(), f"{loader} on a {kind} still reading after 1 s"
    finally:
        if child.is_alive():
            child.kill()
            child.join()
    kind_name, text = queue.get(timeout=1.0)
    shown = template(path, str(tmp_path))
    if KINDS[kind] is None:
        expected = shown.format("be a readable file", "OSError (Too many levels of symbolic links)")
    else:
        expected = shown.format("be a regular file", KINDS[kind])
    assert (kind_name, text) == ("SpecError" if loader == "config.read" else "ContractError", expected)

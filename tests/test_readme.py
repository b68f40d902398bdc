"""Every code block and command line of the README, run in the era it belongs to, with tiny budgets.

Each ```python / ```bash block follows a marker comment that says what it is:

* ``<!-- readme-test: setup -->``: installation lines; not run here (``.ci/run`` installs the same
  way, and the closing notes time them from a fresh clone);
* ``<!-- readme-test: era=modern|legacy|rllib|any -->``: run in that era (skipped in the other era, and a
  missing framework fails inside that era's tox env); ``expect="..."`` must appear in its output;
* ``<!-- readme-test: file=NAME -->``: written to NAME in the shared working folder (later blocks
  import it);
* ``<!-- readme-test: pytest=NAME -->``: written to NAME and run with pytest.

A python or bash block without a marker fails. Unlabelled fences are measured output (Numbers).
Budgets are cut by :data:`BUDGETS`; each cut must find its text, so a README edit cannot slip by.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from typing import Any, Dict, List, NamedTuple, Optional

import pytest
from support import require

README = os.path.join(os.path.dirname(__file__), "..", "README.md")
# README text -> what the test runs instead (the same call, a smaller budget)
BUDGETS = {
    # PPO's rollout is n_steps x n_envs (2048 x 4 by default): shrink it, or .learn(256) still does 8192 steps
    'make_vec_env("me/Corridor-v0", n_envs=4)).learn(10_000)': 'make_vec_env("me/Corridor-v0", n_envs=4), n_steps=64, batch_size=64).learn(256)',
    '"steps": 2000': '"steps": 300',
    # dm_control's and ALE's episodes (1000 steps, thousands) do not fit 256 steps: DreamerV2 refuses such a run
    # before it starts (one whole episode of prefill, then training), so the cut caps the episodes too
    "cartpole-swingup --host-python modern --steps 20000": "cartpole-swingup --host-python modern --steps 256 --config time_limit=100",
    "Pong-v5 --host-python modern --steps 20000": "Pong-v5 --host-python modern --steps 256 --config time_limit=100",
    "--steps 20000": "--steps 256",
    "--steps 8000": "--steps 2000",
    "envbridge demo": "envbridge demo --steps 1024 --no-progress --logdir runs/demo",
}
ERA_MODULE = {"modern": "stable_baselines3", "legacy": "dreamerv2", "rllib": "ray"}
MARKER = re.compile(r"<!-- readme-test: (.*?) -->\s*$")


class Block(NamedTuple):
    line: int
    language: str
    marker: Dict[str, str]
    text: str


def _blocks() -> List[Block]:
    with open(README, encoding="utf-8") as f:
        lines = f.read().splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        marker = MARKER.match(previous)
        fields = dict(f.split("=", 1) if "=" in f else (f, "") for f in _fields(marker))
        if fence.group(1):
            found.append(Block(i + 1, fence.group(1), fields, "\n".join(lines[i + 1 : end]) + "\n"))
        i = end + 1
    return found


def _fields(marker: Optional[Any]) -> List[str]:
    return shlex.split(marker.group(1)) if marker else []


BLOCKS = _blocks()


def _cut(text: str) -> str:
    for before, after in BUDGETS.items():
        text = text.replace(before, after)
    return text


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """One working folder for the whole README, with its files written first."""
    here = tmp_path_factory.mktemp("readme")
    for block in BLOCKS:
        if "file" in block.marker:
            (here / block.marker["file"]).write_text(block.text)
    return here


def _run(argv: List[str], folder) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _command(line: str) -> List[str]:
    words = shlex.split(line, comments=True)
    if words[0] == "envbridge":
        return [sys.executable, "-m", "bridge.cli", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"README command {line!r} is neither envbridge nor python: mark its block setup")


def test_every_block_is_marked():
    unmarked = [b.line for b in BLOCKS if b.language in ("python", "bash") and not b.marker]
    assert not unmarked, f"README code blocks without a readme-test marker at lines {unmarked}"
    kinds = {k for b in BLOCKS for k in b.marker} - {"setup", "era", "file", "pytest", "expect"}
    assert not kinds, f"unknown readme-test markers {kinds}"


# the rllib tox env runs the rllib blocks only (and the suite example): the era-free blocks run in the
# four other envs already, and each costs a Ray start there (~30 s)
HERE_ONLY = os.environ.get("ENVBRIDGE_ERA") == "rllib"


def _here(block: Block) -> bool:
    return not HERE_ONLY or block.marker.get("era") == "rllib"


@pytest.mark.parametrize("block", [b for b in BLOCKS if "era" in b.marker and _here(b)], ids=lambda b: f"line{b.line}")
def test_the_block_runs_in_its_era(block, folder):
    era = block.marker["era"]
    if era != "any":
        require(ERA_MODULE[era])
    text = _cut(block.text)
    if block.language == "python":
        script = folder / f"block_{block.line}.py"
        script.write_text(text)
        out = _run([sys.executable, str(script)], folder)
    else:
        out = "".join(_run(_command(line), folder) for line in text.splitlines() if line.strip())
    assert block.marker.get("expect", "") in out


@pytest.mark.parametrize("block", [b for b in BLOCKS if "pytest" in b.marker], ids=lambda b: f"line{b.line}")
def test_the_conformance_suite_example_passes(block, folder):
    (folder / block.marker["pytest"]).write_text(block.text)
    out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", block.marker["pytest"]], folder)
    assert re.search(r"\b\d+ passed", out), out


def test_every_budget_cut_finds_its_text():
    text = "".join(b.text for b in BLOCKS)
    missing = [before for before in BUDGETS if before not in text]
    assert not missing, f"README no longer contains {missing}: update BUDGETS"

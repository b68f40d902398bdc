"""Every fix text the project prints is applicable where it is printed (issue 30): the check
reports of a corpus of envs on every runtime installed here, every runtime's option refusals and the
CLI's messages are walked, and each name a fix asks the user to call or type must exist in this era
and on that surface: an export (``to_gymnasium(env, normalize_actions=True)``) must be installed here
and honour the options named, ``bridge.X`` must exist, a MATLAB facade function must exist, and a
``--flag`` must be a flag of the ``envbridge`` command the fix names (or that printed it)."""

from __future__ import annotations

import argparse
import re
from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np
import pytest
from toy_envs import families
from toy_envs.lowering import ShiftedDiscreteEnv

import bridge
from bridge import runtimes
from bridge import spaces as S
from bridge.cli import _parser, main

CALL = re.compile(r"\b(to_\w+|make_vec_env|register_rllib)\(([^)]*)\)")
BRIDGE_ATTR = re.compile(r"\bbridge\.(\w+)")
MATLAB_CALL = re.compile(r"\b(rl[A-Z]\w*|get(?:Observation|Action)Info)\(")
COMMAND = re.compile(r"\benvbridge (\w+)(?: (\w+))?")
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


class Asymmetric(ShiftedDiscreteEnv):
    """A [0, 4] action Box: the runtimes' "symmetric and normalized" warnings and the rescale advice."""

    def __init__(self):
        super().__init__()
        self.action_space = S.Box(0.0, 4.0, (2,), np.float32)

    def step(self, action):
        return self._move(0)


class Float64Unbounded(ShiftedDiscreteEnv):
    """A float64 unbounded observation: the float policy's advice, the infinity warnings."""

    def __init__(self):
        super().__init__()
        self.observation_space = S.Box(-np.inf, np.inf, (3,), np.float64)

    def _obs(self):
        return np.zeros(3, np.float64)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action):
        return self._obs(), 0.0, False, False, {}


class NoSeed(Asymmetric):
    def reset(self, *, seed=None, options=None):
        return self._obs(), {}


CORPUS = [
    Asymmetric,
    Float64Unbounded,
    NoSeed,
    families.double_integrator,
    families.column_and_row,
    families.camera_and_state,
    families.tiny_treasure,
    families.tracker,
]


def _exports() -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """Export name -> (runtime, the options it honours), for the runtimes installed here."""
    out = {}
    for name in runtimes.available():
        row = runtimes.get(name)
        for export, options in ((row.export, row.options), (row.batch_export, row.batch_options)):
            if export is not None:
                out[export] = (name, tuple(options))
        for export in row.exports:
            out.setdefault(export, (name, ()))
    return out


def _flags_of(path: Tuple[str, ...]) -> Optional[set]:
    """The flags of ``envbridge <path>`` (None if there is no such command here)."""
    parser: argparse.ArgumentParser = _parser()
    for part in path:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or part not in subs[0].choices:
            return None
        parser = subs[0].choices[part]
    return {opt[2:] for action in parser._actions for opt in action.option_strings if opt.startswith("--")}


def _command(text: str, surface: Tuple[str, ...]) -> Tuple[str, ...]:
    found = COMMAND.search(text)
    if found is None:
        return surface
    return tuple(p for p in found.groups() if p and p not in ("MODULE", "ENV"))


def problems_in(text: str, surface: Tuple[str, ...] = ()) -> List[str]:
    """What in one fix text does not exist in this era / on this surface (empty: applicable)."""
    found = []
    exports = _exports()
    for name, args in CALL.findall(text):
        if name not in exports:
            found.append(f"{name}() is not an export installed in this era")
            continue
        runtime, honoured = exports[name]
        for option in re.findall(r"(\w+)=", args):
            if honoured and option not in honoured:
                found.append(f"{name}() does not take {option}= (the {runtime} export's options: {honoured})")
    for name in BRIDGE_ATTR.findall(text):
        if name not in ("adapters",) and not hasattr(bridge, name):
            found.append(f"bridge.{name} does not exist")
    if MATLAB_CALL.search(text):
        from bridge.adapters import matlab

        found += [f"{n}() is not in the MATLAB facade" for n in MATLAB_CALL.findall(text) if not hasattr(matlab, n)]
    flags = FLAG.findall(text)
    if flags:
        path = _command(text, surface)
        if path and path[0] == "train" and len(path) > 1 and path[1] not in runtimes.available():
            found.append(f"envbridge {' '.join(path)} names a runtime not installed in this era")
        known = _flags_of(path) if path else None
        if known is None:
            found.append(f"--{flags[0]} is named without an envbridge command that has it")
        else:
            found += [f"envbridge {' '.join(path)} has no --{f}" for f in flags if f not in known]
    return found


def _check_fixes() -> Iterable[Tuple[str, str]]:
    for make in CORPUS:
        report = bridge.check(make)
        for p in report.problems:
            yield f"check {getattr(make, '__name__', make)} [{p.target}] {p.message}", p.fix


def _refusal_fixes() -> Iterable[Tuple[str, str]]:
    for name in runtimes.available():
        for option, fix in runtimes.get(name).refusals.items():
            yield f"{name} refuses {option}", fix


def test_every_fix_a_check_report_prints_exists_in_this_era():
    walked = list(_check_fixes())
    assert len(walked) >= 2 * len(CORPUS)  # the corpus does produce advice and errors on every target here
    bad = [(where, fix, problems_in(fix)) for where, fix in walked if problems_in(fix)]
    assert not bad, "\n".join(f"{w}\n  fix: {f}\n  -> {p}" for w, f, p in bad)


def test_every_option_refusal_names_what_exists_in_this_era():
    bad = [(where, fix, problems_in(fix)) for where, fix in _refusal_fixes() if problems_in(fix)]
    assert not bad, bad


CLI_CASES = [
    ["check", "toy_envs.families:tiny_treasure", "--target", "sb3"],
    ["check", "toy_envs.families:double_integrator"],
    ["train", "sb3", "--env", "toy_envs.families:tiny_treasure", "--steps", "8"],
    ["train", "sb3", "--env", "toy_envs.families:camera_and_state", "--policy", "MlpPolicy", "--steps", "8"],
    ["train", "sb3", "--policy-kwargs", "{'net_arch': (", "--steps", "8"],
    ["train", "sb3", "--config", "batch4"],
    ["train", "dreamerv2", "--config", "batch4", "--logdir", "never"],  # in tmp_path (the test chdirs there)
    ["train", "rllib", "--config", "nope=1", "--steps", "8"],
    ["conform", "envbridge/GridWorld-v0", "--verify", "absent.npz"],
    ["init", "tox", "--env", "not a name"],
]


@pytest.mark.parametrize("argv", CLI_CASES, ids=[" ".join(a[:2]) + f"-{i}" for i, a in enumerate(CLI_CASES)])
def test_every_fix_the_cli_prints_exists_on_the_cli(argv, capsys, tmp_path, monkeypatch):
    if argv[0] == "train" and argv[1] not in runtimes.available():
        pytest.skip(f"{argv[1]} is not installed here (not this era)")
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    shown = capsys.readouterr()
    assert "Traceback" not in shown.err and code in (0, 1, 2)
    lines = [line for line in (shown.out + shown.err).splitlines() if line.strip()]
    surface = tuple(argv[:2]) if argv[0] in ("train", "init") else (argv[0],)
    texts = [line.split("fix:", 1)[1] for line in lines if "fix:" in line] or lines[-1:]
    bad = [(t, problems_in(t, surface)) for t in texts if problems_in(t, surface)]
    assert not bad, bad


@pytest.mark.parametrize(
    "text, surface, expected",
    [
        ("Export with to_nowhere(env)", (), ["to_nowhere() is not an export installed in this era"]),
        ("pass --no-such-flag", ("check",), ["envbridge check has no --no-such-flag"]),
        ("pass --steps 10", (), ["--steps is named without an envbridge command that has it"]),
        ("use bridge.no_such_thing", (), ["bridge.no_such_thing does not exist"]),
        ("build rlNoSuchAgent(obs, act)", (), ["rlNoSuchAgent() is not in the MATLAB facade"]),
        ("envbridge check --json", (), []),
    ],
)
def test_the_walk_catches_what_does_not_exist(text, surface, expected):
    assert problems_in(text, surface) == expected


def test_the_legacy_gym_fix_of_issue_30_would_be_caught_here():
    text = "Export with to_gymnasium(env, normalize_actions=True), which exposes the action as [-1, 1]"
    installed = "gymnasium" in runtimes.available()
    assert problems_in(text) == ([] if installed else ["to_gymnasium() is not an export installed in this era"])
    if "gym" in runtimes.available():  # what the gym profile says instead, in its own era
        from bridge.adapters._shared.profile import normalize_fix

        assert normalize_fix("gym") == (
            "Declare the action Box as [-1, 1] and rescale it in the env's step (gym 0.23 passes Box actions as the "
            "env declares them)"
        )

"""Tapes exchanged across Gym eras, for a user's own env: the cross-era half of the pytest mixin.

Each era (a Python and numpy pair: ``py39-numpy1``, ``py311-numpy2``) records its tape of the env
once, into ``tapes_dir``, which the user commits. Every tox env then replays *every* era's tape
through every export it has, and the eras' tapes must hold the same stream::

    class TestMyEnv(CrossEraSuite):
        tapes_dir = os.path.join(os.path.dirname(__file__), "tapes", "my-env")

        def make_env(self):
            return MyEnv()

``ENVBRIDGE_VIEWS`` (set per tox env by ``envbridge init tox``) names the views that must agree
there; a view not installed where it is required fails instead of skipping.
"""

from __future__ import annotations

import glob
import os
import sys
import warnings
from typing import Any, Dict, List

import numpy as np

from bridge.conformance.replay import View, replay, verify
from bridge.conformance.suite import ConformanceSuite
from bridge.conformance.tape import Tape, leaves
from bridge.errors import ContractError, SpecError, message

__all__ = ["CrossEraSuite", "era_stamp", "compare_tapes", "required_views"]


def era_stamp() -> str:
    """This interpreter's era as a tape name: ``py<major><minor>-numpy<major>``."""
    return f"py{sys.version_info[0]}{sys.version_info[1]}-numpy{np.__version__.split('.')[0]}"


def required_views() -> List[str]:
    """The views that must agree here: ``ENVBRIDGE_VIEWS`` (comma-separated), else the neutral one."""
    listed = [v.strip() for v in os.environ.get("ENVBRIDGE_VIEWS", "").split(",") if v.strip()]
    return listed or ["neutral"]


class _TapeView(View):
    """Another era's tape, played back as if it were an env (actions must match the tape's)."""

    both_flags = True

    def __init__(self, name: str, tape: Tape) -> None:
        self.name, self.tape, self.entry, self.action = name, tape, 0, 0

    def _next(self, kind: str, where: str) -> Any:
        entries = self.tape.entries
        if self.entry >= len(entries) or entries[self.entry].kind != kind:
            got = "the end of the tape" if self.entry >= len(entries) else f"a {entries[self.entry].kind}"
            fix = "The env's episodes end at different steps in the two eras; re-record both only if that is deliberate"
            raise ContractError(message(f"{self.name} at {where}", f"hold a {kind}", got, fix))
        self.entry += 1
        return entries[self.entry - 1]

    def reset(self, seed: Any) -> Any:
        return self._next("reset", "a reset").obs

    def step(self, action: Any) -> Any:
        where = f"step {self.action}"
        space = self.tape.action_space
        if self.action >= len(self.tape.actions):
            raise ContractError(
                message(
                    f"{self.name}", "hold as many actions", f"{self.action}", "Record both eras with the same steps"
                )
            )
        theirs = leaves(space, self.tape.actions[self.action])
        for path, mine in leaves(space, action).items():
            if mine.dtype != theirs[path].dtype or mine.tobytes() != theirs[path].tobytes():
                fix = "The eras sampled different actions from one seed: the action space's sample() is not era-stable"
                raise ContractError(
                    message(f"{self.name} action{path} at {where}", f"be {mine!r}", repr(theirs[path]), fix)
                )
        self.action += 1
        entry = self._next("step", where)
        return entry.obs, entry.reward, entry.terminated, entry.truncated


def compare_tapes(mine: Tape, theirs: Tape, name: str) -> Any:
    """Whether tape ``theirs`` (called ``name``) holds the stream of ``mine``: a Verdict."""
    return replay(_TapeView(name, theirs), mine)


_DIVERGED = "If the env changed on purpose, delete its tapes folder and record again; else the env differs here"


class CrossEraSuite(ConformanceSuite):
    """:class:`ConformanceSuite` plus tapes recorded once per era and replayed in every era."""

    tapes_dir: str = ""  # the folder of this env's tapes (one per era); commit it

    def _folder(self) -> str:
        if not self.tapes_dir:
            fix = "Set tapes_dir = os.path.join(os.path.dirname(__file__), 'tapes', '<env name>') in the class"
            raise SpecError(message(f"{type(self).__name__}.tapes_dir", "name a folder", repr(self.tapes_dir), fix))
        return self.tapes_dir

    def _era_tapes(self) -> Dict[str, Tape]:
        """Every era's tape in tapes_dir, this era's recorded first if it is missing."""
        folder = self._folder()
        mine = os.path.join(folder, era_stamp() + ".npz")
        if not os.path.exists(mine):
            os.makedirs(folder, exist_ok=True)
            self._tape().save(mine)
            warnings.warn(f"recorded {mine} (+ .json): commit it, so the other era replays it", stacklevel=2)
        paths = sorted(glob.glob(os.path.join(folder, "*.npz")))
        return {os.path.basename(p)[: -len(".npz")]: Tape.load(p) for p in paths}

    def test_every_eras_tape_replays_through_every_export_here(self) -> None:
        wanted, problems = required_views(), []
        for era, tape in self._era_tapes().items():
            results = verify(self.make_env, tape, snapshot_at=len(tape.actions) // 3)
            for name in wanted:
                if name not in results:
                    results[name] = verify(self.make_env, tape, [name])[name]  # names the unknown view
            for name, verdict in results.items():
                if verdict.failed or (name in wanted and not verdict.agrees):
                    fix = _DIVERGED if verdict.failed else "Install this tox env's stack (envbridge init tox)"
                    problems.append(message(f"the {era} tape through view {name!r}", "agree", str(verdict), fix))
        assert not problems, "\n" + "\n".join(problems)

    def test_the_eras_recorded_the_same_stream(self) -> None:
        tapes = self._era_tapes()
        here = tapes[era_stamp()]
        problems = []
        for era, tape in tapes.items():
            verdict = compare_tapes(here, tape, f"the {era} tape")
            if not verdict.agrees:
                fix = "Make the env depend on its seed and actions only (env.np_random, no global RNG)"
                problems.append(message(f"the {era_stamp()} tape", f"equal the {era} tape", str(verdict), fix))
        assert not problems, "\n" + "\n".join(problems)

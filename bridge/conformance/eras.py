"""Tapes exchanged across Gym eras, for a user's own env: the cross-era half of the pytest mixin.

Each era (a Python and numpy pair: ``py39-numpy1``, ``py311-numpy2``) records its tape of the env
once, into ``tapes_dir``, which the user commits, with the env's snapshots beside it. Every tox env
then answers two questions apart:

* *do the exports agree with the neutral env here?* This era's tape through every export it has,
  bit for bit;
* *is the env the same in every era?* Every other era's tape through the neutral env here, step by
  step from the recorded state (:mod:`bridge.conformance.across`): bit for bit, or a measured
  difference in ulps within the declared ``cross_era_ulps`` (the env's class attribute, or this
  suite's option; default 0), with the episode structure exact. The report is printed (``-rA``)::

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
import warnings
from typing import Dict, List, Optional

from bridge.conformance.across import compare_eras
from bridge.conformance.machine import era_stamp
from bridge.conformance.recording import record
from bridge.conformance.replay import verify
from bridge.conformance.suite import ConformanceSuite
from bridge.conformance.tape import Tape
from bridge.errors import SpecError, message

__all__ = ["CrossEraSuite", "era_stamp", "required_views"]


def required_views() -> List[str]:
    """The views that must agree here: ``ENVBRIDGE_VIEWS`` (comma-separated), else the neutral one."""
    listed = [v.strip() for v in os.environ.get("ENVBRIDGE_VIEWS", "").split(",") if v.strip()]
    return listed or ["neutral"]


_DIVERGED = "If the env changed on purpose, delete its tapes folder and record again; else the env differs here"


class CrossEraSuite(ConformanceSuite):
    """:class:`ConformanceSuite` plus tapes recorded once per era and replayed in every era."""

    tapes_dir: str = ""  # the folder of this env's tapes (one per era); commit it
    cross_era_ulps: Optional[int] = None  # None: the env's own cross_era_ulps (default 0: bit for bit)

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
            record(self.make_env, seed=self.seed, steps=self.steps, states=True).save(mine)
            warnings.warn(f"recorded {mine} (+ .json): commit it, so the other era replays it", stacklevel=2)
        paths = sorted(glob.glob(os.path.join(folder, "*.npz")))
        return {os.path.basename(p)[: -len(".npz")]: Tape.load(p) for p in paths}

    def test_every_export_agrees_with_the_neutral_env_here(self) -> None:
        """(a) This era's tape through every export here, bit for bit; a tape of this era recorded on
        another machine (the tape says where) agrees with the env here within the declared ulps, and
        every export with the env here bit for bit (:func:`bridge.conformance.verify`)."""
        wanted, problems, era = required_views(), [], era_stamp()
        tape = self._era_tapes()[era]
        rule = {"tolerance": self.cross_era_ulps, "owner": type(self).__name__}
        results = verify(self.make_env, tape, snapshot_at=len(tape.actions) // 3, **rule)
        for name in wanted:
            if name not in results:
                results[name] = verify(self.make_env, tape, [name], **rule)[name]  # names the unknown view
        for name, verdict in results.items():
            if verdict.failed or (name in wanted and not verdict.agrees):
                fix = _DIVERGED if verdict.failed else "Install this tox env's stack (envbridge init tox)"
                problems.append(message(f"the {era} tape through view {name!r}", "agree", str(verdict), fix))
        assert not problems, "\n" + "\n".join(problems)

    def test_the_env_is_the_same_in_every_era(self) -> None:
        """(b) Every other era's tape through the neutral env here: bit for bit, or within the
        declared ulps with the episode structure exact. Prints what it measured."""
        tapes, era = self._era_tapes(), era_stamp()
        problems = []
        for other, tape in tapes.items():
            if other == era:
                continue
            found = compare_eras(
                self.make_env,
                tape,
                name=f"the {other} tape",
                here=era,
                actions=tapes[era].actions,
                tolerance=self.cross_era_ulps,
                owner=type(self).__name__,
            )
            print(found)
            if not found.ok:
                problems.append(found.failure())
        assert not problems, "\n" + "\n".join(problems)

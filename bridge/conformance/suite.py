"""A pytest mixin that gives a user's env every envbridge check (in the spirit of dm_env's
``EnvironmentTestMixin``)::

    from bridge.conformance.suite import ConformanceSuite
    from mypkg import MyEnv

    class TestMyEnv(ConformanceSuite):
        def make_env(self):
            return MyEnv()

Each ``test_*`` below then runs in the user's test session: the core contract, every export profile
available in the interpreter (with ``check_options``, e.g. the SB3 policy and ``policy_kwargs`` the
user trains with), and a recorded tape replayed through every export (with a snapshot detour), each
failure naming the target, step and field.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from bridge.checker import check
from bridge.conformance.recording import record
from bridge.conformance.replay import verify
from bridge.conformance.tape import Tape


class ConformanceSuite:
    """Subclass as ``Test<Something>`` and implement :meth:`make_env`."""

    seed: int = 0
    steps: int = 200
    targets: Optional[List[str]] = None  # check targets; default: every one available here
    views: Optional[List[str]] = None  # conformance views; default: every one available here
    # bridge.check's options per target, as training will use them, e.g. a small image trained with
    # a custom extractor: {"sb3": {"policy_kwargs": {"features_extractor_class": SmallCNN}}}
    check_options: Optional[Dict[str, Dict[str, Any]]] = None

    def make_env(self) -> Any:
        raise NotImplementedError("ConformanceSuite subclasses implement make_env()")

    def _tape(self) -> Tape:
        return record(self.make_env, seed=self.seed, steps=self.steps)

    def test_core_and_export_checks(self) -> None:
        report = check(self.make_env, targets=self.targets, seed=self.seed, options=self.check_options)
        assert report.ok, "\n" + str(report)  # errors fail; warnings and advice are shown, not failed

    def test_every_export_replays_the_tape(self) -> None:
        tape = self._tape()
        results = verify(self.make_env, tape, self.views, snapshot_at=len(tape.actions) // 3)
        failures = [str(r) for r in results.values() if r.failed]
        assert not failures, "\n".join(failures)

    def test_seeded_reset_is_reproducible(self) -> None:
        from bridge.conformance.replay import NeutralView, replay

        verdict = replay(NeutralView(self.make_env()), self._tape())  # a fresh env, the same seed
        assert verdict.agrees, str(verdict)

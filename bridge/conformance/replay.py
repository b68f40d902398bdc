"""Replay a tape through every available view of an env and name the first divergence.

A *view* drives one runtime's export with neutral actions and maps what the runtime returns back
to neutral form. The views are listed in the runtime table (:mod:`bridge.runtimes`); the neutral one
is built in.
Runtimes that have a single "done" cannot say "terminated and truncated": for those views the
expected flags are projected the documented way (termination wins) before comparing.

Bit for bit is a promise of one interpreter on one machine. A tape recorded on another platform
(another era, CPU or BLAS kernel: the tape says where, :mod:`bridge.conformance.machine`) is
answered in two parts by :func:`verify`: the env here against the tape, within the env's declared
ulps with the episode structure exact (:func:`bridge.conformance.across.compare_eras`), as the
``neutral`` verdict; and every export against the env *here* (the tape's seed and actions run
again on this platform), bit for bit.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from bridge import runtimes
from bridge.conformance import machine
from bridge.conformance.across import compare_eras
from bridge.conformance.recording import record
from bridge.conformance.tape import Tape, leaves
from bridge.env import Env
from bridge.errors import BridgeError

__all__ = [
    "View",
    "NeutralView",
    "Verdict",
    "Agreement",
    "Divergence",
    "Failure",
    "Refusal",
    "Unavailable",
    "make_view",
    "replay",
    "verify",
    "available_views",
]

StepOut = Tuple[Any, float, bool, bool]


class View:
    """Drive one export with neutral actions; return neutral observations and flags.

    Subclasses implement :meth:`reset` and :meth:`step`; ``both_flags`` says whether the runtime
    can express terminated and truncated at once. ``clone_state``/``restore_state`` are optional.
    """

    name = "view"
    both_flags = True

    def reset(self, seed: Optional[int]) -> Any:
        raise NotImplementedError

    def step(self, action: Any) -> StepOut:
        raise NotImplementedError

    def expected(self, obs: Any) -> Any:
        """What the tape's neutral ``obs`` reads as through this runtime's announced roundings
        (its lowering's ``expected``; the observation itself where the lowering is lossless)."""
        return obs

    def clone_state(self) -> Any:
        raise NotImplementedError

    def restore_state(self, snapshot: Any) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class NeutralView(View):
    """The neutral env itself: the reference every export must agree with."""

    name = "neutral"

    def __init__(self, env: Env) -> None:
        self.env = env

    def reset(self, seed: Optional[int]) -> Any:
        return self.env.reset(seed=seed)[0]

    def step(self, action: Any) -> StepOut:
        obs, reward, terminated, truncated, _ = self.env.step(action)
        return obs, reward, terminated, truncated

    def clone_state(self) -> Any:
        return self.env.clone_state()

    def restore_state(self, snapshot: Any) -> None:
        self.env.restore_state(snapshot)

    def close(self) -> None:
        self.env.close()


def available_views() -> Dict[str, str]:
    """Every view name -> "" if it can run here, else why not (what to install, in this era)."""
    status = {"neutral": ""}
    for name, runtime in runtimes.RUNTIMES.items():
        if runtime.view is None:
            continue
        missing = runtimes.probe(name)
        status[name] = f"{missing[0]} is not installed. {runtimes.install_hint(name)}" if missing else ""
    return status


def make_view(name: str, env: Env) -> View:
    """The conformance view ``name`` over ``env`` (loaded through the runtime table)."""
    if name == "neutral":
        return NeutralView(env)
    return runtimes.load(runtimes.get(name).view)(env)


class Verdict:
    """What one view made of a tape: ``kind`` is "agrees", "DIVERGES", "FAILS", "refused" or
    "unavailable"; ``failed`` is True for the first two failures (a divergence or an error mid-tape)."""

    kind = ""

    def __init__(self, view: str, detail: str = "") -> None:
        self.view, self.detail = view, detail

    @property
    def failed(self) -> bool:
        return self.kind in ("DIVERGES", "FAILS")

    @property
    def agrees(self) -> bool:
        return self.kind == "agrees"

    def __str__(self) -> str:
        return f"{self.view}: {self.kind}" + (f" {self.detail}" if self.detail else "")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


class Agreement(Verdict):
    """The view replayed the whole tape bit for bit."""

    kind = "agrees"


class Refusal(Verdict):
    """The export refused the env (a documented refusal; ``detail`` is the export's own message)."""

    kind = "refused"


class Unavailable(Verdict):
    """The view cannot run in this interpreter (``detail`` says what to install)."""

    kind = "unavailable"


class Failure(Verdict):
    """The export raised mid-tape (``detail``: where, and the error)."""

    kind = "FAILS"


class Beyond(Verdict):
    """A tape from another platform: the env here differs from it by more than its declared ulps,
    or in its episode structure (``detail``: the comparison's message, naming both platforms)."""

    kind = "DIVERGES"


class Divergence(Verdict):
    """The first place a view disagrees with the tape."""

    kind = "DIVERGES"

    def __init__(self, view: str, where: str, field: str, expected: Any, got: Any) -> None:
        self.where, self.field, self.expected, self.got = where, field, expected, got
        super().__init__(view, f"{where}: {field} expected {expected!r}, got {got!r}")

    def __str__(self) -> str:
        return f"{self.view}: {self.where}: {self.field} expected {self.expected!r}, got {self.got!r}"


def _compare_obs(tape: Tape, expected: Any, got: Any) -> Optional[Tuple[str, Any, Any]]:
    try:
        got_leaves = leaves(tape.observation_space, got)
    except (KeyError, IndexError, TypeError) as e:
        return "observation", "the declared structure", f"{type(e).__name__}: {e}"
    for path, want in leaves(tape.observation_space, expected).items():
        have = got_leaves[path]
        name = f"observation{path}"
        if have.dtype != want.dtype or have.shape != want.shape:
            return name, f"{want.dtype}{want.shape}", f"{have.dtype}{have.shape}"
        if have.tobytes() != want.tobytes():
            idx = tuple(int(i) for i in np.argwhere(have != want)[0]) if have.shape else ()
            return f"{name}{list(idx) if idx else ''}", want[idx].item(), have[idx].item()
    return None


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v) for v in value)
    return np.array(value, copy=True) if isinstance(value, (np.ndarray, np.generic)) else value


def replay(view: View, tape: Tape, *, snapshot_at: Optional[int] = None, detour: int = 20) -> Verdict:
    """Feed ``tape`` to ``view``: an :class:`Agreement`, the first :class:`Divergence`, or a
    :class:`Failure` when the export raised mid-tape (naming where).

    With ``snapshot_at`` (an action index), the view snapshots there, runs ``detour`` tape actions
    off the record, resets, restores, and must then continue exactly as recorded (RNG included);
    a divergence after that names the restore in its ``where``.
    """
    try:
        return _replay(view, tape, snapshot_at, detour)
    except _Mid as e:
        where, cause = e.args
        return Failure(view.name, f"at {where}: {type(cause).__name__}: {cause}")


class _Mid(Exception):
    """An exception raised by a view during replay, with where it happened."""


def _replay(view: View, tape: Tape, snapshot_at: Optional[int], detour: int) -> Verdict:
    kept: List[Tuple[str, Any, Any]] = []  # (where, returned object, copy at return time)
    action_index, restored = 0, ""
    for i, entry in enumerate(tape.entries):
        where = f"reset after step {action_index - 1}{restored}" if i else "reset(seed)"
        if entry.kind == "reset":
            obs = _call(where, view.reset, tape.seed if i == 0 else None)
            found = _compare_obs(tape, view.expected(entry.obs), obs)
            if found:
                return Divergence(view.name, where, *found)
            kept.append((where, obs, _copy(obs)))
            continue
        if snapshot_at is not None and action_index == snapshot_at:
            _call(f"the snapshot detour at step {action_index}", _detour, view, tape, action_index, detour)
            restored = f" (after restore_state of the snapshot at step {action_index})"
        where = f"step {action_index}{restored}"
        obs, reward, terminated, truncated = _call(where, view.step, tape.actions[action_index])
        action_index += 1
        found = _compare_obs(tape, view.expected(entry.obs), obs)
        if found:
            return Divergence(view.name, where, *found)
        kept.append((where, obs, _copy(obs)))
        want_trunc = entry.truncated if view.both_flags else entry.truncated and not entry.terminated
        for field, want, have in (
            ("reward", entry.reward, reward),
            ("terminated", entry.terminated, terminated),
            ("truncated", want_trunc, truncated),
        ):
            if type(have) is not type(want) or have != want:
                return Divergence(view.name, where, field, want, have)
    for where, returned, at_return in kept:  # an export must not mutate what it already handed out
        found = _compare_obs(tape, at_return, returned)
        if found:
            return Divergence(view.name, where, found[0] + " (mutated after it was returned)", found[1], found[2])
    return Agreement(view.name)


def _call(where: str, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as e:
        raise _Mid(where, e) from e


def _detour(view: View, tape: Tape, start: int, length: int) -> None:
    """Snapshot, wander ``length`` steps off the record, reset, restore (views without snapshots skip).

    The detour ends at a reset boundary: what ``reset()`` sets (a goal drawn at reset) is drawn
    anew before the restore, so a snapshot that forgot it does not continue the recorded episode.
    """
    try:
        snap = view.clone_state()
    except NotImplementedError:
        return
    for action in tape.actions[start : start + length]:
        _, _, terminated, truncated = view.step(action)
        if terminated or truncated:
            view.reset(None)
    view.reset(None)
    view.restore_state(snap)


def verify(
    make_env: Callable[[], Env],
    tape: Tape,
    views: Optional[List[str]] = None,
    *,
    snapshot_at: Optional[int] = None,
    env_id: Optional[str] = None,
    tolerance: Optional[int] = None,
    owner: str = "",
) -> Dict[str, Verdict]:
    """Replay ``tape`` through ``views`` (default: every view of the runtime table): name -> a
    :class:`Verdict` for every view: agrees, DIVERGES (step and field), FAILS (an error mid-tape),
    refused (the export's own error for this env) or unavailable (why).

    A tape recorded on another platform (``machine.differences``): the neutral verdict compares the
    env here with the tape within the env's declared ulps, and every other view replays the tape's
    seed and actions as this platform's env runs them, bit for bit (module docstring). ``tolerance``
    (named ``owner.cross_era_ulps``) overrides the env's own ``cross_era_ulps`` there.

    Raises ContractError before any view runs when the tape cannot speak about this env (no step,
    other spaces, actions the env cannot take, or another ``env_id``): see Tape.check_replayable.
    """
    probe = make_env()
    try:
        tape.check_replayable(probe.observation_space, probe.action_space, env_id)
        if probe.determinism == "none":  # no snapshots declared: no view takes the detour (decided once, here)
            snapshot_at = None
        here = machine.describe(probe)
    finally:
        probe.close()
    status = available_views()
    results: Dict[str, Verdict] = {}
    elsewhere = machine.differences(tape.platform, here)
    if elsewhere:
        results["neutral"] = _across(make_env, tape, tolerance, owner)
        tape = record(make_env, seed=tape.seed, actions=tape.actions, env_id=tape.env_id)  # the env here
    for name in views or list(status):
        if name in results:
            continue
        if name not in status:
            known = ", ".join(sorted(status))
            results[name] = Unavailable(name, f"no view is called {name!r} (known: {known})")
            continue
        if status[name]:
            results[name] = Unavailable(name, status[name])
            continue
        try:
            view = make_view(name, make_env())
        except BridgeError as e:  # the export's own refusal of this env
            results[name] = Refusal(name, f"{type(e).__name__}: {e}")
            continue
        except Exception as e:
            results[name] = Failure(name, f"building the view: {type(e).__name__}: {e}")
            continue
        try:
            results[name] = replay(view, tape, snapshot_at=snapshot_at)
        finally:
            view.close()
    return results


def _across(make_env: Callable[[], Env], tape: Tape, tolerance: Optional[int], owner: str) -> Verdict:
    """The neutral verdict of a tape from another platform: within the env's declared ulps."""
    found = compare_eras(make_env, tape, name="the tape", here=machine.era_stamp(), tolerance=tolerance, owner=owner)
    if not found.ok:
        return Beyond("neutral", found.failure())
    how = "bit for bit" if found.kind == "agrees" else found.kind[len("agrees ") :]
    return Agreement("neutral", f"{how} ({found.rule}; {'; '.join(found.platforms)})")

"""Is the env the same across eras? Another era's tape replayed here, measured in ulps.

Whether the exports agree with the neutral env is a question for one era, answered bit for bit by
:func:`bridge.conformance.verify`. Whether the *env* is the same under Python 3.9 + numpy 1.19 and
Python 3.11 + numpy 2 is another: the same float expression may round its last bit differently
there (other SIMD kernels, other summation orders, another BLAS; docs/conformance.md). So this
module replays another era's tape through the neutral env here and measures, per float field, the
largest difference in ulps (and absolutely, relatively, where it first appears), while the episode
structure (terminated/truncated at every step, discrete observations, dtypes, shapes, the actions)
must be exact. The same holds for a tape from another *machine* in this era (another CPU, another
BLAS kernel: :mod:`bridge.conformance.machine`), so the rule is one: a tape replayed on the platform
it was recorded on must agree bit for bit; from anywhere else it must agree within the env's
declared tolerance (``cross_era_ulps``, default 0). The verdict is ``agrees`` (bit for bit),
``agrees within N ulp`` or ``DIVERGES``, and names what differs between the two platforms.

A 1-ulp difference compounds over an episode of a chaotic env, so the comparison starts each step
from the *recorded* state where the tape has it (``record(..., states=True)``): restored before
every entry for an env of determinism "strong" (what is measured is one step's difference), at the
recorded checkpoints for "weak", and a free run from the seed for "none"; the report names it.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from bridge.conformance import machine
from bridge.conformance.tape import Tape, leaves
from bridge.conformance.ulps import FieldDifference
from bridge.env import Env
from bridge.errors import SpecError, message

__all__ = ["EraComparison", "compare_eras", "declared_tolerance", "ATTRIBUTE", "DOCS"]

ATTRIBUTE = "cross_era_ulps"
DOCS = "docs/conformance.md, 'Why two platforms can differ in the last bit'"


def declared_tolerance(env: Env, override: Optional[int] = None, owner: str = "") -> Tuple[int, str]:
    """The tolerance in ulps and who declared it: ``override`` (a suite option named ``owner``) if
    not None, else the env's class attribute ``cross_era_ulps`` (default 0, bit for bit)."""
    if override is not None:
        value, where = override, f"{owner}.{ATTRIBUTE}"
    else:
        value, where = getattr(env.unwrapped, ATTRIBUTE, 0), f"{type(env.unwrapped).__name__}.{ATTRIBUTE}"
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        fix = (
            f"Set {where} to the largest difference in ulps the env may show across eras and machines (0: bit for bit)"
        )
        raise SpecError(message(where, "be an int >= 0", repr(value), fix))
    return int(value), where


class EraComparison:
    """What another era's tape showed here: per-field differences, the episode structure, a verdict."""

    def __init__(self, name: str, here: str, tolerance: int, attribute: str, platforms: List[str]) -> None:
        # platforms: what differs between where the tape was recorded and here; [] the same platform,
        # where the declared tolerance does not apply: one interpreter on one machine is bit for bit
        self.name, self.here, self.attribute, self.platforms = name, here, attribute, platforms
        self.tolerance = tolerance if platforms else 0
        self.method = ""
        self.fields: Dict[str, FieldDifference] = {}
        self.structure: Optional[str] = None  # the first structural difference; None: identical
        self.ends: Dict[str, List[int]] = {"terminated": [], "truncated": []}  # the steps, as both eras agree

    @property
    def ulps(self) -> float:
        """The largest difference in ulps over every float field."""
        return max([f.max_ulps for f in self.fields.values()] + [0.0])

    @property
    def kind(self) -> str:
        if self.structure is not None or self.ulps > self.tolerance:
            return "DIVERGES"
        return "agrees" if self.ulps == 0 else f"agrees within {_shown(self.ulps)} ulp"

    @property
    def ok(self) -> bool:
        return self.kind != "DIVERGES"

    @property
    def rule(self) -> str:
        """The tolerance that applies, and why."""
        if not self.platforms:
            return "recorded on this platform: bit for bit"
        return f"{self.attribute} = {self.tolerance}"

    def __str__(self) -> str:
        head = f"{self.name} in {self.here}: {self.kind} ({self.rule})"
        ends = "; ".join(f"{flag} at {_steps(steps)}" for flag, steps in self.ends.items())
        structure = self.structure or f"identical ({ends}; discrete observations, dtypes, shapes and actions exact)"
        where = "; ".join(self.platforms) or "the same (Python, numpy, BLAS and its kernel, CPU, SIMD flags, OS)"
        lines = [head, f"  platforms: {where}", f"  compared {self.method}", f"  episode structure: {structure}"]
        lines += [f"  {f}" for f in self.fields.values()]
        return "\n".join(lines)

    def failure(self) -> str:
        """The house message of a DIVERGES verdict, naming the fix ('' when it agrees)."""
        subject = f"{self.name} replayed in {self.here}"
        if self.structure is not None:
            fix = "Flags, discrete observations, shapes and actions are exact across eras; find why they differ here"
            if self.method.startswith("in a free run"):
                fix = (
                    "Implement get_state()/set_state() and declare determinism = 'strong', so the eras are compared "
                    "step by step from the recorded state rather than as two drifting trajectories"
                )
            return message(subject, "have the same episode structure", self.structure, fix)
        worst = [f for f in self.fields.values() if f.max_ulps > self.tolerance]
        got = (
            f"{_shown(self.ulps)} ulp ("
            + "; ".join(f"{f.field} {_shown(f.max_ulps)} ulp first at {f.first}" for f in worst)
            + ")"
        )
        if not self.platforms:
            expectation = "agree bit for bit (it was recorded on this platform: Python, numpy, BLAS kernel, CPU, OS)"
            fix = (
                "One interpreter on one machine repeats an env exactly: if the env changed on purpose, record the "
                "tape again; else find what differs between two runs of it"
            )
            return message(subject, expectation, got + " on the same platform", fix)
        got += f" between platforms where {'; '.join(self.platforms)}"
        expectation = f"agree within {self.attribute} = {self.tolerance} ulp" + (
            " (bit for bit)" if not self.tolerance else ""
        )
        if math.isinf(self.ulps):
            fix = "One platform returned a NaN or an infinity where the other did not; no tolerance covers that"
        else:
            fix = (
                f"Declare {self.attribute} = {_shown(self.ulps)} if a difference in the last bits between these "
                f"platforms is acceptable for this env ({DOCS}); else make the env bit-exact across them"
            )
        return message(subject, expectation, got, fix)


def _steps(steps: List[int]) -> str:
    if not steps:
        return "no step"
    shown = ", ".join(str(s) for s in steps[:8]) + (f", ... ({len(steps)} in all)" if len(steps) > 8 else "")
    return ("step " if len(steps) == 1 else "steps ") + shown


def _shown(ulps: float) -> str:
    return "inf" if math.isinf(ulps) else str(int(ulps))


def compare_eras(
    make_env: Callable[[], Env],
    theirs: Tape,
    *,
    name: str,
    here: str,
    actions: Optional[List[Any]] = None,
    tolerance: Optional[int] = None,
    owner: str = "",
) -> EraComparison:
    """Replay the other era's tape ``theirs`` (called ``name``) through a fresh ``make_env()`` in
    era ``here`` and measure it. ``actions``: this era's actions for the tape's seed, which must be
    the tape's bit for bit; ``tolerance``: a suite option overriding the env's ``cross_era_ulps``."""
    env = make_env()
    try:
        theirs.check_replayable(env.observation_space, env.action_space)
        limit, attribute = declared_tolerance(env, tolerance, owner)
        platforms = machine.differences(theirs.platform, machine.describe(env))
        result = EraComparison(name, here, limit, attribute, platforms)
        result.method = _method(theirs, env.determinism)
        result.structure = _other_actions(theirs, actions)
        if result.structure is None:
            _walk(env, theirs, result)
        return result
    finally:
        env.close()


def _method(tape: Tape, determinism: str) -> str:
    before_last = set(range(len(tape.entries) - 1))
    if tape.states and before_last <= set(tape.states):
        return (
            f"step by step from the recorded state: the tape's snapshot restored before each of its "
            f"{len(tape.entries)} entries (determinism {determinism!r}), so no difference compounds"
        )
    if tape.states:
        return (
            f"from the recorded checkpoints: the tape's snapshot restored at {len(tape.states)} of its "
            f"{len(tape.entries)} entries (determinism {determinism!r}); a difference may compound between them"
        )
    return (
        f"in a free run from the seed (the tape holds no snapshots; determinism {determinism!r}): "
        "a difference may compound over an episode"
    )


def _other_actions(tape: Tape, actions: Optional[List[Any]]) -> Optional[str]:
    if actions is None:
        return None
    if len(actions) < len(tape.actions):
        return f"the tape holds {len(tape.actions)} actions, this era sampled {len(actions)}"
    for i, (theirs, mine) in enumerate(zip(tape.actions, actions)):
        for path, want in leaves(tape.action_space, mine).items():
            have = leaves(tape.action_space, theirs)[path]
            if have.dtype != want.dtype or have.tobytes() != want.tobytes():
                return f"action{path} {i} is {have!r} on the tape but {want!r} sampled here from the seed"
    return None


def _scales(tape: Tape) -> Dict[str, np.ndarray]:
    """Per float field, each element's largest finite magnitude over the tape (ulps_at_scale)."""
    found: Dict[str, np.ndarray] = {"reward": np.array(0.0)}
    for entry in tape.entries:
        found["reward"] = np.maximum(found["reward"], _magnitude(np.array(float(entry.reward))))
        for path, value in leaves(tape.observation_space, entry.obs).items():
            if value.dtype.kind == "f":
                key = f"observation{path}"
                found[key] = np.maximum(found[key], _magnitude(value)) if key in found else _magnitude(value)
    return found


def _magnitude(value: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(value), np.abs(value), 0).astype(value.dtype)


def _walk(env: Env, tape: Tape, result: EraComparison) -> None:
    action, scales = 0, _scales(tape)
    for k, entry in enumerate(tape.entries):
        if k and k - 1 in tape.states:
            env.restore_state(tape.states[k - 1])
        if entry.kind == "reset":
            where = f"reset after step {action - 1}" if k else "reset(seed)"
            obs = env.reset(seed=tape.seed if k == 0 else None)[0]
        else:
            where = f"step {action}"
            obs, reward, terminated, truncated, _ = env.step(tape.actions[action])
            action += 1
            for flag, want, have in (
                ("terminated", entry.terminated, terminated),
                ("truncated", entry.truncated, truncated),
            ):
                if bool(have) != want:
                    result.structure = f"{where}: {flag} is {want} on the tape, {bool(have)} here"
                    return
            _field(result, "reward", where, np.array(float(entry.reward)), np.array(float(reward)), scales)
            for flag, ended in (("terminated", entry.terminated), ("truncated", entry.truncated)):
                if ended:
                    result.ends[flag].append(action - 1)
        mine = leaves(tape.observation_space, obs)
        for path, want in leaves(tape.observation_space, entry.obs).items():
            have, field = np.asarray(mine[path]), f"observation{path}"
            if have.dtype != want.dtype or have.shape != want.shape:
                result.structure = (
                    f"{where}: {field} is {want.dtype}{want.shape} on the tape, {have.dtype}{have.shape} here"
                )
                return
            if want.dtype.kind == "f":
                _field(result, field, where, want, have, scales)
            elif have.tobytes() != want.tobytes():
                shown = want.tolist(), have.tolist()
                result.structure = f"{where}: {field} (discrete) is {shown[0]!r} on the tape, {shown[1]!r} here"
                return


def _field(result: EraComparison, field: str, where: str, want: np.ndarray, have: np.ndarray, scales: dict) -> None:
    if field not in result.fields:
        result.fields[field] = FieldDifference(field)
    result.fields[field].add(where, want, have, scales[field])

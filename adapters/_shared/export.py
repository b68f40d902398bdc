"""The base every single-env export is declared on: :class:`Export` (the batched one is
:class:`~bridge.adapters._shared.batch.BatchExport`).

An export owns, once for every runtime: construction, the source (through the one env resolver,
:func:`bridge.loading.resolve`), the options (the runtime row's schema, :mod:`bridge.options`),
the per-step path (:meth:`Export.step`, a plain method: the lifecycle, the action checked and
decoded, the user's step, its output checked, the observation encoded), seeding, snapshots,
``exported()`` (so ``bridge.check(export)`` works for every export), ``close``, closing an env it
built itself when the export is refused, and a copy or an unpickle: :meth:`Export.__setstate__`
recomputes what is derived from the neutral env and the options (:meth:`Export._derive`), so the
running state is everything else and nothing must be listed. A runtime package declares only what
is its own: its row name, its ``lower`` (the lowering constructor), its API shim (:meth:`Export.present`
and the API methods that reshape the 5-tuple) and its profile and view.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
from bridge.adapters._shared.lowering import Lowering

from bridge import checks
from bridge.env import Env, TimeLimit, qualname
from bridge.errors import BridgeError, ContractError, SpecError, message
from bridge.guard import CLOSED, RUNNING, Guarded
from bridge.loading import resolve
from bridge.options import declared, value_options

__all__ = ["Export", "neutral_env"]

_INT64 = np.int64
# what _derive computes: a copy or an unpickle recomputes it instead of copying it
_DERIVED = frozenset(
    ("observation_lowering", "action_lowering", "_encode", "_prepare", "_table", "_obs_check", "_obs_box")
)


def neutral_env(env: Any, subject: str, fix: str) -> Env:
    """``env`` if it is a bridge.Env, else the house SpecError (``subject`` names the export)."""
    if not isinstance(env, Env):
        raise SpecError(message(subject, "be a bridge.Env or a registered id", type(env).__name__, fix))
    return env


def _plain(value: Any) -> Any:
    """An option value as snapshot data (tuples become lists, as a JSON round trip makes them)."""
    return [_plain(v) for v in value] if isinstance(value, (tuple, list)) else value


class Export(Guarded):
    """The base of every single-env export (see the module doc).

    Class attributes a runtime declares:
        runtime: its row in :mod:`bridge.runtimes` (options, float policy, refusals).
        export_name: how messages name the export, e.g. ``"to_gymnasium"``.
        label: how lifecycle errors name it, e.g. ``"gymnasium env"``.
        lower: its lowering constructor, ``lower(space, *, path, options)`` (a staticmethod).
        warn_after_end: a step past the end warns (gym 0.23's checker steps past it).
        check_targets: the check profiles ``exported()`` hands this export's options to (default:
            the runtime's own).
        goal_variant: the class that exports a goal env (one with ``compute_reward``), if any.
    """

    runtime = ""
    export_name = ""
    lower: Callable[..., Lowering]
    check_targets: Tuple[str, ...] = ()
    goal_variant: Optional[type] = None

    neutral: Env
    options: Dict[str, Any]
    observation_lowering: Lowering
    action_lowering: Lowering

    def __init__(self, env: Any, **given: Any) -> None:
        options, neutral, owned = self._sourced(env, given)
        try:
            self._build(neutral, options)
        except BaseException:
            if owned:
                neutral.close()
            raise

    @classmethod
    def build(cls, env: Any, given: Dict[str, Any], env_kwargs: Optional[Dict[str, Any]] = None) -> Export:
        """The export of ``env`` (anything the env resolver takes) with the options (and, for an
        id or a factory, the env kwargs) in ``given``, plus ``env_kwargs`` that are the env's
        whatever their names: what each runtime's ``to_*`` returns. The class is :meth:`variant`
        of the neutral env; a refused export closes an env built here."""
        options, neutral, owned = cls._sourced(env, given, env_kwargs)
        try:
            variant = cls.variant(neutral)
            export = variant.__new__(variant)
            export._build(neutral, options)
        except BaseException:
            if owned:
                neutral.close()
            raise
        return export

    @classmethod
    def _sourced(
        cls, env: Any, given: Dict[str, Any], env_kwargs: Optional[Dict[str, Any]] = None
    ) -> Tuple[Dict[str, Any], Env, bool]:
        """The checked options (before any env is built), then the neutral env from the resolver.
        ``env_kwargs=`` among ``given`` holds env kwargs whose names are also option names."""
        options, kwargs = declared(cls.runtime, cls.export_name, given, env_kwargs, source=env)
        neutral, owned = resolve(env, kwargs, subject=f"{cls.export_name} env")
        return options, neutral, owned

    @classmethod
    def variant(cls, neutral: Env) -> type:
        """The class that exports ``neutral``: the declared ``goal_variant`` for a goal env (one
        with ``compute_reward``), else this class."""
        goal = cls.goal_variant
        return goal if goal is not None and callable(getattr(neutral.unwrapped, "compute_reward", None)) else cls

    def _build(self, neutral: Env, options: Dict[str, Any]) -> None:
        steps = options.get("max_episode_steps")
        self.neutral = neutral if steps is None else TimeLimit(neutral, steps)
        self.options = options
        self._start_lifecycle()
        self._derive()
        self.present()

    def _derive(self) -> None:
        """Everything computed from the neutral env and the options, once: the lowerings, the
        action check and decode, the observation check and encode. Run at construction and by
        :meth:`__setstate__` (a copy or an unpickle recomputes it: see ``_DERIVED``)."""
        neutral, options = self.neutral, self.options
        obs = self.lower(neutral.observation_space, path="observation", options=options)
        act = self.lower(neutral.action_space, path="action", options=options)
        self.observation_lowering, self.action_lowering = obs, act
        strict = options.get("strict", False)
        self.warn_after_end = type(self).warn_after_end and not strict
        self._encode = None if obs.identity else obs.encode
        # the action checked in the runtime's terms (raising the house error before anything moves)
        # and decoded, one function (the lowering's; check_actions=False: the decode alone)
        self._prepare = act.preparer(options.get("check_actions", True))
        # every valid int action -> its neutral value (small Discrete spaces): one dict lookup is
        # both the check and the decode: +2.4k instr/step on GridWorld (3.0 %) without it
        # (benchmarks/bench_gymnasium_instructions.py)
        self._table = act.table
        self._obs_check = checks.value_check(neutral.observation_space, strict)
        # a plain Box observation is checked inline by its dtype and shape: +0.8k instr/step on
        # GridWorld, 1.1 %, through the general check (benchmarks/bench_gymnasium_instructions.py)
        self._obs_box = checks.box_signature(neutral.observation_space, strict)

    # -- what a runtime declares ------------------------------------------------------------------
    def present(self) -> None:
        """Set the runtime's own attributes (spaces, metadata) once the lowerings exist."""

    # -- the per-step path ------------------------------------------------------------------------
    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        """Check and decode ``action``, step the neutral env, check and encode what it returns.

        ``(obs, reward, terminated, truncated, info)`` in the runtime's values: Gymnasium's API as
        it is; other runtimes reshape it in their own ``step`` (``super().step(action)``). An
        invalid action raises ContractError and never advances the env.
        """
        if self._lifecycle is not RUNNING:
            self._misuse()
        # the action, checked and decoded: a valid int of a small Discrete is one lookup
        kind = type(action)
        hit = self._table.get(action) if self._table is not None and (kind is int or kind is _INT64) else None
        action = self._prepare(action) if hit is None else hit
        try:
            out = self.neutral.step(action)
        except BridgeError:
            self._end(f"an exception at step {self._steps + 1}")
            raise
        except Exception as e:
            raise self._user_exception(e) from e
        # the output: a fast test of the valid case (an unpack that fails on anything but 5 items,
        # identity tests of the flags, reward - reward == 0.0 for finite floats), the one check
        # (bridge.checks.step_output) to say why otherwise
        try:
            obs, reward, terminated, truncated, info = out
        except (TypeError, ValueError):
            self._refuse_output(out)
        if not (
            (terminated is False or terminated is True)
            and (truncated is False or truncated is True)
            and type(reward) is float
            and reward - reward == 0.0
            and type(out) is tuple
            and type(info) is dict
            and "episode" not in info
        ):
            self._refuse_output(out)
        box = self._obs_box
        if box is not None:
            if not (type(obs) is np.ndarray and obs.dtype is box[0] and obs.shape == box[1]):
                self._refuse_observation(self._obs_check, obs, "step observation")
        elif self._obs_check(obs, "") is not None:
            self._refuse_observation(self._obs_check, obs, "step observation")
        self._steps += 1
        if terminated or truncated:
            self._end_step(terminated)
            # the last observation outlives the reset that follows (SB3's terminal_observation,
            # autoreset's final obs): an env that reuses its buffer would overwrite it. Once per episode.
            obs = checks.copy_observation(obs)
            out = (obs, reward, terminated, truncated, info)
        if self._encode is not None:
            return self._encode(obs), reward, terminated, truncated, info
        return out

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        """Reset the neutral env (``seed`` seeds its one Generator); the observation is encoded."""
        obs, info = self._guarded_reset(self.neutral.reset, seed, options, self._obs_check)
        return (obs if self._encode is None else self._encode(obs)), info

    def _guarded(self) -> Env:
        return self.neutral

    # -- a copy or an unpickle --------------------------------------------------------------------
    def __getstate__(self) -> dict:
        # the lowerings and the per-step functions hold closures: recomputed, never copied
        return {k: v for k, v in self.__dict__.items() if k not in _DERIVED}

    def __setstate__(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._derive()

    # -- what every export shares -----------------------------------------------------------------
    @property
    def steps(self) -> int:
        """Steps since the last reset (snapshots keep them)."""
        return self._steps

    def exported(self) -> Tuple[Env, Dict[str, Dict[str, Any]]]:
        """The neutral env and, per check target, this export's options (``bridge.check(export)``;
        the neutral env already wears the export's TimeLimit, so ``max_episode_steps`` is left out)."""
        options = {k: v for k, v in self.options.items() if k != "max_episode_steps"}
        return self.neutral, {target: dict(options) for target in self.check_targets or (self.runtime,)}

    # -- the user env's attributes, reached as a wrapper reaches the layers under it -------------
    def has_wrapper_attr(self, name: str) -> bool:
        return hasattr(self, name) or _has_inside(self.neutral, name)

    def get_wrapper_attr(self, name: str) -> Any:
        """``name`` from the export if it has it, else from the user env's wrapper stack (SB3's
        ``get_attr`` and ``env_method``, Gymnasium's ``call`` reach the user env through this)."""
        if hasattr(self, name):
            return getattr(self, name)
        return self.neutral.get_wrapper_attr(name)

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> bool:
        """Set ``name`` where :meth:`get_wrapper_attr` finds it (else, with ``force``, on the export)."""
        if hasattr(self, name):
            setattr(self, name, value)
            return True
        if self.neutral.set_wrapper_attr(name, value, force=False):
            return True
        if force:
            setattr(self, name, value)
        return force

    # -- snapshots: the neutral one plus the export's value options and step count ---------------
    def clone_state(self, *, include_rng: bool = True) -> dict:
        """The neutral snapshot plus the export's own state (its value options, the step count)."""
        return {
            "class": qualname(self),
            "adapter": {**self._snapshot_options(), "steps": self._steps},
            "env": self.neutral.clone_state(include_rng=include_rng),
        }

    def restore_state(self, snapshot: dict) -> None:
        """Rewind to a :meth:`clone_state` snapshot of an export with the same value options;
        everything is checked before anything changes."""
        made_by = snapshot.get("class") if isinstance(snapshot, dict) else type(snapshot).__name__
        if made_by != qualname(self):
            fix = "Restore snapshots only into the export that made them"
            raise ContractError(message("snapshot", f"come from {qualname(self)}", made_by, fix))
        adapter = snapshot.get("adapter")
        steps = adapter.get("steps") if isinstance(adapter, dict) else None
        if type(steps) is not int or steps < 0 or "env" not in snapshot:
            fix = "Restore a snapshot made by clone_state() of this export"
            got = sorted(snapshot) if adapter is None else f"adapter={adapter!r}"
            raise ContractError(message("snapshot", "hold 'adapter' (with 'steps') and 'env'", got, fix))
        own = self._snapshot_options()
        theirs = {k: v for k, v in adapter.items() if k != "steps"}
        if theirs != own:
            raise ContractError(
                message("snapshot export options", f"equal {own}", theirs, "Export with the same options")
            )
        self.neutral.restore_state(snapshot["env"])
        self._restart(steps)

    def _snapshot_options(self) -> Dict[str, Any]:
        return {k: _plain(self.options[k]) for k in value_options() if k in self.options}

    def close(self) -> None:
        self._lifecycle = CLOSED
        self.neutral.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.neutral!r}>"


def _has_inside(env: Env, name: str) -> bool:
    try:
        env.get_wrapper_attr(name)
    except AttributeError:
        return False
    return True

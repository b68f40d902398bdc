"""The two bases every export is declared on: :class:`Export` (one env, over the single-env
:class:`~bridge.adapters._shared.port.Port`) and :class:`BatchExport` (a :class:`bridge.VectorEnv`,
over :class:`~bridge.adapters._shared.batch.BatchPort`).

A base owns, once for every runtime: construction, the source (through the one env resolver,
:func:`bridge.loading.resolve`), the options (the runtime row's schema, :mod:`bridge.options`),
the per-instance binding of the per-step path and its rebuild after a copy or an unpickle,
``exported()`` (so ``bridge.check(export)`` works for every export), snapshots, ``close``, and
closing an env it built itself when the export is refused. A runtime package declares only what is
its own: its row name, its lowerings (:meth:`Export.lowerings`), its API shim (:meth:`Export.present`
and the API methods) and its profile and view.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from bridge.adapters._shared.lowering import Lowering
from bridge.adapters._shared.port import Port

from bridge import runtimes
from bridge.env import Env, TimeLimit
from bridge.loading import resolve
from bridge.options import resolve as resolve_options
from bridge.options import split

__all__ = ["Export", "declared_options", "VALUE_OPTIONS"]

# the options that change what an export presents: a snapshot carries them, and a restore into an
# export built with other values is refused (check_actions and strict change no value)
VALUE_OPTIONS = ("image_layout", "normalize_actions", "float64_as_float32", "size", "action_bounds")


def declared_options(runtime: str, export: str, given: Dict[str, Any], batch: bool = False) -> Dict[str, Any]:
    """The options of ``runtime``'s scalar (or ``batch``) export, checked, defaults filled in."""
    row = runtimes.get(runtime)
    honoured = row.batch_options if batch else row.options
    return resolve_options(export, honoured, given, row.float32, row.refusals)


def _plain(value: Any) -> Any:
    """An option value as snapshot data (tuples become lists, as a JSON round trip makes them)."""
    return [_plain(v) for v in value] if isinstance(value, (tuple, list)) else value


class Export:
    """The base of every single-env export (see the module doc).

    Class attributes a runtime declares:
        runtime: its row in :mod:`bridge.runtimes` (options, float policy, refusals).
        export_name: how messages name the export, e.g. ``"to_gymnasium"``.
        label: how lifecycle errors name it, e.g. ``"gymnasium env"``.
        warn_after_end: a step past the end warns (gym 0.23's checker steps past it).
        bind_step, bind_reset: the API's ``step`` / ``reset`` *is* the port's; each instance binds
            it, so ``env.step(a)`` is one call (a subclass that overrides the method keeps its own).
        carried: attributes the API changes while it runs, kept by copies and pickles.
        check_targets: the check profiles ``exported()`` hands this export's options to (default:
            the runtime's own).
        goal_variant: the class that exports a goal env (one with ``compute_reward``), if any.
    """

    runtime = ""
    export_name = ""
    label = ""
    warn_after_end = False
    bind_step = False
    bind_reset = False
    carried: Tuple[str, ...] = ()
    check_targets: Tuple[str, ...] = ()
    goal_variant: Optional[type] = None

    neutral: Env
    options: Dict[str, Any]
    observation_lowering: Lowering
    action_lowering: Lowering
    port: Port

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the methods an instance may replace by the port's own: those of the class that declares
        # bind_step / bind_reset (a subclass that overrides one keeps its own: see _bind)
        if "bind_step" in vars(cls):
            cls._bindable_step = cls.step if cls.bind_step else None
        if "bind_reset" in vars(cls):
            cls._bindable_reset = cls.reset if cls.bind_reset else None

    _bindable_step: Any = None
    _bindable_reset: Any = None

    def __init__(self, env: Any, **given: Any) -> None:
        options, neutral, owned = self._sourced(env, given)
        try:
            self._build(neutral, options, wrap=True)
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
            export._build(neutral, options, wrap=True)
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
        given = dict(given)
        env_kwargs = {**(given.pop("env_kwargs", None) or {}), **(env_kwargs or {})}
        options, kwargs = split(given)
        options = declared_options(cls.runtime, cls.export_name, options)
        neutral, owned = resolve(env, {**kwargs, **(env_kwargs or {})}, subject=f"{cls.export_name} env")
        return options, neutral, owned

    @classmethod
    def variant(cls, neutral: Env) -> type:
        """The class that exports ``neutral``: the declared ``goal_variant`` for a goal env (one
        with ``compute_reward``), else this class."""
        goal = cls.goal_variant
        return goal if goal is not None and callable(getattr(neutral.unwrapped, "compute_reward", None)) else cls

    def _build(self, neutral: Env, options: Dict[str, Any], wrap: bool) -> None:
        steps = options.get("max_episode_steps")
        if wrap and steps is not None:
            neutral = TimeLimit(neutral, steps)
        self.neutral, self.options = neutral, options
        self.observation_lowering, self.action_lowering = self.lowerings(neutral, options)
        self.port = Port(
            neutral,
            self.observation_lowering,
            self.action_lowering,
            label=self.label,
            check_actions=options.get("check_actions", True),
            strict=options.get("strict", False),
            warn_after_end=self.warn_after_end,
        )
        self.present()
        self._bind()
        self.__dict__["_built"] = frozenset(self.__dict__) - frozenset(self.carried)

    # -- what a runtime declares ------------------------------------------------------------------
    def lowerings(self, neutral: Env, options: Dict[str, Any]) -> Tuple[Lowering, Lowering]:
        """The runtime's (observation, action) lowerings of ``neutral``."""
        raise NotImplementedError(f"{type(self).__name__}.lowerings")

    def present(self) -> None:
        """Set the runtime's own attributes (spaces, metadata) after the port exists."""

    # -- binding and its rebuild after a copy or an unpickle --------------------------------------
    def _bind(self) -> None:
        # the port's closures on the instance, not a method calling them: +0.4k instr/step, 4 % of Drift
        # under gymnasium.make, 0.5 % of GridWorld (benchmarks/bench_gymnasium_instructions.py); never
        # copied (copies bind their own)
        self._step = self.port.step
        cls = type(self)
        if cls._bindable_step is not None and cls.step is cls._bindable_step:
            self.step = self._step
        if cls._bindable_reset is not None and cls.reset is cls._bindable_reset:
            self.reset = self.port.reset

    def __reduce__(self) -> tuple:
        # lowerings, port and guard hold closures: a copy or an unpickle rebuilds them from the
        # neutral env and the options, then takes the export's running state
        extra = {k: v for k, v in self.__dict__.items() if k not in self._built}
        return (_rebuilt, (type(self), self.neutral, self.options, extra, self.port.lifecycle()))

    # -- what every export shares -----------------------------------------------------------------
    @property
    def steps(self) -> int:
        """Steps since the last reset (the port counts them; snapshots keep them)."""
        return self.port.steps

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

    def clone_state(self, *, include_rng: bool = True) -> dict:
        """The neutral snapshot plus the export's own state (its value options, the step count)."""
        return self.port.clone_state(self, self._snapshot_options(), include_rng)

    def restore_state(self, snapshot: dict) -> None:
        """Rewind to a :meth:`clone_state` snapshot of an export with the same value options."""
        self.port.restore_state(self, self._snapshot_options(), snapshot)

    def _snapshot_options(self) -> Dict[str, Any]:
        return {k: _plain(self.options[k]) for k in VALUE_OPTIONS if k in self.options}

    def close(self) -> None:
        self.port.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.neutral!r}>"


def _has_inside(env: Env, name: str) -> bool:
    try:
        env.get_wrapper_attr(name)
    except AttributeError:
        return False
    return True


def _rebuilt(cls: type, neutral: Env, options: Dict[str, Any], extra: Dict[str, Any], lifecycle: tuple) -> Export:
    export = cls.__new__(cls)
    export._build(neutral, options, wrap=False)  # the neutral env already wears its TimeLimit
    export.__dict__.update(extra)
    export.port.set_lifecycle(lifecycle)
    return export

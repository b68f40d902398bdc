"""Export a neutral env to Gymnasium 1.x: ``to_gymnasium`` and ``register``.

The export *is* a ``gymnasium.Env`` (its own ``unwrapped``), declared on the Export base
(:mod:`bridge.adapters._shared.export`): spaces lowered once (:mod:`.lowering`), each action checked in
Gymnasium's terms and decoded before the neutral env moves, each observation checked and encoded.
Randomness is not duplicated: the export's ``np_random`` *is* the neutral env's Generator.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, Optional, Union

import numpy as np
from bridge.adapters._shared.export import Export
from bridge.adapters.gymnasium.lowering import lower
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.env import Env
from bridge.errors import ConversionError, error
from bridge.options import split
from bridge.registry import load_entry_point
from bridge.registry import registry as _bridge_registry

gymnasium = optional_import("gymnasium", "the Gymnasium export")

__all__ = ["GymnasiumEnv", "GoalExport", "GoalGymnasiumEnv", "to_gymnasium", "register"]


class GymnasiumEnv(Export, gymnasium.Env):
    """A neutral :class:`bridge.Env` seen as a ``gymnasium.Env`` (build it with :func:`to_gymnasium`).

    Attributes:
        neutral: the wrapped neutral env (with its TimeLimit, if any).
        options: the export's options (the runtime row's schema, defaults filled in).
        observation_lowering, action_lowering: the lowerings (shared with the conformance view).

    ``step`` and ``reset`` are the Export base's own (Gymnasium's API is the neutral 5-tuple).
    """

    runtime = "gymnasium"
    export_name = "to_gymnasium"
    label = "gymnasium env"
    lower = staticmethod(lower)
    check_targets = ("gymnasium", "sb3")

    @classmethod
    def build(cls, env: Any, given: Dict[str, Any], env_kwargs: Optional[Dict[str, Any]] = None) -> GymnasiumEnv:
        """:meth:`Export.build`, plus a Gymnasium ``spec`` that rebuilds the export (Gymnasium's
        checker uses it to try every render mode) when the env is a registered envbridge id."""
        export = super().build(env, given, env_kwargs)
        options, make_kwargs = split(given)
        make_kwargs = {**make_kwargs, **(env_kwargs or {})} if isinstance(env, str) else {}
        export.spec = _gymnasium_spec(cls, export.neutral, options, make_kwargs)
        return export  # type: ignore[return-value]

    def present(self) -> None:
        self.observation_space = self.observation_lowering.space
        self.action_space = self.action_lowering.space
        self.metadata = dict(self.neutral.metadata or {})
        self.metadata.setdefault("render_modes", [])
        self.render_mode = self.neutral.render_mode

    # -- one Generator: the neutral env's --------------------------------------------------------
    @property
    def np_random(self) -> np.random.Generator:  # type: ignore[override]
        return self.neutral.np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.neutral.unwrapped.np_random = value

    @property
    def _np_random(self) -> Optional[np.random.Generator]:  # type: ignore[override]
        return self.neutral.unwrapped._np_random

    @_np_random.setter
    def _np_random(self, value: Optional[np.random.Generator]) -> None:
        self.neutral.unwrapped._np_random = value

    @property
    def np_random_seed(self) -> Optional[int]:  # type: ignore[override]
        return self.neutral.np_random_seed

    # -- the Gymnasium API: step and reset are the Export base's (first in the MRO) ---------------
    def render(self) -> Any:
        return self.neutral.render()

    def __repr__(self) -> str:
        return f"<GymnasiumEnv{self.neutral!r}>"


class GoalExport:
    """The goal part of a Gymnasium-API export: ``compute_reward`` works on one goal or a batch
    (HER relabels). Mixed in before the export class it extends."""

    neutral: Env

    def present(self) -> None:
        super().present()  # type: ignore[misc]
        space = self.neutral.observation_space
        for key in ("achieved_goal", "desired_goal"):
            plain = isinstance(space, ns.Dict) and key in space.keys() and type(space[key]) is ns.Box
            if not plain:
                got = repr(space[key]) if isinstance(space, ns.Dict) and key in space.keys() else "no such key"
                raise error(
                    ConversionError,
                    f"observation[{key!r}]",
                    "be a Box (goals pass to compute_reward unchanged)",
                    got,
                    "Declare goals as Box spaces",
                )

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> Any:
        """The neutral ``compute_reward`` (goals are lowered unchanged, so no mapping is needed)."""
        return self.neutral.unwrapped.compute_reward(achieved_goal, desired_goal, info)


class GoalGymnasiumEnv(GoalExport, GymnasiumEnv):
    """The Gymnasium export of a goal env."""


GymnasiumEnv.goal_variant = GoalGymnasiumEnv


def _gymnasium_spec(cls: type, neutral: Env, options: Dict[str, Any], make_kwargs: Dict[str, Any]) -> Any:
    """A Gymnasium EnvSpec that rebuilds this export (so the checker can try every render mode)."""
    spec = getattr(neutral.unwrapped, "spec", None)
    if isinstance(spec, gymnasium.envs.registration.EnvSpec):  # imported from Gymnasium: kept on the round trip
        imported = neutral.unwrapped.import_options
        # the wrappers of the import are the outermost of the spec's: the round trip applies them again
        kept = spec.additional_wrappers[: len(spec.additional_wrappers) - len(imported["wrappers"])]
        base = dataclasses.replace(spec, additional_wrappers=kept)
        return dataclasses.replace(
            spec,
            entry_point=functools.partial(_make_round_trip, cls, base, imported, options),
            kwargs={**spec.kwargs, **make_kwargs},
            disable_env_checker=True,
            order_enforce=False,
            additional_wrappers=(),
        )
    if spec is None or getattr(spec, "id", None) not in _bridge_registry:
        return None
    return gymnasium.envs.registration.EnvSpec(
        id=spec.id,
        entry_point=functools.partial(_make_export, cls, spec.entry_point, **options),
        max_episode_steps=spec.max_episode_steps,
        kwargs={**spec.kwargs, **make_kwargs},
    )


def to_gymnasium(env: Any, **options: Any) -> GymnasiumEnv:
    """Export a neutral env as a ``gymnasium.Env``.

    Args:
        env: a :class:`bridge.Env` (TimeLimit and other wrappers included), or anything the env
            resolver takes (a registered id, ``module:attr``, a class or a factory); names that
            are not options are the env's make kwargs.
        options: the gymnasium row's options (docs/options.md): ``check_actions`` (default True),
            ``strict`` (False), ``float64_as_float32`` (False: Gymnasium keeps float64),
            ``normalize_actions`` (False), ``image_layout`` ("CHW", SB3's CNN layout, or "HWC"),
            ``max_episode_steps`` (None).

    Raises:
        ConversionError: a space cannot be expressed losslessly; the message names its path.
        SpecError: an option this export does not honour, or a source it cannot take.
    """
    return GymnasiumEnv.build(env, options)


def _make_export(cls: type, entry_point: Union[str, Callable[..., Env]], **kwargs: Any) -> GymnasiumEnv:
    """Gymnasium entry point: export options go to the export, the rest to the neutral env.

    ``render_mode`` is handled as ``gymnasium.make`` handles it for an env of its own: None is the
    default and dropped; any other mode goes to an env whose ``__init__`` takes it, and is a
    ``TypeError`` before anything is built for one that does not (SB3's ``PPO("MlpPolicy", id)`` and
    ``make_vec_env(id)`` ask for ``"rgb_array"`` and make the env without it on that TypeError)."""
    factory = load_entry_point(entry_point)
    if "render_mode" in kwargs:
        if kwargs["render_mode"] is None:
            del kwargs["render_mode"]
        elif not _takes(factory, "render_mode"):
            where = f"{factory.__qualname__}.__init__" if isinstance(factory, type) else _qualname(factory)
            raise TypeError(f"{where}() got an unexpected keyword argument 'render_mode'")
    return cls.build(factory, kwargs)  # the export owns what it builds


def _make_round_trip(
    cls: type, spec: Any, import_options: Dict[str, Any], options: Dict[str, Any], **kwargs: Any
) -> GymnasiumEnv:
    """Gymnasium entry point of a round trip's spec: Gymnasium's own env of ``spec`` (``render_mode``
    and the other kwargs go to it), imported and exported again with the same options."""
    from bridge.adapters.importers.gymnasium import from_gymnasium

    return cls.build(from_gymnasium(gymnasium.make(spec, **kwargs), **import_options), dict(options))


def _takes(factory: Callable[..., Any], name: str) -> bool:
    """Whether ``factory`` (a class or function) accepts the keyword ``name`` (True when unknown)."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return True
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _qualname(factory: Any) -> str:
    return getattr(factory, "__qualname__", None) or type(factory).__name__


def register(
    id: str,
    entry_point: Union[str, Callable[..., Env]],
    max_episode_steps: Optional[int] = None,
    kwargs: Optional[dict] = None,
) -> None:
    """Register a neutral env with Gymnasium: ``gymnasium.make(id)`` returns its export.

    The step cap is Gymnasium's own ``TimeLimit`` (as ``gymnasium.make`` applies it);
    ``gymnasium.make_vec(id)`` works too. Export options may be passed as make kwargs.
    ``gymnasium.make`` adds neither ``PassiveEnvChecker`` nor ``OrderEnforcing``: the export's guard
    does both jobs on every step (a step before ``reset()`` is our ContractError, the outputs are
    checked), so the two layers would only cost a call each. ``make(id, disable_env_checker=False)``
    still adds the checker.
    """
    load_entry_point(entry_point)  # fail now, with our message, rather than at make time
    gymnasium.register(
        id=id,
        entry_point=functools.partial(_make_export, GymnasiumEnv, entry_point),
        max_episode_steps=max_episode_steps,
        order_enforce=False,
        disable_env_checker=True,
        kwargs=dict(kwargs or {}),
    )

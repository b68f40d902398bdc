"""Export a neutral env to Gymnasium 1.x: ``to_gymnasium`` and ``register``.

The export *is* a ``gymnasium.Env`` (its own ``unwrapped``) over the single-env port
(:mod:`bridge.adapters._shared.port`): spaces lowered once (:mod:`.lowering`), each action checked in
Gymnasium's terms and decoded before the neutral env moves, each observation checked and encoded.
Randomness is not duplicated: the export's ``np_random`` *is* the neutral env's Generator.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np
from bridge.adapters._shared.port import Port, neutral_env
from bridge.adapters.gymnasium.lowering import lower, lower_action
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.env import Env
from bridge.errors import ConversionError, SpecError, error, message
from bridge.registry import load_entry_point
from bridge.registry import make as _bridge_make
from bridge.registry import registry as _bridge_registry

gymnasium = optional_import("gymnasium", "the Gymnasium export")

__all__ = ["GymnasiumEnv", "GoalGymnasiumEnv", "to_gymnasium", "register", "EXPORT_OPTIONS"]

EXPORT_OPTIONS = ("image_layout", "check_actions", "normalize_actions", "float64_as_float32", "strict")


class GymnasiumEnv(gymnasium.Env):
    """A neutral :class:`bridge.Env` seen as a ``gymnasium.Env`` (build it with :func:`to_gymnasium`).

    Attributes:
        neutral: the wrapped neutral env (with its TimeLimit, if any).
        observation_lowering, action_lowering: the lowerings (shared with the conformance view).
        port: the single-env port (guard, seeding, snapshots).
    """

    def __init__(
        self,
        neutral: Env,
        *,
        image_layout: str = "CHW",
        check_actions: bool = True,
        normalize_actions: bool = False,
        float64_as_float32: bool = False,
        strict: bool = False,
    ) -> None:
        self.neutral = neutral
        self.image_layout = image_layout
        self.check_actions = bool(check_actions)
        self.normalize_actions = bool(normalize_actions)
        self.float64_as_float32 = bool(float64_as_float32)
        self.observation_lowering = lower(
            neutral.observation_space, "observation", gymnasium, image_layout, float64_as_float32
        )
        self.action_lowering = lower_action(neutral.action_space, gymnasium, image_layout, normalize_actions)
        self.observation_space = self.observation_lowering.space
        self.action_space = self.action_lowering.space
        self.metadata = dict(neutral.metadata or {})
        self.metadata.setdefault("render_modes", [])
        self.render_mode = neutral.render_mode
        self.port = Port(
            neutral,
            self.observation_lowering,
            self.action_lowering,
            label="gymnasium env",
            check_actions=check_actions,
            strict=strict,
        )
        self._bind()

    def _bind(self) -> None:
        # the port's step and reset on the instance: env.step(a) is one call, not two (a subclass
        # that overrides either keeps its own)
        self._step = self.port.step
        if type(self).step is GymnasiumEnv.step:
            self.step = self._step  # type: ignore[method-assign]
        if type(self).reset is GymnasiumEnv.reset:
            self.reset = self.port.reset  # type: ignore[method-assign]

    @property
    def steps(self) -> int:
        """Steps since the last reset (the port counts them; snapshots keep them)."""
        return self.port.steps

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

    # -- the Gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        """Reset the neutral env; ``seed`` seeds the one shared Generator (like ``super().reset``)."""
        return self.port.reset(seed=seed, options=options)

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        """Check and decode ``action``, step the neutral env, check and encode what it returns.

        An invalid action raises ContractError and never advances the env. (Each instance binds
        ``step`` to its port's checked step; this method is what ``type(env).step`` documents.)
        """
        return self._step(action)

    def render(self) -> Any:
        return self.neutral.render()

    def close(self) -> None:
        self.port.close()

    # -- snapshots -------------------------------------------------------------------------------
    def clone_state(self, *, include_rng: bool = True) -> dict:
        """The neutral snapshot plus the export's own state (layout, options, step count)."""
        return self.port.clone_state(self, self._options(), include_rng)

    def restore_state(self, snapshot: dict) -> None:
        """Rewind to a :meth:`clone_state` snapshot of an export with the same options."""
        self.port.restore_state(self, self._options(), snapshot)

    def exported(self) -> Tuple[Env, Dict[str, Dict[str, Any]]]:
        """The neutral env and, per check target, the options of this export (``bridge.check(export)``)."""
        options = dict(self._options(), check_actions=self.check_actions, strict=self.port.strict)
        return self.neutral, {"gymnasium": options, "sb3": options}

    def _options(self) -> Dict[str, Any]:
        return {
            "image_layout": self.image_layout,
            "normalize_actions": self.normalize_actions,
            "float64_as_float32": self.float64_as_float32,
        }

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_step")  # the port's closure: rebuilt from the port, never copied
        state.pop("step", None)
        state.pop("reset", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()

    def __repr__(self) -> str:
        return f"<GymnasiumEnv{self.neutral!r}>"


class GoalGymnasiumEnv(GymnasiumEnv):
    """An export of a goal env: ``compute_reward`` works on one goal or a batch (HER relabels)."""

    def __init__(self, neutral: Env, **options: Any) -> None:
        space = neutral.observation_space
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
        super().__init__(neutral, **options)
        self._compute_reward = neutral.unwrapped.compute_reward

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> Any:
        """The neutral ``compute_reward`` (goals are lowered unchanged, so no mapping is needed)."""
        return self._compute_reward(achieved_goal, desired_goal, info)


def _gymnasium_spec(neutral: Env, options: Dict[str, Any], make_kwargs: Dict[str, Any]) -> Any:
    """A Gymnasium EnvSpec that rebuilds this export (so the checker can try every render mode)."""
    spec = getattr(neutral.unwrapped, "spec", None)
    if spec is None or getattr(spec, "id", None) not in _bridge_registry:
        return None
    return gymnasium.envs.registration.EnvSpec(
        id=spec.id,
        entry_point=functools.partial(_make_export, spec.entry_point, **options),
        max_episode_steps=spec.max_episode_steps,
        kwargs={**spec.kwargs, **make_kwargs},
    )


def to_gymnasium(
    env: Union[Env, str],
    *,
    image_layout: str = "CHW",
    check_actions: bool = True,
    normalize_actions: bool = False,
    float64_as_float32: bool = False,
    strict: bool = False,
    **kwargs: Any,
) -> GymnasiumEnv:
    """Export a neutral env (or a registered id, built with ``kwargs``) as a ``gymnasium.Env``.

    Args:
        env: a :class:`bridge.Env` (TimeLimit and other wrappers included) or a registered id.
        image_layout: "CHW" (SB3's CNN layout, default) or "HWC" (the neutral layout).
        check_actions: validate each action against the exported space before stepping.
        normalize_actions: expose an asymmetric float Box action as [-1, 1] (opt-in, SB3 advice).
        float64_as_float32: present float64 Box observations as float32 (rounded; opt-in here,
            the default of ``to_sb3`` because SB3's policies compute in float32).
        strict: also check every observation against its space (not free; see docs/bad-input.md).

    Raises:
        ConversionError: a space cannot be expressed losslessly; the message names its path.
    """
    neutral = _bridge_make(env, **kwargs) if isinstance(env, str) else env
    neutral_env(neutral, "to_gymnasium env", "Subclass bridge.Env or pass an id")
    options = {
        "image_layout": image_layout,
        "check_actions": check_actions,
        "normalize_actions": normalize_actions,
        "float64_as_float32": float64_as_float32,
        "strict": strict,
    }
    cls = GoalGymnasiumEnv if hasattr(neutral.unwrapped, "compute_reward") else GymnasiumEnv
    try:
        export = cls(neutral, **options)
    except Exception:
        if neutral is not env:  # built here from an id: nothing half-made is left open
            neutral.close()
        raise
    export.spec = _gymnasium_spec(neutral, options, kwargs if isinstance(env, str) else {})
    return export


def _make_export(entry_point: Union[str, Callable[..., Env]], **kwargs: Any) -> GymnasiumEnv:
    """Gymnasium entry point: export options go to the export, the rest to the neutral env."""
    options = {k: kwargs.pop(k) for k in EXPORT_OPTIONS if k in kwargs}
    neutral = load_entry_point(entry_point)(**kwargs)
    if not isinstance(neutral, Env):
        raise SpecError(
            message(
                "entry point",
                "return a bridge.Env",
                type(neutral).__name__,
                "Return an instance of a bridge.Env subclass",
            )
        )
    return to_gymnasium(neutral, **options)


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
        entry_point=functools.partial(_make_export, entry_point),
        max_episode_steps=max_episode_steps,
        order_enforce=False,
        disable_env_checker=True,
        kwargs=dict(kwargs or {}),
    )

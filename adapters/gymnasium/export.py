"""Export a neutral env to Gymnasium 1.x: ``to_gymnasium``, ``register``, ``to_gymnasium_vector``.

The export *is* a ``gymnasium.Env`` (its own ``unwrapped``) that holds the neutral env. Spaces are
lowered once (see :mod:`bridge.adapters._lowering`); each step validates the action (cheaply,
opt-out with ``check_actions=False``), decodes it, steps the neutral env and encodes the result.
Randomness is not duplicated: the export's ``np_random`` *is* the neutral env's Generator.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np
from bridge.adapters.gymnasium.lowering import Lowering, lower, refuse
from bridge.compat import optional_import

from bridge.env import Env, check_snapshot_owner, qualname
from bridge.errors import ContractError, SpecError, message
from bridge.guard import Guard
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
        observation_lowering, action_lowering: the precomputed space lowerings.
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
        self.float64_as_float32 = bool(float64_as_float32)  # SB3's presentation, announced by its profile
        self.observation_lowering = lower(
            neutral.observation_space, "observation", gymnasium, image_layout, float64_as_float32
        )
        self.action_lowering = _action_lowering(neutral.action_space, image_layout, normalize_actions)
        self.observation_space = self.observation_lowering.space
        self.action_space = self.action_lowering.space
        self.metadata = dict(neutral.metadata or {})
        self.metadata.setdefault("render_modes", [])
        self.render_mode = neutral.render_mode
        self._guard = Guard(neutral, "gymnasium env", strict=strict)  # lifecycle + user output (bridge.guard)
        self._guard.bind(neutral.step)  # bound once: this is the innermost loop of training
        self._bind_step()

    def _bind_step(self) -> None:
        """Fuse the action check and decode, the guarded neutral step and the encode into one
        closure installed as this instance's ``step``: one Python frame per step on top of the
        user's own (copies and pickles rebuild it, see ``__setstate__``)."""
        prepare = self.action_lowering.preparer(self.check_actions)
        checked = self._guard.checked_step
        encode = None if self.observation_lowering.identity else self.observation_lowering.encode

        def step(action: Any) -> Tuple[Any, float, bool, bool, dict]:
            out = checked(prepare(action))  # raises before the env moves on a bad action or misuse
            if encode is None:
                return out
            obs, reward, terminated, truncated, info = out
            return encode(obs), reward, terminated, truncated, info

        self.__dict__["step"] = step

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("step", None)  # a closure over this instance: rebuilt, never copied
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_step()

    @property
    def steps(self) -> int:
        """Steps since the last reset (the guard counts them; snapshots keep them)."""
        return self._guard.steps

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
        obs, info = self._guard.reset(self.neutral.reset, seed=seed, options=options)
        return self.observation_lowering.encode(obs), info

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        """Validate and decode ``action``, step the neutral env, encode what it returns.

        An invalid action raises ContractError and never advances the env. The work is the closure
        built by :meth:`_bind_step`, which instances carry as ``step``; this is the class's door.
        """
        return self.__dict__["step"](action)

    def render(self) -> Any:
        return self.neutral.render()

    def close(self) -> None:
        self._guard.close()
        self.neutral.close()

    # -- snapshots -------------------------------------------------------------------------------
    def clone_state(self, *, include_rng: bool = True) -> dict:
        """The neutral snapshot plus the adapter's own state (layout, options, step count)."""
        return {
            "class": qualname(self),
            "adapter": self._adapter_state(),
            "env": self.neutral.clone_state(include_rng=include_rng),
        }

    def restore_state(self, snapshot: dict) -> None:
        """Rewind to a :meth:`clone_state` snapshot of an export with the same options."""
        check_snapshot_owner(self, snapshot, "Restore snapshots only into the export that made them")
        mine = {k: v for k, v in self._adapter_state().items() if k != "steps"}
        theirs = {k: v for k, v in snapshot["adapter"].items() if k != "steps"}
        if mine != theirs:
            raise ContractError(
                message("snapshot export options", f"equal {mine}", theirs, "Export with the same options")
            )
        self.neutral.restore_state(snapshot["env"])
        self._guard.restart(int(snapshot["adapter"]["steps"]))

    def _adapter_state(self) -> dict:
        return {"image_layout": self.image_layout, "normalize_actions": self.normalize_actions, "steps": self.steps}

    def __repr__(self) -> str:
        return f"<GymnasiumEnv{self.neutral!r}>"


class GoalGymnasiumEnv(GymnasiumEnv):
    """An export of a goal env: ``compute_reward`` works on one goal or a batch (HER relabels)."""

    def __init__(self, neutral: Env, **options: Any) -> None:
        super().__init__(neutral, **options)
        for key in ("achieved_goal", "desired_goal"):
            if not _is_plain_box(neutral.observation_space, key):
                got = repr(neutral.observation_space[key]) if key in neutral.observation_space.keys() else "no such key"
                raise refuse(
                    f"observation[{key!r}]",
                    "be a Box (goals pass to compute_reward unchanged)",
                    got,
                    "Declare goals as Box spaces",
                )
        self._compute_reward = neutral.unwrapped.compute_reward

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> Any:
        """The neutral ``compute_reward`` (goals are lowered unchanged, so no mapping is needed)."""
        return self._compute_reward(achieved_goal, desired_goal, info)


def _is_plain_box(space: Any, key: str) -> bool:
    """True when ``space[key]`` lowers unchanged (a Box that is not an Image)."""
    from bridge import spaces as ns

    return (
        isinstance(space, ns.Dict)
        and key in space.keys()
        and isinstance(space[key], ns.Box)
        and not isinstance(space[key], ns.Image)
    )


def _action_lowering(space: Any, layout: str, normalize: bool) -> Lowering:
    from bridge import spaces as ns

    lowering = lower(space, "action", gymnasium, layout)
    if not normalize:
        return lowering
    if type(space) is not ns.Box or space.dtype.kind != "f" or not space.is_bounded("both"):
        raise refuse(
            "action space",
            "be a bounded float Box for normalize_actions=True",
            repr(space),
            "Export without normalize_actions",
        )
    low, high, dtype = space.low.astype(np.float64), space.high.astype(np.float64), space.dtype
    half = (high - low) / 2.0
    unit = gymnasium.spaces.Box(-1.0, 1.0, space.shape, np.float32)
    inner = lower(ns.Box(-1.0, 1.0, space.shape, np.float32), "action", gymnasium, layout)

    def decode(y: Any) -> np.ndarray:  # [-1, 1] -> [low, high]; clip guards float rounding
        return np.clip(low + (np.asarray(y, np.float64) + 1.0) * half, low, high).astype(dtype)

    def decode_batch(y: Any) -> np.ndarray:
        return np.clip(low + (np.asarray(y, np.float64) + 1.0) * half, low, high).astype(dtype)

    def encode(x: Any) -> np.ndarray:
        return ((np.asarray(x, np.float64) - low) / np.where(half > 0, half, 1.0) - 1.0).astype(np.float32)

    return Lowering(unit, encode, decode, encode, decode_batch, inner.invalid, inner.invalid_batch)


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
    if not isinstance(neutral, Env):
        raise SpecError(
            message(
                "to_gymnasium env",
                "be a bridge.Env or a registered id",
                type(env).__name__,
                "Subclass bridge.Env or pass an id",
            )
        )
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
    """
    load_entry_point(entry_point)  # fail now, with our message, rather than at make time
    gymnasium.register(
        id=id,
        entry_point=functools.partial(_make_export, entry_point),
        max_episode_steps=max_episode_steps,
        kwargs=dict(kwargs or {}),
    )


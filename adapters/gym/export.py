"""Export a neutral env to the Gym 0.23.1 API (legacy era): ``to_gym``, ``register``, ``make_gym``.

Episode ends follow gym 0.23: ``done = terminated or truncated``; ``info["TimeLimit.truncated"]`` is
True only for a cut-off that is not also a termination (termination wins); ``info["is_terminal"]``
is ``terminated`` (what DreamerV2's GymWrapper reads). The export is declared on the Export base
(:mod:`bridge.adapters._shared.export`); spaces are lowered by :mod:`.lowering`, losslessly or with a
:class:`~bridge.errors.ConversionError` that names the path inside the space.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, List, Optional, Tuple

import numpy as np
from bridge.adapters._shared.export import Export
from bridge.adapters.gym.lowering import gym, lower

from bridge.errors import ContractError, OrderError, SpecError, message
from bridge.guard import NEW

__all__ = ["GymEnv", "to_gym", "register", "make_gym"]

_STEP_BEFORE_RESET = "Cannot call env.step() before calling reset()"  # gym 0.23's OrderEnforcing, verbatim


class GymEnv(Export, gym.Env):
    """A neutral :class:`~bridge.env.Env` behind the gym 0.23.1 API (build it with :func:`to_gym`).

    The neutral env's Generator is the only one: ``reset(seed=...)`` and ``seed(s)`` (applied at
    the next reset) reach it. ``last_flags`` holds the neutral ``(terminated, truncated)`` of the
    last step, for checkers and tests. A step past the end warns (gym's own ``check_env`` steps
    past it, as its classic envs allow); ``strict=True`` raises. The Dreamer-ready env is this
    class with DreamerV2's lowerings.
    """

    runtime = "gym"
    export_name = "to_gym"
    label = "gym env"
    warn_after_end = True
    lower = staticmethod(lower)

    def present(self) -> None:
        self.observation_space = self.observation_lowering.space
        self.action_space = self.action_lowering.space
        self._pending_seed: Optional[int] = None
        self.last_flags: Tuple[bool, bool] = (False, False)
        modes = list(self.neutral.metadata.get("render_modes", []))
        fps = self.neutral.metadata.get("render_fps")
        self.metadata = {
            "render_modes": modes,
            "render.modes": modes,
            "render_fps": fps,
            "video.frames_per_second": fps,
        }

    @property
    def np_random(self) -> np.random.Generator:  # type: ignore[override]
        return self.neutral.np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.neutral.np_random = value

    def decode_observation(self, obs: Any) -> Any:
        """A gym observation of this env -> the neutral observation."""
        return self.observation_lowering.decode(obs)

    def seed(self, seed: Optional[int] = None) -> List[Optional[int]]:
        """Gym 0.23's deprecated seeding: the next ``reset()`` uses ``seed``."""
        self._pending_seed = seed
        return [seed]

    def reset(self, *, seed: Optional[int] = None, return_info: bool = False, options: Optional[dict] = None) -> Any:
        if seed is None:
            seed, self._pending_seed = self._pending_seed, None
        obs, info = super().reset(seed=seed, options=options)
        return (obs, info) if return_info else obs

    def step(self, action: Any) -> Tuple[Any, float, bool, dict]:
        try:
            obs, reward, terminated, truncated, info = super().step(action)
        except ContractError as e:
            if self._lifecycle is not NEW:
                raise
            # gym 0.23's own words and class (OrderEnforcing's AssertionError): its check_env compares them
            refused = OrderError(_STEP_BEFORE_RESET)
            refused.parts = e.parts
            raise refused from e
        self.last_flags = (terminated, truncated)
        info = dict(info)
        info["TimeLimit.truncated"] = truncated and not terminated
        info["is_terminal"] = terminated
        return obs, reward, terminated or truncated, info

    def render(self, mode: str = "human") -> Any:
        if mode != self.neutral.render_mode:
            raise ContractError(
                message(
                    f"render(mode={mode!r})",
                    f"ask for the neutral env's render_mode {self.neutral.render_mode!r}",
                    repr(mode),
                    "Neutral envs fix the mode at construction: build the env with render_mode=... and "
                    "render with that mode",
                )
            )
        return self.neutral.render()


def to_gym(env: Any, **options: Any) -> GymEnv:
    """Export ``env`` (a bridge.Env, or anything the env resolver takes) to the gym 0.23.1 API.

    Options (docs/options.md): ``check_actions`` (default True: validate every action, cheap),
    ``strict`` (False: also check every observation against its space, not free),
    ``max_episode_steps`` (None).

    Raises:
        ConversionError: a space gym 0.23 cannot hold; nothing is wrapped.
    """
    return GymEnv.build(env, options)


def make_gym(entry_point: Any, max_episode_steps: Optional[int] = None, **kwargs: Any) -> GymEnv:
    """Build the neutral env from ``entry_point`` (+ ``kwargs``), cap it, export it (gym's entry point)."""
    from bridge.registry import load_entry_point

    return GymEnv.build(load_entry_point(entry_point), {"max_episode_steps": max_episode_steps}, kwargs)


def register(id: str, entry_point: Any, max_episode_steps: Optional[int] = None, kwargs: Optional[dict] = None) -> None:
    """Register a neutral env in gym 0.23's registry so that ``gym.make(id)`` returns its export.

    The step cap is the neutral :class:`~bridge.env.TimeLimit` (termination wins on the cap step);
    gym's own TimeLimit is not added, because it marks a cap step that the env also truncates as
    not truncated, yet ``spec.max_episode_steps`` is the cap (:class:`CappedSpec`). ``gym.make``
    still adds its OrderEnforcing wrapper.
    """
    if max_episode_steps is not None and (
        isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) or max_episode_steps < 1
    ):
        raise SpecError(message("max_episode_steps", "be an int >= 1 or None", max_episode_steps, "Pass e.g. 100"))
    factory = functools.partial(make_gym, entry_point, max_episode_steps)
    gym.envs.registration.register(id=id, entry_point=factory, kwargs=dict(kwargs or {}))
    if max_episode_steps is not None:  # the spec says the cap, as gym's own register does
        specs = gym.envs.registration.registry.env_specs
        del specs[id]  # replaced, not added twice (the tree counts insertions)
        specs[id] = CappedSpec(id, factory, max_episode_steps=max_episode_steps, kwargs=dict(kwargs or {}))


class CappedSpec(gym.envs.registration.EnvSpec):
    """A gym 0.23 EnvSpec whose ``max_episode_steps`` is the neutral TimeLimit's cap: ``gym.make``
    adds no gym TimeLimit on top (it would report a cap step the env also truncates as not
    truncated), yet ``env.spec.max_episode_steps`` reads the cap, as wrappers and users expect."""

    def make(self, **kwargs: Any) -> Any:
        uncapped = copy.copy(self)
        uncapped.max_episode_steps = None  # gym.make adds its TimeLimit for a capped spec
        env = gym.envs.registration.EnvSpec.make(uncapped, **kwargs)
        env.unwrapped.spec.max_episode_steps = self.max_episode_steps
        return env

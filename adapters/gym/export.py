"""Export a neutral env to the Gym 0.23.1 API (legacy era): ``to_gym``, ``register``, ``make_gym``.

Episode ends follow gym 0.23: ``done = terminated or truncated``; ``info["TimeLimit.truncated"]`` is
True only for a cut-off that is not also a termination (termination wins); ``info["is_terminal"]``
is ``terminated`` (what DreamerV2's GymWrapper reads). The env sits on the single-env port
(:mod:`bridge.adapters._shared.port`); spaces are lowered by :mod:`.lowering`, losslessly or with a
:class:`~bridge.errors.ConversionError` that names the path inside the space.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from bridge.adapters._shared.lowering import Lowering
from bridge.adapters._shared.port import Port, neutral_env
from bridge.adapters.gym.lowering import gym, lower

from bridge.env import Env, TimeLimit
from bridge.errors import ContractError, SpecError, message

__all__ = ["GymEnv", "to_gym", "register", "make_gym"]


class GymEnv(gym.Env):
    """A neutral :class:`~bridge.env.Env` behind the gym 0.23.1 API (build it with :func:`to_gym`).

    The neutral env's Generator is the only one: ``reset(seed=...)`` and ``seed(s)`` (applied at
    the next reset) reach it. ``last_flags`` holds the neutral ``(terminated, truncated)`` of the
    last step, for checkers and tests. The Dreamer-ready env is this class with DreamerV2's lowering.

    Args:
        env: the neutral env.
        check_actions: check every action (cheap); ``False`` skips it.
        strict: also check the float bounds of every observation.
        observation, action: the lowerings (default: gym 0.23's own, :func:`.lowering.lower`).
        label: how lifecycle errors name the export.
        warn_after_end: a step past the end warns instead of raising (gym's own ``check_env``
            steps past it, as its classic envs allow); ``strict=True`` raises.
    """

    def __init__(
        self,
        env: Env,
        *,
        check_actions: bool = True,
        strict: bool = False,
        observation: Optional[Lowering] = None,
        action: Optional[Lowering] = None,
        label: str = "gym env",
        warn_after_end: bool = True,
    ) -> None:
        neutral_env(env, "to_gym env", "Pass a bridge.Env subclass instance")
        self.observation_lowering = observation or lower(env.observation_space, "observation")
        self.action_lowering = action or lower(env.action_space, "action")
        self.env = env
        self.observation_space = self.observation_lowering.space
        self.action_space = self.action_lowering.space
        self.port = Port(
            env,
            self.observation_lowering,
            self.action_lowering,
            label=label,
            check_actions=check_actions,
            strict=strict,
            warn_after_end=warn_after_end,
        )
        self._step = self.port.step
        self._pending_seed: Optional[int] = None
        self.last_flags: Tuple[bool, bool] = (False, False)
        modes = list(env.metadata.get("render_modes", []))
        fps = env.metadata.get("render_fps")
        self.metadata = {
            "render_modes": modes,
            "render.modes": modes,
            "render_fps": fps,
            "video.frames_per_second": fps,
        }

    @property
    def np_random(self) -> np.random.Generator:  # type: ignore[override]
        return self.env.np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.env.np_random = value

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
        obs, info = self.port.reset(seed=seed, options=options)
        return (obs, info) if return_info else obs

    def step(self, action: Any) -> Tuple[Any, float, bool, dict]:
        obs, reward, terminated, truncated, info = self._step(action)
        self.last_flags = (terminated, truncated)
        info = dict(info)
        info["TimeLimit.truncated"] = truncated and not terminated
        info["is_terminal"] = terminated
        return obs, reward, terminated or truncated, info

    def render(self, mode: str = "human") -> Any:
        if mode != self.env.render_mode:
            raise ContractError(
                message(
                    f"render(mode={mode!r})",
                    f"ask for the neutral env's render_mode {self.env.render_mode!r}",
                    repr(mode),
                    "Neutral envs fix the mode at construction: build the env with render_mode=... and "
                    "render with that mode",
                )
            )
        return self.env.render()

    def close(self) -> None:
        self.port.close()

    # -- snapshots -------------------------------------------------------------------------------
    def clone_state(self, *, include_rng: bool = True) -> dict:
        """The neutral snapshot plus the export's own state (options, step count)."""
        return self.port.clone_state(self, self._options(), include_rng)

    def restore_state(self, snapshot: dict) -> None:
        """Rewind to a :meth:`clone_state` snapshot of an export with the same options."""
        self.port.restore_state(self, self._options(), snapshot)

    def exported(self) -> Tuple[Env, Dict[str, Dict[str, Any]]]:
        """The neutral env and, per check target, the options of this export (``bridge.check(export)``)."""
        return self.env, {"gym": {"check_actions": self.port.check_actions, "strict": self.port.strict}}

    def _options(self) -> dict:
        return {}

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_step")  # the port's closure: rebuilt from the port, never copied
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._step = self.port.step

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.env!r}>"


def to_gym(env: Any, *, check_actions: bool = True, strict: bool = False) -> GymEnv:
    """Export ``env`` (a bridge.Env or a registered id) to the gym 0.23.1 API.

    Args:
        env: the neutral environment, or an id for :func:`bridge.make`.
        check_actions: validate every action against the neutral space (cheap); ``False`` skips it.
        strict: also check every observation against its space (not free; see docs/bad-input.md).

    Raises:
        ConversionError: a space gym 0.23 cannot hold; nothing is wrapped.
    """
    if not isinstance(env, str):
        return GymEnv(env, check_actions=check_actions, strict=strict)
    from bridge.registry import make

    neutral = make(env)
    try:
        return GymEnv(neutral, check_actions=check_actions, strict=strict)
    except Exception:
        neutral.close()  # built here from an id: a refusal leaves nothing open
        raise


def make_gym(entry_point: Any, max_episode_steps: Optional[int] = None, **kwargs: Any) -> GymEnv:
    """Build the neutral env from ``entry_point`` (+ ``kwargs``), cap it, export it (gym's entry point)."""
    from bridge.registry import load_entry_point

    env = load_entry_point(entry_point)(**kwargs)
    if max_episode_steps is not None:
        env = TimeLimit(env, max_episode_steps)
    return GymEnv(env)


def register(id: str, entry_point: Any, max_episode_steps: Optional[int] = None, kwargs: Optional[dict] = None) -> None:
    """Register a neutral env in gym 0.23's registry so that ``gym.make(id)`` returns its export.

    The step cap is the neutral :class:`~bridge.env.TimeLimit` (termination wins on the cap step);
    gym's own TimeLimit is not added, because it marks a cap step that the env also truncates as
    not truncated. ``gym.make`` still adds its OrderEnforcing wrapper.
    """
    if max_episode_steps is not None and (
        isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) or max_episode_steps < 1
    ):
        raise SpecError(message("max_episode_steps", "be an int >= 1 or None", max_episode_steps, "Pass e.g. 100"))
    factory = functools.partial(make_gym, entry_point, max_episode_steps)
    gym.envs.registration.register(id=id, entry_point=factory, kwargs=dict(kwargs or {}))

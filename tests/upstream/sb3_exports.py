"""A pytest plugin that runs SB3's own tests against envbridge's exports (no SB3 code copied here).

Every env an SB3 test builds goes through envbridge: each ``gymnasium.Env`` class a test module
defines or imports (SB3's ``IdentityEnv``, ``BitFlippingEnv``, the test's own ``CustomGymEnv``...)
and every ``gymnasium.make`` is replaced by a factory that builds the original env, rewrites it as a
``bridge.Env`` (:class:`FromGymnasium`: its spaces as neutral spaces, its values as neutral values)
and exports that with ``to_gymnasium``. With ``ENVBRIDGE_SB3_PATH=batched`` the tests' ``DummyVecEnv``
is also replaced: the same exports' neutral envs in a ``bridge.SyncVectorEnv`` behind the batched
VecEnv (``make_vec_env``). Test bodies run unchanged. Used by ``tests/upstream/run_sb3.py``.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List

import gymnasium
import numpy as np
from bridge.adapters.gymnasium import to_gymnasium

import bridge
from bridge import spaces

PATH = os.environ.get("ENVBRIDGE_SB3_PATH", "scalar")
_real_make = gymnasium.make


def neutral_space(space: gymnasium.Space) -> spaces.Space:
    """A Gymnasium space as the neutral space it stands for."""
    g = gymnasium.spaces
    if isinstance(space, g.Box):
        return spaces.Box(space.low, space.high, space.shape, space.dtype)
    if isinstance(space, g.Discrete):
        return spaces.Discrete(int(space.n), int(space.start))
    if isinstance(space, g.MultiDiscrete):
        return spaces.MultiDiscrete(space.nvec, space.start)
    if isinstance(space, g.MultiBinary):
        return spaces.MultiBinary(list(np.atleast_1d(space.n)))
    if isinstance(space, g.Dict):
        return spaces.Dict({k: neutral_space(s) for k, s in space.spaces.items()})
    if isinstance(space, g.Tuple):
        return spaces.Tuple([neutral_space(s) for s in space.spaces])
    raise TypeError(f"no neutral space for {space!r}")


def neutral_value(space: spaces.Space, value: Any) -> Any:
    """A Gymnasium value as the neutral value of ``space`` (kinds only: dtypes are the env's own)."""
    if isinstance(space, spaces.Dict):
        return {k: neutral_value(s, value[k]) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(neutral_value(s, v) for s, v in zip(space.spaces, value))
    if isinstance(space, spaces.Discrete):
        return np.int64(value)
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        return np.asarray(value, dtype=space.dtype)
    return value


class FromGymnasium(bridge.Env):
    """A Gymnasium env rewritten as a ``bridge.Env``; its attributes and methods stay reachable."""

    def __init__(self, env: gymnasium.Env) -> None:
        self.original = env
        self.observation_space = neutral_space(env.observation_space)
        self.action_space = neutral_space(env.action_space)
        self.metadata = dict(getattr(env, "metadata", {}) or {})
        self.render_mode = getattr(env, "render_mode", None)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "original":
            raise AttributeError(name)
        original = self.__dict__.get("original")
        if original is None:
            raise AttributeError(name)
        try:
            return original.get_wrapper_attr(name)
        except AttributeError:
            return getattr(original.unwrapped, name)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        obs, info = self.original.reset(seed=seed, options=options)
        return neutral_value(self.observation_space, obs), dict(info)

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.original.step(action)
        obs = neutral_value(self.observation_space, obs)
        return obs, float(reward), bool(terminated), bool(truncated), dict(info)

    def render(self) -> Any:
        return self.original.render()

    def close(self) -> None:
        self.original.close()


class GoalFromGymnasium(FromGymnasium):
    """A goal env (one with ``compute_reward``, for HER) rewritten as a ``bridge.Env``."""

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> Any:
        return self.original.unwrapped.compute_reward(achieved_goal, desired_goal, info)


def exported(env: gymnasium.Env) -> Any:
    goal = hasattr(env.unwrapped, "compute_reward")
    return to_gymnasium((GoalFromGymnasium if goal else FromGymnasium)(env))


class _StandIn(type):
    """The stand-ins' metaclass: ``isinstance(env, StandIn)`` is whether ``env`` (or an export's
    original env) is an instance of the class it stands in for (SB3's tests ask
    ``isinstance(env, DummyEnv)``, also of an instance their parametrize built before the patch)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        original = getattr(getattr(getattr(obj, "unwrapped", None), "neutral", None), "original", obj)
        return isinstance(original, cls.original)


def substitute(cls: type) -> type:
    """A stand-in for ``cls``: calling it builds ``cls(...)`` and returns its envbridge export."""

    def __new__(_: type, *args: Any, **kwargs: Any) -> Any:
        return exported(cls(*args, **kwargs))

    return _StandIn(cls.__name__, (), {"__new__": __new__, "__doc__": cls.__doc__, "original": cls})


def make(env_id: Any, *args: Any, **kwargs: Any) -> Any:
    return exported(_real_make(env_id, *args, **kwargs))


def batched_dummy(env_fns: List[Callable[[], Any]]) -> Any:
    """``DummyVecEnv(env_fns)`` as envbridge's batched VecEnv over the same exports' neutral envs."""
    from bridge.adapters.sb3 import make_vec_env

    neutral = [getattr(fn().unwrapped, "neutral", None) for fn in env_fns]
    if any(n is None for n in neutral):
        raise TypeError("batched path: every env must be an envbridge export")
    return make_vec_env(bridge.SyncVectorEnv([lambda n=n: n for n in neutral]))


def _patch(module: Any) -> None:
    names: Dict[str, Any] = vars(module)
    for name, value in list(names.items()):
        is_env = isinstance(value, type) and issubclass(value, gymnasium.Env) and value is not gymnasium.Env
        own = is_env and not value.__module__.startswith(("gymnasium", "bridge"))
        if own and not issubclass(value, gymnasium.Wrapper):
            names[name] = substitute(value)
    if PATH == "batched" and "DummyVecEnv" in names:
        names["DummyVecEnv"] = batched_dummy


def pytest_configure(config: Any) -> None:
    gymnasium.make = make  # every gymnasium.make an SB3 test (or SB3 itself) calls is exported


def pytest_collection_modifyitems(session: Any, config: Any, items: List[Any]) -> None:
    seen = set()
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and id(module) not in seen:
            seen.add(id(module))
            _patch(module)

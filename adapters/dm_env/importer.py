"""``from_dm_env``: a dm_env ``Environment`` (dm_control's suite, Acme's envs) as a neutral Env.

Specs lowered in reverse (docs/dm_env.md has the table): ``DiscreteArray(n)`` -> ``Discrete(n)``;
a ``BoundedArray`` -> ``Box`` with its per-element bounds and dtype (uint8 HWC with 1 or 3 channels
in [0, 255] -> ``Image``); an unbounded ``Array`` -> ``Box`` bounded by the dtype (+-inf for
floats); dicts (order kept) and tuples/lists nest. A bool spec or anything else is refused by name
with its path. Episode ends: the first FIRST TimeStep is the reset; LAST with discount 0 is
terminated, LAST with discount in (0, 1] is truncated (any other discount is refused). Values follow
the one rule for incoming values (``bridge/values.py``): an observation the spec's dtype cannot hold
exactly (int32 ``2**40``, float32 ``1e300``, an int spec's ``2.7``) or a reward that is not a real
number is refused, never cast. Seeding: dm_env has no seed, so ``reset(seed=s)``
needs a factory ``make(seed)`` (dm_control: ``task_kwargs={"random": seed}``), which builds a fresh
env for a seeded reset; an instance is reset with its own seed unless its ``reset`` takes ``seed=``
(``to_dm_env``'s export does).
"""

from __future__ import annotations

import inspect
import math
import os
from typing import Any, Callable, Optional, Tuple

import numpy as np
from bridge.adapters.dm_env.lowering import dm_env, specs
from bridge.adapters.importers.source import ForeignSpec
from bridge.compat import optional_import

from bridge import spaces, values
from bridge.env import Env
from bridge.errors import ContractError, ConversionError, SpecError, close_beside, error, message

__all__ = ["from_dm_env", "DmEnvSource", "to_neutral_space", "from_dm_control"]

_FIX = "Use specs.Array, BoundedArray or DiscreteArray (nested in dicts or tuples)"


def to_neutral_space(spec: Any, path: str = "observation") -> spaces.Space:
    """The neutral space holding exactly the values of dm_env ``spec`` (``path`` names it in errors)."""
    if isinstance(spec, dict):  # OrderedDict included: the order is kept
        return spaces.Dict({k: to_neutral_space(s, f"{path}[{k!r}]") for k, s in spec.items()})
    if isinstance(spec, (tuple, list)):
        return spaces.Tuple([to_neutral_space(s, f"{path}[{i}]") for i, s in enumerate(spec)])
    if not isinstance(spec, specs.Array):
        raise error(ConversionError, path, "be a dm_env spec", type(spec).__name__, _FIX)
    dtype = np.dtype(spec.dtype)
    if dtype.kind not in "iuf":
        fix = "Declare it as an integer BoundedArray(minimum=0, maximum=1) in the env"
        raise error(
            ConversionError, path, "have a numeric dtype (dm_env bool specs have no neutral twin)", dtype.name, fix
        )
    if isinstance(spec, specs.DiscreteArray):
        if spec.shape == ():  # any integer dtype: the neutral int64 holds its values; actions go back cast
            return spaces.Discrete(spec.num_values)
        low, high = np.zeros(spec.shape, dtype), np.full(spec.shape, spec.num_values - 1, dtype)
    elif isinstance(spec, specs.BoundedArray):
        low = np.broadcast_to(spec.minimum, spec.shape).astype(dtype)
        high = np.broadcast_to(spec.maximum, spec.shape).astype(dtype)
    else:
        info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
        low = np.full(spec.shape, -np.inf if dtype.kind == "f" else info.min, dtype)
        high = np.full(spec.shape, np.inf if dtype.kind == "f" else info.max, dtype)
    shape = tuple(spec.shape)
    if dtype == np.uint8 and len(shape) == 3 and shape[2] in (1, 3) and (low == 0).all() and (high == 255).all():
        return spaces.Image(shape[0], shape[1], shape[2])
    return spaces.Box(low, high, shape, dtype)


def _encoder(spec: Any) -> Callable[[Any], Any]:
    """Neutral action -> the dm_env action of ``spec`` (each leaf at the spec's own dtype)."""
    if isinstance(spec, dict):
        parts = [(k, _encoder(s)) for k, s in spec.items()]
        return lambda x: {k: enc(x[k]) for k, enc in parts}
    if isinstance(spec, (tuple, list)):
        items = [_encoder(s) for s in spec]
        return lambda x: tuple(enc(v) for enc, v in zip(items, x))
    dtype = np.dtype(spec.dtype)
    return lambda x: x if type(x) is np.ndarray and x.dtype is dtype else np.asarray(x, dtype=dtype)


class DmEnvSource(Env):
    """A dm_env ``Environment`` behind the neutral API (build it with :func:`from_dm_env`)."""

    def __init__(self, env: Any, make: Optional[Callable[[int], Any]] = None) -> None:
        self.dm_env, self._make = env, make
        self.observation_space = to_neutral_space(env.observation_spec(), "observation")
        self.action_space = to_neutral_space(env.action_spec(), "action")
        reward = env.reward_spec()
        if not isinstance(reward, specs.Array) or reward.shape != ():
            got = type(reward).__name__ if not isinstance(reward, specs.Array) else f"shape {reward.shape}"
            fix = "Sum or pick one reward in a wrapper of the dm_env env"
            raise error(ConversionError, "reward_spec()", "be a scalar specs.Array", got, fix)
        self._decode = values.decoder(self.observation_space, "observation")
        self._encode = _encoder(env.action_spec())
        self._takes_seed = "seed" in inspect.signature(env.reset).parameters
        # dm_control's control.Environment ends an episode at time_limit / control_timestep steps
        # (LAST with discount 1, truncated); dm_env itself has no such field
        limit = getattr(env, "_step_limit", None)
        finite = isinstance(limit, (int, float)) and math.isfinite(limit) and limit >= 1
        self.max_episode_steps: Optional[int] = int(limit) if finite else None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        super().reset(seed=seed)
        if seed is not None and self._make is not None:
            built = _made(self._make, int(seed))
            self.dm_env.close()
            self.dm_env = built
            step = self.dm_env.reset()
        elif seed is not None and self._takes_seed:
            step = self.dm_env.reset(seed=int(seed))
        elif seed is not None:
            fix = (
                "Pass a factory instead: from_dm_env(lambda seed: suite.load(domain, task, "
                "task_kwargs={'random': seed}))"
            )
            raise SpecError(message("from_dm_env(env) reset seed", "be None for a dm_env instance", seed, fix))
        else:
            step = self.dm_env.reset()
        if not isinstance(step, dm_env.TimeStep) or not step.first():
            got = getattr(step, "step_type", type(step).__name__)
            raise ContractError(message("dm_env reset()", "return a FIRST TimeStep", getattr(got, "name", got), _RULE))
        return self._decode(step.observation, _AT_RESET), {}

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        out = self.dm_env.step(self._encode(action))
        if not isinstance(out, dm_env.TimeStep):
            raise error(ContractError, _AT_STEP, "return a dm_env.TimeStep", type(out).__name__, values.ENV_FIX)
        kind, reward, discount, obs = out
        if type(reward) is not float:
            reward = values.real(reward, f"{_AT_STEP} reward")
        if kind is _MID:
            return self._decode(obs, _AT_STEP), reward, False, False, {}
        if kind is _LAST:
            terminated = _last_discount(discount) == 0.0
            return self._decode(obs, _AT_STEP), reward, terminated, not terminated, {}
        got = getattr(kind, "name", repr(kind))
        raise ContractError(message("dm_env step()", "return MID or LAST inside an episode", got, _RULE))

    def close(self) -> None:
        self.dm_env.close()


_MID, _LAST = dm_env.StepType.MID, dm_env.StepType.LAST
_RULE = "Report it to the env's authors: dm_env starts an episode with exactly one FIRST step"
_AT_RESET, _AT_STEP = "from_dm_env env's reset()", "from_dm_env env's step()"


def _last_discount(discount: Any) -> float:
    """The discount of a LAST step, which says how the episode ended: 0 terminated, (0, 1] truncated;
    anything else (NaN, negative, above 1, not a number) is refused, never read as either."""
    where = f"{_AT_STEP} discount of a LAST step"
    value = discount if type(discount) is float else values.real(discount, where)
    if not 0.0 <= value <= 1.0:
        expectation = "be in [0, 1] (0: terminated, above 0: truncated)"
        raise error(ContractError, where, expectation, repr(value), values.ENV_FIX)
    return value


def from_dm_env(env: Any) -> DmEnvSource:
    """A dm_env ``Environment`` (or a factory ``make(seed) -> Environment``) as a neutral Env.

    A factory is called once with seed 0 to read the specs, and again for every ``reset(seed=s)``.

    Raises:
        ConversionError: a spec with no neutral twin (named with its path); nothing is built.
    """
    if callable(env) and not hasattr(env, "step"):
        make = env
        built = _made(make, 0)
        try:
            return DmEnvSource(built, make)
        except BaseException as refusal:
            close_beside(refusal, built.close, "the env the factory built")
            raise
    if not _is_environment(env):
        fix = "Pass e.g. from_dm_env(suite.load('cartpole', 'swingup')), or a factory of the seed"
        expectation = "be a dm_env.Environment or a factory make(seed) -> Environment"
        raise error(SpecError, "from_dm_env env", expectation, type(env).__name__, fix)
    return DmEnvSource(env)


def _made(make: Callable[[int], Any], seed: int) -> Any:
    """``make(seed)``, refused unless it builds a dm_env Environment."""
    subject = f"from_dm_env factory make({seed})"
    try:
        built = make(seed)
    except Exception as e:
        fix = (
            "Pass a factory of the seed that returns the env, "
            "e.g. lambda seed: suite.load(..., task_kwargs={'random': seed})"
        )
        raise error(SpecError, subject, "build an env", f"{type(e).__name__}: {e}", fix) from e
    if not _is_environment(built):
        fix = "Return the dm_env.Environment from the factory"
        raise error(SpecError, subject, "return a dm_env.Environment", type(built).__name__, fix)
    return built


def _is_environment(env: Any) -> bool:
    """A dm_env Environment: the class, or anything with its five methods (duck-typed envs)."""
    return isinstance(env, dm_env.Environment) or all(callable(getattr(env, m, None)) for m in _METHODS)


_METHODS = ("reset", "step", "observation_spec", "action_spec", "reward_spec")


def from_dm_control(name: str) -> DmEnvSource:
    """The env of the CLI source ``dm_control:DOMAIN-TASK`` (e.g. ``cartpole-swingup``): a neutral
    env over ``suite.load(DOMAIN, TASK, task_kwargs={"random": seed})``, where ``seed`` is the one
    given to ``reset(seed=)`` (0 until then)."""
    if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
        # no display: dm_control's import would try GLFW and warn; the neutral env never renders
        os.environ["MUJOCO_GL"] = "disable"
    suite = optional_import("dm_control.suite", "the dm_control source")
    domain, _, task = name.partition("-")
    if (domain, task) not in suite.ALL_TASKS:
        fix = "Pick a pair of dm_control.suite.ALL_TASKS, e.g. dm_control:cartpole-swingup"
        raise SpecError(message("dm_control source", "name a suite task as DOMAIN-TASK", repr(name), fix))
    source = from_dm_env(lambda seed: suite.load(domain, task, task_kwargs={"random": seed}))
    source.spec = ForeignSpec(f"dm_control:{name}")  # reports and messages name the suite task
    return source

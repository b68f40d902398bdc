"""Neutral envs on RLlib's env runners: ``register``, ``to_rllib``, ``to_rllib_vector``.

RLlib builds every env inside its env runners through ``gymnasium.make_vec`` (see docs/rllib.md):
``register(source)`` puts a picklable creator into RLlib's env registry
(``ray.tune.registry.register_env``) so ``PPOConfig().environment(name, env_config={...})`` works in
every env runner process, on every node; ``env_config`` reaches the user's factory as keyword
arguments. With ``gym_env_vectorize_mode="sync"`` (RLlib's default) the creator returns one scalar
export per sub-env; with ``"vector_entry_point"`` it returns one batched export of ``num_envs`` envs
(a :class:`bridge.VectorEnv` class is built with ``num_envs=N``; a scalar source is vectorized),
stepped in one numpy call, in the next-step autoreset mode RLlib's SingleAgentEnvRunner expects.

The exports are the Gymnasium exports with RLlib's lowering (:mod:`.lowering`); an envbridge error
raised by a step inside an env runner is also recorded for the driver (:mod:`.faults`).
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Optional, Sequence

from bridge.adapters.gymnasium.export import GymnasiumEnv
from bridge.adapters.gymnasium.vector import GymnasiumVectorEnv
from bridge.adapters.rllib import faults
from bridge.adapters.rllib.lowering import lower
from bridge.compat import optional_import

from bridge.env import Env, TimeLimit
from bridge.errors import BridgeError, SpecError, error
from bridge.loading import Source, import_modules, resolve
from bridge.options import declared
from bridge.vector import VectorEnv, vectorize

gymnasium = optional_import("gymnasium", "the RLlib export")

__all__ = ["RLlibEnv", "RLlibVectorEnv", "to_rllib", "to_rllib_vector", "register"]


class RLlibEnv(GymnasiumEnv):
    """The scalar export RLlib's env runners step (build it with :func:`to_rllib`)."""

    runtime = "rllib"
    export_name = "to_rllib"
    label = "rllib env"
    check_targets = ("rllib",)
    goal_variant = None
    lower = staticmethod(lower)

    def step(self, action: Any) -> Any:
        try:
            return super().step(action)
        except BridgeError as e:  # RLlib kills the runner without this text: keep it for the driver
            faults.record(e)
            raise

    def __repr__(self) -> str:
        return f"<RLlibEnv{self.neutral!r}>"


class RLlibVectorEnv(GymnasiumVectorEnv):
    """The batched export for ``gym_env_vectorize_mode="vector_entry_point"`` (next-step autoreset)."""

    runtime = "rllib"
    export_name = "to_rllib_vector"
    autoreset_mode = "next-step"  # SingleAgentEnvRunner reads the step after an end as the reset
    lower = staticmethod(lower)

    def step(self, actions: Any) -> Any:
        try:
            return super().step(actions)
        except BridgeError as e:
            faults.record(e)
            raise


def to_rllib(env: Any, **options: Any) -> RLlibEnv:
    """Export a neutral env (or anything the env resolver takes, with its make kwargs) for RLlib's
    env runners. Options (docs/options.md): ``check_actions``, ``strict``, ``normalize_actions``,
    ``max_episode_steps``.

    Raises:
        ConversionError: RLlib cannot express a space (see :mod:`.lowering`); the message names its path.
    """
    return RLlibEnv.build(env, options)


def to_rllib_vector(vector_env: Any, **options: Any) -> RLlibVectorEnv:
    """Export a :class:`bridge.VectorEnv` as the ``gymnasium.vector.VectorEnv`` RLlib steps in
    ``vector_entry_point`` mode (next-step autoreset; the export owns the VectorEnv). Options:
    ``check_actions``, ``strict``, ``normalize_actions``."""
    return RLlibVectorEnv(vector_env, **options)


class Creator:
    """The env creator :func:`register` gives RLlib: picklable, called in every env runner with
    RLlib's ``EnvContext`` (a dict: the ``env_config``, the env's kwargs), plus ``num_envs`` in
    vector_entry_point mode. It imports ``imports`` first (the ``--import`` modules that register
    ids: a remote runner is a fresh process), then resolves ``source`` as every export does."""

    def __init__(self, source: Any, name: str, options: Dict[str, Any], imports: Sequence[str], batched: bool) -> None:
        self.source, self.name, self.options = source, name, dict(options)
        self.imports, self.batched = tuple(imports), batched

    def __call__(self, env_config: Any = None) -> Any:
        if env_config is not None and not isinstance(env_config, dict):  # RLlib's EnvContext is a dict
            raise error(
                SpecError,
                f"the RLlib env {self.name!r} env_config",
                "be a dict of the env's keyword arguments",
                repr(env_config)[:80],
                f"Pass config.environment({self.name!r}, env_config={{...}})",
            )
        import_modules(self.imports)
        kwargs = dict(env_config or {})
        num_envs = kwargs.pop("num_envs", None)
        if num_envs is None:
            if self.batched:
                raise error(
                    SpecError,
                    f"the RLlib env {self.name!r}",
                    "run in gym_env_vectorize_mode='vector_entry_point' (it is a bridge.VectorEnv)",
                    "gym_env_vectorize_mode='sync'",
                    "Call config.env_runners(gym_env_vectorize_mode='vector_entry_point')",
                )
            return RLlibEnv.build(self.source, self.options, kwargs)
        options = dict(self.options)
        steps = options.pop("max_episode_steps", None)
        if self.batched:
            vector_env, _ = resolve(
                self.source, kwargs, subject=f"the RLlib env {self.name!r}", batch=True, num_envs=num_envs
            )
            if steps is not None:
                vector_env.max_episode_steps = steps
        else:
            vector_env = vectorize(functools.partial(self._capped, kwargs, steps), num_envs)
        return to_rllib_vector(vector_env, **options)

    def _capped(self, kwargs: Dict[str, Any], steps: Optional[int]) -> Env:
        env = resolve(self.source, kwargs, subject=f"the RLlib env {self.name!r}")[0]
        return env if steps is None else TimeLimit(env, steps)

    def __repr__(self) -> str:
        return f"Creator({self.name!r})"


def register(source: Any, name: Optional[str] = None, *, imports: Sequence[str] = (), **options: Any) -> str:
    """Register ``source`` with RLlib's env registry and return the name to pass to
    ``config.environment(name, env_config={...})``.

    Args:
        source: anything the env resolver takes: a registered envbridge id, ``module:attr``, a
            factory or env class returning a :class:`bridge.Env`, or a :class:`bridge.VectorEnv`
            class (built as ``cls(num_envs=N, **env_config)``; use
            ``gym_env_vectorize_mode="vector_entry_point"``). A class or function must be importable
            on every node of the cluster (or registered with ``cloudpickle.register_pickle_by_value``).
        name: the RLlib env name; default: the id, or the source's qualified name.
        imports: modules every env runner imports before it builds the env (those that register ids).
        options: the rllib row's options (docs/options.md): ``check_actions``, ``strict``,
            ``normalize_actions``, ``max_episode_steps``; checked here, before RLlib sees anything.
    """
    from ray.tune.registry import register_env

    options = declared("rllib", "rllib.register", options)[0]
    import_modules(imports)
    probe, built = resolve(source, subject="rllib.register source", batch=True, num_envs=1)
    batched = isinstance(probe, VectorEnv)
    if built:
        probe.close()  # built only to fail here, with the resolver's message, rather than in a runner
    if not built and not isinstance(source, str):
        fix = "Pass its class, a factory or its id: every env runner builds its own env"
        raise error(
            SpecError, "rllib.register source", "build a new env in each env runner", type(source).__name__, fix
        )
    if name is None and isinstance(source, Source):
        name = source.name
    name = name or (source if isinstance(source, str) else f"{source.__module__}.{source.__qualname__}")
    register_env(name, Creator(source, name, options, imports, batched))
    return name

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

from typing import Any, Dict, Optional, Union

from bridge.adapters._shared.port import Port, neutral_env
from bridge.adapters.gymnasium.export import GymnasiumEnv
from bridge.adapters.gymnasium.vector import GymnasiumVectorEnv
from bridge.adapters.rllib import faults
from bridge.adapters.rllib.lowering import action_lowering, observation_lowering, rllib_refusal
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.env import Env
from bridge.errors import BridgeError, SpecError, message
from bridge.registry import make as _bridge_make
from bridge.vector import VectorEnv, vectorize

gymnasium = optional_import("gymnasium", "the RLlib export")

__all__ = ["RLlibEnv", "RLlibVectorEnv", "to_rllib", "to_rllib_vector", "register"]


class RLlibEnv(GymnasiumEnv):
    """The scalar export RLlib's env runners step (build it with :func:`to_rllib`)."""

    def __init__(self, neutral: Env, *, check_actions: bool = True, strict: bool = False) -> None:
        refusal = rllib_refusal(neutral.action_space)
        if refusal is not None:
            raise refusal
        options = {"check_actions": check_actions, "float64_as_float32": True, "strict": strict}
        super().__init__(neutral, image_layout="HWC", **options)
        if isinstance(neutral.observation_space, ns.Image) or _flat(neutral.action_space):
            # where RLlib's lowering differs from Gymnasium's: images, n-D Box actions
            self.observation_lowering = observation_lowering(neutral.observation_space)
            self.observation_space = self.observation_lowering.space
            self.action_lowering = action_lowering(neutral.action_space)
            self.action_space = self.action_lowering.space
            self.port = Port(
                neutral,
                self.observation_lowering,
                self.action_lowering,
                label="rllib env",
                check_actions=check_actions,
                strict=strict,
            )
            self._bind()

    def step(self, action: Any) -> Any:
        try:
            return self._step(action)
        except BridgeError as e:  # RLlib kills the runner without this text: keep it for the driver
            faults.record(e)
            raise

    def exported(self) -> Any:
        return self.neutral, {"rllib": {"check_actions": self.check_actions, "strict": self.port.strict}}

    def __repr__(self) -> str:
        return f"<RLlibEnv{self.neutral!r}>"


class RLlibVectorEnv(GymnasiumVectorEnv):
    """The batched export for ``gym_env_vectorize_mode="vector_entry_point"`` (next-step autoreset)."""

    def __init__(self, vector_env: VectorEnv, *, check_actions: bool = True) -> None:
        if isinstance(vector_env, VectorEnv):
            refusal = rllib_refusal(vector_env.single_action_space)
            if refusal is not None:
                raise refusal
        super().__init__(
            vector_env,
            image_layout="HWC",
            check_actions=check_actions,
            autoreset_mode="next-step",  # SingleAgentEnvRunner reads the step after an end as the reset
            float64_as_float32=True,
        )
        if isinstance(vector_env.single_observation_space, ns.Image):
            self.observation_lowering = observation_lowering(vector_env.single_observation_space)
            self.single_observation_space = self.observation_lowering.space
            self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
            self._encode = self.observation_lowering.encode_batch
        if _flat(vector_env.single_action_space):
            self.action_lowering = action_lowering(vector_env.single_action_space)
            self.single_action_space = self.action_lowering.space
            self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
            self._decode = self.action_lowering.decode_batch
            self._invalid = self.action_lowering.invalid_batch if check_actions else None

    def step(self, actions: Any) -> Any:
        try:
            return super().step(actions)
        except BridgeError as e:
            faults.record(e)
            raise

    def __repr__(self) -> str:
        return f"RLlibVectorEnv({self.neutral!r})"


def _flat(space: ns.Space) -> bool:
    return type(space) is ns.Box and space.dtype.kind == "f" and len(space.shape) > 1


def to_rllib(env: Union[Env, str], *, check_actions: bool = True, strict: bool = False, **kwargs: Any) -> RLlibEnv:
    """Export a neutral env (or a registered id, built with ``kwargs``) for RLlib's env runners.

    Raises:
        ConversionError: RLlib cannot express a space (see :mod:`.lowering`); the message names its path.
    """
    neutral = _bridge_make(env, **kwargs) if isinstance(env, str) else env
    neutral_env(neutral, "to_rllib env", "Subclass bridge.Env or pass an id")
    try:
        return RLlibEnv(neutral, check_actions=check_actions, strict=strict)
    except Exception:
        if neutral is not env:
            neutral.close()
        raise


def to_rllib_vector(vector_env: VectorEnv, *, check_actions: bool = True) -> RLlibVectorEnv:
    """Export a :class:`bridge.VectorEnv` as the ``gymnasium.vector.VectorEnv`` RLlib steps in
    ``vector_entry_point`` mode (next-step autoreset; the export owns the VectorEnv)."""
    return RLlibVectorEnv(vector_env, check_actions=check_actions)


class Creator:
    """The env creator :func:`register` gives RLlib: picklable, called in every env runner with
    RLlib's ``EnvContext`` (a dict: the ``env_config``), plus ``num_envs`` in vector_entry_point mode."""

    def __init__(self, source: Any, name: str, options: Dict[str, Any]) -> None:
        self.source, self.name, self.options = source, name, dict(options)
        self.batched = isinstance(source, type) and issubclass(source, VectorEnv)

    def __call__(self, env_config: Any = None) -> Any:
        kwargs = dict(env_config or {})
        num_envs = kwargs.pop("num_envs", None)
        if num_envs is None:
            if self.batched:
                raise SpecError(
                    message(
                        f"the RLlib env {self.name!r}",
                        "run in gym_env_vectorize_mode='vector_entry_point' (it is a bridge.VectorEnv)",
                        "gym_env_vectorize_mode='sync'",
                        "Call config.env_runners(gym_env_vectorize_mode='vector_entry_point')",
                    )
                )
            return to_rllib(self._neutral(kwargs), **self.options)
        if self.batched:
            return to_rllib_vector(self.source(num_envs=num_envs, **kwargs), **self._vector_options())
        return to_rllib_vector(vectorize(lambda: self._neutral(kwargs), num_envs), **self._vector_options())

    def _vector_options(self) -> Dict[str, Any]:
        return {k: v for k, v in self.options.items() if k == "check_actions"}

    def _neutral(self, kwargs: Dict[str, Any]) -> Env:
        if isinstance(self.source, str):
            return _bridge_make(self.source, **kwargs)
        return self.source(**kwargs)

    def __repr__(self) -> str:
        return f"Creator({self.name!r})"


def register(source: Any, name: Optional[str] = None, **options: Any) -> str:
    """Register ``source`` with RLlib's env registry and return the name to pass to
    ``config.environment(name, env_config={...})``.

    Args:
        source: a registered envbridge id, a factory or env class returning a :class:`bridge.Env`,
            or a :class:`bridge.VectorEnv` class (built as ``cls(num_envs=N, **env_config)``; use
            ``gym_env_vectorize_mode="vector_entry_point"``). A class or function must be importable
            on every node of the cluster (or registered with ``cloudpickle.register_pickle_by_value``).
        name: the RLlib env name; default: the id, or the source's qualified name.
        options: export options (``check_actions``, and ``strict`` for scalar envs).
    """
    from ray.tune.registry import register_env

    if not isinstance(source, str) and not callable(source):
        raise SpecError(
            message(
                "rllib.register source",
                "be a registered id, a factory, an env class or a bridge.VectorEnv class",
                type(source).__name__,
                "Pass e.g. 'envbridge/GridWorld-v0' or the env class itself",
            )
        )
    if isinstance(source, str):
        _bridge_make(source).close()  # an unknown id fails here, with the registry's message
    name = name or (source if isinstance(source, str) else f"{source.__module__}.{source.__qualname__}")
    register_env(name, Creator(source, name, options))
    return name

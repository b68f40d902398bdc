"""Default agents from specs, as MATLAB builds them: ``rlDQNAgent(obsInfo, actInfo[, initOpts][, agentOpts])``,
``rlPPOAgent``, ``rlACAgent`` (A2C), ``rlSACAgent``, ``rlTD3Agent``, ``rlDDPGAgent``, with SB3 underneath.

Importing this module needs numpy and bridge only; building an agent needs SB3 (the modern era),
and without it is the house MissingDependencyError naming the era and the extra. ``getAction``
speaks MATLAB values (finite-set elements, [4 1] columns) and returns a list, as MATLAB's cell
array. ``save`` / ``load`` (:mod:`.agent_files`) keep an agent in one SB3 zip file.
"""

from __future__ import annotations

import copy
import math
from typing import Any, List, Optional

import numpy as np
from bridge.adapters.matlab.datatypes import matlab_size
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.function_env import action_channels, observation_channels, rlFunctionEnv
from bridge.adapters.matlab.workflow.agent_options import (
    OPTIONS_OF,
    _Options,
    rlAgentInitializationOptions,
    sb3_settings,
)
from bridge.compat import optional_import

from bridge import arguments, spaces
from bridge.errors import SpecError, error
from bridge.spaces import _describe_value

__all__ = [
    "Agent",
    "rlDQNAgent",
    "rlPPOAgent",
    "rlACAgent",
    "rlSACAgent",
    "rlTD3Agent",
    "rlDDPGAgent",
    "getAction",
]

_FINITE_ONLY, _NUMERIC_ONLY = ("rlDQNAgent",), ("rlSACAgent", "rlTD3Agent", "rlDDPGAgent")
_META = "envbridge_matlab"  # the attribute SB3 saves with the model
SEED_HIGH = 2**32 - 1  # SB3 seeds numpy's legacy global generator, which takes at most this


def sb3(purpose: str) -> Any:
    """SB3, or the house MissingDependencyError (the era and the extra that install it)."""
    return optional_import("stable_baselines3", purpose)


def _unused_step(Action: Any, Info: Any) -> Any:
    raise RuntimeError("an agent's spec env is never stepped")


def _unused_reset() -> Any:
    raise RuntimeError("an agent's spec env is never reset")


class _EpsilonDecay:
    """MATLAB's epsilon-greedy decay, per agent step: ``max(EpsilonMin, Epsilon * (1 - EpsilonDecay) ** t)``.

    SB3's DQN calls its exploration schedule once per step; ``t`` is set by :func:`train`.
    """

    def __init__(self, epsilon: float, minimum: float, decay: float) -> None:
        self.epsilon, self.minimum, self.decay, self.t = epsilon, minimum, decay, 0

    def __call__(self, _progress_remaining: float) -> float:
        return max(self.minimum, self.epsilon * (1.0 - self.decay) ** self.t)


class Agent:
    """A default agent built from specs (use the ``rl<Name>Agent`` functions).

    Attributes:
        AgentOptions: the options it was built with (a copy); InitializationOptions likewise.
        ObservationInfo, ActionInfo: copies of the specs.
        policy: the SB3 policy the observation needs: "MultiInputPolicy" for several channels,
            "CnnPolicy" for a uint8 image spec ([h w c] in [0, 255]), else "MlpPolicy".
        model: the SB3 model underneath (``model.save`` / SB3's API stay available).
    """

    def __init__(self, kind: str, observationInfo: Any, actionInfo: Any, *options: Any, seed: Optional[int] = None):
        seed = arguments.seed(seed, f"{kind} seed", high=SEED_HIGH)  # first: it is no option's fault
        self.kind = kind
        opts_class, self.algorithm = OPTIONS_OF[kind]
        init, opts = rlAgentInitializationOptions(), opts_class()
        for given in options:
            if isinstance(given, rlAgentInitializationOptions):
                init = copy.deepcopy(given)
            elif isinstance(given, opts_class):
                opts = copy.deepcopy(given)
            else:
                raise error(
                    SpecError,
                    f"{kind} options",
                    f"be an rlAgentInitializationOptions or an {opts_class.__name__}",
                    f"{type(given).__name__}(...)" if isinstance(given, _Options) else _describe_value(given),
                    f"Build them with {opts_class.__name__}(...)",
                )
        self.AgentOptions, self.InitializationOptions = opts, init
        self._specs(observationInfo, actionInfo)
        sb3(f"{kind} (the MATLAB facade trains with SB3)")
        kwargs, extras = sb3_settings(kind, opts, init, self._half_range())
        self.model = self._build(kwargs, extras, seed)

    # -- specs ---------------------------------------------------------------------------------------
    def _specs(self, observationInfo: Any, actionInfo: Any) -> None:
        obs_specs, keys = observation_channels(observationInfo)
        act_specs = action_channels(actionInfo)
        finite = isinstance(act_specs[0], rlFiniteSetSpec) and len(act_specs) == 1
        numeric = len(act_specs) == 1 and not finite
        problem = None
        if not (finite or numeric):
            problem = (
                "be one rlFiniteSetSpec or one rlNumericSpec",
                "Use a single action channel (SB3 has no hybrid action)",
            )
        elif self.kind in _FINITE_ONLY and not finite:
            problem = (
                f"be an rlFiniteSetSpec ({self.kind[2:-5]} chooses one of a finite set of actions)",
                "Use rlSACAgent, rlTD3Agent, rlDDPGAgent, rlPPOAgent or rlACAgent for a continuous action",
            )
        elif self.kind in _NUMERIC_ONLY and not numeric:
            problem = (
                f"be an rlNumericSpec ({self.kind[2:-5]} acts on a continuous action)",
                "Use rlDQNAgent, rlPPOAgent or rlACAgent for a finite set of actions",
            )
        if problem is not None:
            actual = " ".join(type(s).__name__ for s in act_specs)
            raise error(SpecError, f"{self.kind} actionInfo", problem[0], actual, problem[1])
        if numeric and self.kind in _NUMERIC_ONLY:
            spec = act_specs[0]
            if not (np.all(np.isfinite(spec.LowerLimit)) and np.all(np.isfinite(spec.UpperLimit))):
                raise error(
                    SpecError,
                    f"{self.kind} actionInfo limits",
                    "be finite (SB3 squashes the action into them)",
                    f"LowerLimit {spec.LowerLimit!r}, UpperLimit {spec.UpperLimit!r}",
                    "Set the spec's LowerLimit and UpperLimit",
                )
        self.ObservationInfo = obs_specs if keys is not None else obs_specs[0]
        self.ActionInfo = act_specs[0]
        self._spec_env = rlFunctionEnv(
            self.ObservationInfo, self.ActionInfo, _unused_step, _unused_reset, validate=False
        )

    def _half_range(self) -> float:
        spec = self.ActionInfo
        if isinstance(spec, rlFiniteSetSpec):
            return math.inf
        half = (np.asarray(spec.UpperLimit, np.float64) - np.asarray(spec.LowerLimit, np.float64)) / 2
        if half.size and not np.all(half == half.flat[0]):
            raise error(
                SpecError,
                f"{self.kind} actionInfo limits",
                "span one width in every element (noise options are one standard deviation)",
                f"half-widths {half.ravel().tolist()}",
                "Give every element the same LowerLimit and UpperLimit",
            )
        return float(half.flat[0]) if half.size else math.inf

    # -- the SB3 model -------------------------------------------------------------------------------
    def _build(self, kwargs: dict, extras: dict, seed: Optional[int]) -> Any:
        from bridge.adapters.sb3.export import to_sb3

        sb3(self.kind)
        self._export = to_sb3(self._spec_env)
        if "noise" in extras:
            from stable_baselines3.common import noise

            kind, mean, sigma, theta, dt = extras["noise"]
            n = int(np.prod(self._export.action_space.shape))
            kwargs["action_noise"] = (
                noise.NormalActionNoise(np.full(n, mean), np.full(n, sigma))
                if kind == "gaussian"
                else noise.OrnsteinUhlenbeckActionNoise(np.full(n, mean), np.full(n, sigma), theta=theta, dt=dt)
            )
        self._kwargs = kwargs
        self.policy = self._policy(self._export.observation_space)
        model = self._new_model(self._export, seed)
        if "epsilon" in extras:
            model.exploration_schedule = _EpsilonDecay(*extras["epsilon"])
            model.exploration_rate = model.exploration_schedule(1.0)
        setattr(model, _META, self._meta())
        return model

    def _policy(self, observation_space: Any) -> str:
        """The SB3 policy the observation needs (a Dict: MultiInputPolicy, an image: CnnPolicy, else
        MlpPolicy), or a SpecError before any model is built when SB3's CNN cannot take the image."""
        from bridge.adapters.sb3.lowering import cnn_refusal, policy_for

        policy = policy_for(observation_space)
        too_small = cnn_refusal(observation_space, policy)
        if too_small is not None:
            subject, expectation, got, _ = too_small.parts
            raise error(
                SpecError,
                f"{self.kind} {subject}",
                expectation,
                got,
                'Declare a larger image spec, or one with DataType="double" (SB3 then flattens it into the MLP)',
            )
        return policy

    def _new_model(self, env: Any, seed: Optional[int]) -> Any:
        import torch

        cls = getattr(sb3(self.kind), self.algorithm)
        torch.set_num_threads(1)  # as train runs: the initial weights then do not depend on the thread count
        try:
            return cls(self.policy, env, seed=seed, verbose=0, device="cpu", **self._kwargs)
        except (ValueError, AssertionError) as e:  # SB3's own checks of a combination of options
            title = OPTIONS_OF[self.kind][0].__name__
            raise error(
                SpecError,
                f"{self.kind} options",
                f"be a combination SB3's {self.algorithm} accepts",
                f"{type(e).__name__}: {e}" if str(e) else type(e).__name__,
                f"Change the {title} or rlAgentInitializationOptions values SB3 names",
            ) from None

    def use_env(self, vec_env: Any, seed: Optional[int]) -> Any:
        """The model, set to train on ``vec_env``; another number of envs rebuilds it with the same weights."""
        old = self.model
        if vec_env.num_envs == old.n_envs:
            old.set_env(vec_env)
            return old
        new = self._new_model(vec_env, seed)
        new.policy.load_state_dict(old.policy.state_dict())
        if hasattr(old, "exploration_schedule"):
            new.exploration_schedule = old.exploration_schedule
        setattr(new, _META, self._meta())
        self.model = new
        return new

    def _meta(self) -> dict:
        return {
            "kind": self.kind,
            "ObservationInfo": self.ObservationInfo,
            "ActionInfo": self.ActionInfo,
            "AgentOptions": self.AgentOptions,
            "InitializationOptions": self.InitializationOptions,
        }

    # -- acting --------------------------------------------------------------------------------------
    def predict(self, observation: Any, deterministic: bool = True) -> Any:
        """SB3's ``predict`` on a neutral observation (what ``sim`` calls)."""
        return self.model.predict(self._export.observation_lowering.encode(observation), deterministic=deterministic)

    def q0(self, observation: Any) -> float:
        """The critic's value of the neutral ``observation`` (MATLAB's EpisodeQ0)."""
        return self.q0_encoded(self._export.observation_lowering.encode(observation))

    def q0_encoded(self, observation: Any) -> float:
        """The critic's value of an observation as SB3 sees it (float32)."""
        import torch

        obs, _ = self.model.policy.obs_to_tensor(observation)
        policy = self.model.policy
        with torch.no_grad():
            if self.algorithm == "DQN":
                value = policy.q_net(obs).max(dim=1).values
            elif self.algorithm in ("PPO", "A2C"):
                value = policy.predict_values(obs)
            else:
                value = policy.critic(obs, policy.actor(obs))[0]
        return float(value.reshape(-1)[0])

    def __repr__(self) -> str:
        return f"{self.kind}(ObservationInfo={self.ObservationInfo!r}, ActionInfo={self.ActionInfo!r})"


def _agent(kind: str) -> Any:
    def build(observationInfo: Any, actionInfo: Any, *options: Any, seed: Optional[int] = None) -> Agent:
        return Agent(kind, observationInfo, actionInfo, *options, seed=seed)

    build.__name__ = build.__qualname__ = kind
    build.__doc__ = (
        f"``{kind}(observationInfo, actionInfo[, initOpts][, agentOpts])``: a default agent "
        f"(SB3 {OPTIONS_OF[kind][1]})."
    )
    return build


rlDQNAgent = _agent("rlDQNAgent")
rlPPOAgent = _agent("rlPPOAgent")
rlACAgent = _agent("rlACAgent")
rlSACAgent = _agent("rlSACAgent")
rlTD3Agent = _agent("rlTD3Agent")
rlDDPGAgent = _agent("rlDDPGAgent")


def _check_agent(agent: Any, subject: str) -> Agent:
    if not isinstance(agent, Agent):
        raise error(
            SpecError,
            subject,
            "be an agent built by rlDQNAgent, rlPPOAgent, ...",
            _describe_value(agent),
            "Build one with e.g. rlDQNAgent(obsInfo, actInfo)",
        )
    return agent


def getAction(agent: Agent, observation: Any) -> List[Any]:
    """``action = getAction(agent, {obs})``: the greedy action, in MATLAB values, as a list (a cell array).

    ``observation`` is the MATLAB value (a [4 1] column, a finite-set element), or a list of the
    channels (MATLAB's cell array; one element for one channel).
    """
    agent = _check_agent(agent, "getAction agent")
    lowering = agent._spec_env.observation_lowering
    several = isinstance(agent.ObservationInfo, list)
    if not several and isinstance(observation, list) and len(observation) == 1:
        observation = observation[0]  # {obs}
    neutral = lowering.convert(observation, "getAction observation")
    _refuse_nan(neutral, "getAction observation")
    action = agent.predict(neutral)[0]
    space = agent._spec_env.action_space
    if isinstance(space, spaces.Discrete):
        action = np.int64(np.asarray(action).reshape(()))
    else:
        action = np.asarray(action).astype(space.dtype).reshape(space.shape)
    return [agent._spec_env.action_lowering.encode(action)]


def _refuse_nan(neutral: Any, subject: str) -> None:
    """A NaN in the observation makes the network answer an arbitrary action: refuse it instead."""
    channels = neutral.items() if isinstance(neutral, dict) else [(None, neutral)]
    for key, value in channels:
        array = np.asarray(value)
        if array.dtype.kind == "f" and np.isnan(array).any():
            at = [int(i) for i in np.argwhere(np.isnan(array))[0]]
            raise error(
                SpecError,
                subject if key is None else f"{subject} channel {key!r}",
                "hold no NaN (the network would answer an arbitrary action)",
                f"NaN at index {at} of a value of size {matlab_size(array.shape)}",
                "Pass the observation the environment returned, with every element a number",
            )

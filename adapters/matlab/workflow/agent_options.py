"""Agent options with MATLAB's names: ``rl<Name>AgentOptions``, ``rlOptimizerOptions``,
``rlAgentInitializationOptions``, and what SB3 makes of them (:func:`sb3_settings`).

numpy and bridge only (both eras). Every option is a value SB3 honours exactly, or a SpecError
naming it: an option is never ignored. A name the facade does not know is refused the same way,
and every value is checked against its declared type and range when it is set
(:mod:`bridge.adapters.matlab.workflow.option_values`).
"""

from __future__ import annotations

import math
from typing import Any, Dict, Tuple

from bridge.adapters.matlab.workflow.option_values import checked

from bridge.errors import SpecError, error
from bridge.spaces import _describe_value

__all__ = [
    "rlOptimizerOptions",
    "rlAgentInitializationOptions",
    "rlDQNAgentOptions",
    "rlPPOAgentOptions",
    "rlACAgentOptions",
    "rlSACAgentOptions",
    "rlTD3AgentOptions",
    "rlDDPGAgentOptions",
    "OPTIONS_OF",
    "sb3_settings",
]


class _Options:
    """A MATLAB options object: known properties with defaults, set by keyword or dot notation."""

    _title = "options"
    _defaults: Dict[str, Any] = {}

    def __init__(self, *positional: Any, **values: Any) -> None:
        if positional:  # MATLAB passes options as name-value pairs only
            names = ", ".join(f"{n}=..." for n in self._defaults)
            raise error(
                SpecError,
                f"{self._title} options",
                "be given by name",
                f"{len(positional)} unnamed values",
                f"Pass them as name-value pairs, e.g. {self._title}({names})",
            )
        for name, default in self._defaults.items():
            object.__setattr__(self, name, default() if callable(default) else default)
        for name, value in values.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._defaults:
            raise error(
                SpecError,
                f"{self._title} option {name}",
                f"be one of {sorted(self._defaults)}",
                name,
                "envbridge refuses an option rather than ignore it; drop it or use a listed one",
            )
        default = self._defaults[name]
        if isinstance(default, type) and not isinstance(value, default):  # a nested options object
            raise error(
                SpecError,
                f"{self._title} option {name}",
                f"be an {default.__name__} object",
                _describe_value(value),
                f"Set its fields instead (e.g. opts.{name}.{next(iter(default._defaults))})",
            )
        object.__setattr__(self, name, checked(self._title, name, value))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __repr__(self) -> str:
        return f"{self._title}({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


def _sub(title: str, **defaults: Any) -> Any:
    """A factory of nested options objects (``opts.EpsilonGreedyExploration.EpsilonDecay = ...``)."""
    cls = type(title, (_Options,), {"_title": title, "_defaults": dict(defaults)})
    return cls


class rlOptimizerOptions(_Options):
    """``rlOptimizerOptions(LearnRate=0.01, GradientThreshold=inf, L2RegularizationFactor=1e-4, Algorithm="adam")``."""

    _title = "rlOptimizerOptions"
    _defaults = {"LearnRate": 0.01, "GradientThreshold": math.inf, "L2RegularizationFactor": 1e-4, "Algorithm": "adam"}


class rlAgentInitializationOptions(_Options):
    """``rlAgentInitializationOptions(NumHiddenUnit=256, UseRNN=False)``: the default networks."""

    _title = "rlAgentInitializationOptions"
    _defaults = {"NumHiddenUnit": 256, "UseRNN": False}


_Epsilon = _sub("EpsilonGreedyExploration", Epsilon=1.0, EpsilonMin=0.01, EpsilonDecay=0.005)
_Entropy = _sub("EntropyWeightOptions", EntropyWeight=1.0, TargetEntropy=None)
_Gaussian = _sub("GaussianActionNoise", Mean=0.0, StandardDeviation=0.1)
_Smooth = _sub("TargetPolicySmoothModel", StandardDeviation=0.2, LowerLimit=-0.5, UpperLimit=0.5)
_OU = _sub("OrnsteinUhlenbeckActionNoise", Mean=0.0, StandardDeviation=0.3, MeanAttractionConstant=0.15)
_COMMON = {"SampleTime": 1.0, "DiscountFactor": 0.99}
_REPLAY = {
    "MiniBatchSize": 64,
    "ExperienceBufferLength": 10_000,
    "NumWarmStartSteps": 64,
    "LearningFrequency": 1,  # MATLAB's default -1 (learn at each episode's end) is accepted too
    "NumEpoch": 1,
    "MaxMiniBatchPerEpoch": 1,
}


def _options(title: str, **defaults: Any) -> Any:
    return type(title, (_Options,), {"_title": title, "_defaults": {**_COMMON, **defaults}})


rlDQNAgentOptions = _options(
    "rlDQNAgentOptions",
    **_REPLAY,
    UseDoubleDQN=False,  # MATLAB's default is true; SB3's DQN has no double Q-learning
    TargetSmoothFactor=1e-3,
    TargetUpdateFrequency=1,
    NumStepsToLookAhead=1,
    EpsilonGreedyExploration=_Epsilon,
    CriticOptimizerOptions=rlOptimizerOptions,
)
rlPPOAgentOptions = _options(
    "rlPPOAgentOptions",
    ExperienceHorizon=512,
    MiniBatchSize=128,
    NumEpoch=3,
    ClipFactor=0.2,
    EntropyLossWeight=0.01,
    AdvantageEstimateMethod="gae",
    GAEFactor=0.95,
    NormalizedAdvantageMethod="none",
    ActorOptimizerOptions=rlOptimizerOptions,
    CriticOptimizerOptions=rlOptimizerOptions,
)
rlACAgentOptions = _options(
    "rlACAgentOptions",
    NumStepsToLookAhead=32,
    EntropyLossWeight=0.0,
    ActorOptimizerOptions=rlOptimizerOptions,
    CriticOptimizerOptions=rlOptimizerOptions,
)
_ACTOR_CRITIC_REPLAY = dict(
    _REPLAY,
    TargetSmoothFactor=1e-3,
    ActorOptimizerOptions=rlOptimizerOptions,
    CriticOptimizerOptions=rlOptimizerOptions,
)
rlSACAgentOptions = _options("rlSACAgentOptions", **_ACTOR_CRITIC_REPLAY, EntropyWeightOptions=_Entropy)
rlTD3AgentOptions = _options(
    "rlTD3AgentOptions",
    **_ACTOR_CRITIC_REPLAY,
    ExplorationModel=_Gaussian,
    TargetPolicySmoothModel=_Smooth,
    PolicyUpdateFrequency=2,
)
rlDDPGAgentOptions = _options("rlDDPGAgentOptions", **_ACTOR_CRITIC_REPLAY, NoiseOptions=_OU)

# agent name -> (its options class, the SB3 algorithm)
OPTIONS_OF: Dict[str, Tuple[Any, str]] = {
    "rlDQNAgent": (rlDQNAgentOptions, "DQN"),
    "rlPPOAgent": (rlPPOAgentOptions, "PPO"),
    "rlACAgent": (rlACAgentOptions, "A2C"),
    "rlSACAgent": (rlSACAgentOptions, "SAC"),
    "rlTD3Agent": (rlTD3AgentOptions, "TD3"),
    "rlDDPGAgent": (rlDDPGAgentOptions, "DDPG"),
}


def _refuse(title: str, name: str, expectation: str, value: Any, fix: str) -> SpecError:
    return error(SpecError, f"{title} {name}", expectation, repr(value), fix)


def _optimizer(opts: Any, title: str, kwargs: Dict[str, Any], policy_kwargs: Dict[str, Any], clip: bool) -> None:
    """One optimizer for the whole policy (SB3): actor and critic options must agree."""
    names = [n for n in ("ActorOptimizerOptions", "CriticOptimizerOptions") if hasattr(opts, n)]
    first = getattr(opts, names[0])
    for field in ("LearnRate", "GradientThreshold", "L2RegularizationFactor", "Algorithm"):
        for other in names[1:]:
            if getattr(getattr(opts, other), field) != getattr(first, field):
                raise _refuse(
                    title,
                    f"{other}.{field}",
                    f"equal {names[0]}.{field} ({getattr(first, field)!r}): SB3 trains actor and critic "
                    "with one optimizer",
                    getattr(getattr(opts, other), field),
                    f"Set both {field}s to one value",
                )
    if first.Algorithm != "adam":
        raise _refuse(
            title,
            f"{names[0]}.Algorithm",
            'be "adam" (the optimizer envbridge maps)',
            first.Algorithm,
            'Set Algorithm="adam"',
        )
    kwargs["learning_rate"] = float(first.LearnRate)
    if first.L2RegularizationFactor:
        policy_kwargs["optimizer_kwargs"] = {"weight_decay": float(first.L2RegularizationFactor)}
    if clip:
        kwargs["max_grad_norm"] = float(first.GradientThreshold) if math.isfinite(first.GradientThreshold) else 1e10
    elif math.isfinite(first.GradientThreshold):
        raise _refuse(
            title,
            f"{names[0]}.GradientThreshold",
            "be inf (SB3's algorithm clips no gradient)",
            first.GradientThreshold,
            "Set GradientThreshold=inf",
        )


def _scale(value: float, half_range: float, title: str, name: str) -> float:
    """A noise level in action units -> SB3's [-1, 1] action scale."""
    if not math.isfinite(half_range):
        raise _refuse(
            title,
            name,
            "act on an action of finite half-width (SB3 adds noise in [-1, 1] units)",
            half_range,
            "Set the action spec's LowerLimit and UpperLimit",
        )
    return float(value) / half_range


def sb3_settings(agent: str, opts: Any, init: Any, half_range: float) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """SB3 keyword arguments for ``agent`` built with ``opts`` and ``init``, and facade extras.

    ``half_range`` is half the width of a numeric action (inf when unbounded). Extras: the
    epsilon-greedy decay MATLAB applies per step (``"epsilon"``), the exploration noise
    (``"noise"``: ("gaussian" | "ou", mean, sigma, theta, dt) in SB3 units).
    """
    title = type(opts).__name__
    if init.UseRNN:
        raise _refuse(
            "rlAgentInitializationOptions",
            "UseRNN",
            "be false (SB3's algorithms here are feed-forward)",
            init.UseRNN,
            "Set UseRNN=False",
        )
    units = int(init.NumHiddenUnit)
    policy_kwargs: Dict[str, Any] = {"net_arch": [units, units]}
    kwargs: Dict[str, Any] = {"gamma": float(opts.DiscountFactor), "policy_kwargs": policy_kwargs}
    extras: Dict[str, Any] = {}
    if hasattr(opts, "ExperienceBufferLength"):  # the replay agents
        kwargs.update(
            batch_size=int(opts.MiniBatchSize),
            buffer_size=int(opts.ExperienceBufferLength),
            learning_starts=int(opts.NumWarmStartSteps),
            train_freq=(1, "episode") if opts.LearningFrequency == -1 else int(opts.LearningFrequency),
            gradient_steps=int(opts.NumEpoch) * int(opts.MaxMiniBatchPerEpoch),
        )
    if agent == "rlDQNAgent":
        if opts.UseDoubleDQN:
            raise _refuse(
                title,
                "UseDoubleDQN",
                "be false (SB3's DQN has no double Q-learning)",
                opts.UseDoubleDQN,
                "Set UseDoubleDQN=False",
            )
        _optimizer(opts, title, kwargs, policy_kwargs, clip=True)
        eps = opts.EpsilonGreedyExploration
        extras["epsilon"] = (float(eps.Epsilon), float(eps.EpsilonMin), float(eps.EpsilonDecay))
        kwargs.update(
            tau=float(opts.TargetSmoothFactor),
            target_update_interval=int(opts.TargetUpdateFrequency),
            n_steps=int(opts.NumStepsToLookAhead),
        )
    elif agent == "rlPPOAgent":
        _optimizer(opts, title, kwargs, policy_kwargs, clip=True)
        method = opts.AdvantageEstimateMethod
        if method not in ("gae", "finite-horizon"):
            raise _refuse(
                title,
                "AdvantageEstimateMethod",
                'be "gae" or "finite-horizon"',
                method,
                'Set AdvantageEstimateMethod="gae"',
            )
        normalized = {"none": False, "current": True}.get(opts.NormalizedAdvantageMethod)
        if normalized is None:
            raise _refuse(
                title,
                "NormalizedAdvantageMethod",
                'be "none" or "current" (SB3 normalizes per batch)',
                opts.NormalizedAdvantageMethod,
                'Set NormalizedAdvantageMethod="current"',
            )
        kwargs.update(
            n_steps=int(opts.ExperienceHorizon),
            batch_size=int(opts.MiniBatchSize),
            n_epochs=int(opts.NumEpoch),
            clip_range=float(opts.ClipFactor),
            ent_coef=float(opts.EntropyLossWeight),
            normalize_advantage=normalized,
            gae_lambda=float(opts.GAEFactor) if method == "gae" else 1.0,
        )
    elif agent == "rlACAgent":
        _optimizer(opts, title, kwargs, policy_kwargs, clip=True)
        kwargs.update(
            n_steps=int(opts.NumStepsToLookAhead),
            ent_coef=float(opts.EntropyLossWeight),
            gae_lambda=1.0,
            use_rms_prop=False,
            normalize_advantage=False,
        )
    else:  # SAC, TD3, DDPG
        _optimizer(opts, title, kwargs, policy_kwargs, clip=False)
        kwargs.update(
            tau=float(opts.TargetSmoothFactor),
        )
        if agent == "rlSACAgent":
            ent = opts.EntropyWeightOptions
            kwargs["ent_coef"] = f"auto_{float(ent.EntropyWeight)}"
            kwargs["target_entropy"] = "auto" if ent.TargetEntropy is None else float(ent.TargetEntropy)
        elif agent == "rlTD3Agent":
            smooth, noise = opts.TargetPolicySmoothModel, opts.ExplorationModel
            if smooth.LowerLimit != -smooth.UpperLimit:
                raise _refuse(
                    title,
                    "TargetPolicySmoothModel.LowerLimit",
                    "be -UpperLimit (SB3 clips symmetrically)",
                    smooth.LowerLimit,
                    "Set LowerLimit=-UpperLimit",
                )
            kwargs.update(
                policy_delay=int(opts.PolicyUpdateFrequency),
                target_policy_noise=_scale(
                    smooth.StandardDeviation, half_range, title, "TargetPolicySmoothModel.StandardDeviation"
                ),
                target_noise_clip=_scale(smooth.UpperLimit, half_range, title, "TargetPolicySmoothModel.UpperLimit"),
            )
            sigma = _scale(noise.StandardDeviation, half_range, title, "ExplorationModel.StandardDeviation")
            extras["noise"] = (
                "gaussian",
                _scale(noise.Mean, half_range, title, "ExplorationModel.Mean"),
                sigma,
                0.0,
                1.0,
            )
        else:
            noise = opts.NoiseOptions
            sigma = _scale(noise.StandardDeviation, half_range, title, "NoiseOptions.StandardDeviation")
            extras["noise"] = (
                "ou",
                _scale(noise.Mean, half_range, title, "NoiseOptions.Mean"),
                sigma,
                float(noise.MeanAttractionConstant),
                float(opts.SampleTime),
            )
    return kwargs, extras

"""``rlTrainingOptions``, ``train`` and the training statistics MATLAB returns.

numpy and bridge only at import (both eras). ``train`` reaches SB3 lazily (the episode loop lives
in :mod:`bridge.adapters.matlab.workflow.training_loop`, which only ``train`` imports); without SB3 it is
the house MissingDependencyError naming the era and the extra. Every stop criterion is checked at
the end of each episode, in the order episodes end, and training stops at exactly the episode
where it is first met, as MATLAB counts.
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Optional

import numpy as np
from bridge.adapters.matlab.workflow.agents import SEED_HIGH, Agent, sb3
from bridge.adapters.matlab.workflow.option_values import checked

from bridge import arguments
from bridge.env import Env, TimeLimit, Wrapper
from bridge.errors import SpecError, error
from bridge.spaces import _describe_value
from bridge.vector import VectorEnv

__all__ = ["rlTrainingOptions", "TrainingStatistics", "train", "CRITERIA"]

CRITERIA = (
    "AverageReward",
    "EpisodeReward",
    "AverageSteps",
    "EpisodeSteps",
    "EpisodeCount",
    "GlobalStepCount",
    "EpisodeQ0",
    "none",
)
_PLOTS = ("training-progress", "none")
_DEFAULTS: Dict[str, Any] = {
    "MaxEpisodes": 500,
    "MaxStepsPerEpisode": 500,
    "ScoreAveragingWindowLength": 5,
    "StopTrainingCriteria": "AverageSteps",
    "StopTrainingValue": 500.0,
    "SaveAgentCriteria": "none",
    "SaveAgentValue": math.inf,
    "SaveAgentDirectory": "savedAgents",
    "Verbose": False,
    "Plots": "training-progress",
    "UseParallel": False,
    "ProgressDirectory": "training-progress",  # envbridge's own: where the PNG and the CSV go
}


def _choice(name: str, value: Any, allowed: tuple) -> str:
    if value not in allowed:
        raise error(SpecError, f"rlTrainingOptions {name}", f"be one of {list(allowed)}", repr(value), "Pick one")
    return value


class rlTrainingOptions:
    """MATLAB's training options (``rlTrainingOptions(MaxEpisodes=..., ...)``), checked on set.

    ``ProgressDirectory`` is envbridge's own: the folder of ``training-progress.png`` and
    ``training-progress.csv`` when ``Plots="training-progress"``. ``UseParallel=True`` is refused
    (train an ``rlFunctionVectorEnv`` for batched experience instead).
    """

    def __init__(self, **values: Any) -> None:
        for name, default in _DEFAULTS.items():
            object.__setattr__(self, name, default)
        for name, value in values.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _DEFAULTS:
            raise error(
                SpecError,
                f"rlTrainingOptions option {name}",
                f"be one of {sorted(_DEFAULTS)}",
                name,
                "envbridge refuses an option rather than ignore it; drop it or use a listed one",
            )
        if name in ("StopTrainingCriteria", "SaveAgentCriteria"):
            value = _choice(name, value, CRITERIA)
        elif name == "Plots":
            value = _choice(name, value, _PLOTS)
        value = checked("rlTrainingOptions", name, value)
        if name == "UseParallel" and value:
            raise error(
                SpecError,
                "rlTrainingOptions UseParallel",
                "be false (SB3 trains here in one process)",
                value,
                "Train an rlFunctionVectorEnv (NumEnv=...) for batched experience",
            )
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"rlTrainingOptions({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


class TrainingStatistics:
    """What ``train`` returns (MATLAB's trainingStats), one entry per episode.

    Attributes:
        EpisodeIndex, EpisodeReward, EpisodeSteps, AverageReward, AverageSteps, TotalAgentSteps,
        EpisodeQ0 (the critic's value of each episode's first observation): numpy arrays.
        TrainingOptions: the options; StopReason: the criterion that stopped training, or
        "MaxEpisodes"; elapsed: wall seconds.
    """

    FIELDS = (
        "EpisodeIndex",
        "EpisodeReward",
        "EpisodeSteps",
        "AverageReward",
        "AverageSteps",
        "TotalAgentSteps",
        "EpisodeQ0",
    )

    def __init__(self, rows: list, options: rlTrainingOptions, stop_reason: str, elapsed: float) -> None:
        table = np.asarray(rows, dtype=np.float64).reshape(-1, len(self.FIELDS))
        for i, name in enumerate(self.FIELDS):
            column = table[:, i]
            integer = name in ("EpisodeIndex", "EpisodeSteps", "TotalAgentSteps")
            setattr(self, name, column.astype(np.int64) if integer else column)
        self.TrainingOptions, self.StopReason, self.elapsed = options, stop_reason, elapsed

    def __repr__(self) -> str:
        n = len(self.EpisodeIndex)
        last = f", AverageReward[-1]={self.AverageReward[-1]:.2f}" if n else ""
        return f"TrainingStatistics(episodes={n}{last}, StopReason={self.StopReason!r})"


def _training_env(env: Any, opts: rlTrainingOptions) -> Any:
    if isinstance(env, VectorEnv):
        steps = getattr(env, "max_episode_steps", None)
        if steps != opts.MaxStepsPerEpisode:
            raise error(
                SpecError,
                "train vector env MaxStepsPerEpisode",
                f"equal rlTrainingOptions MaxStepsPerEpisode ({opts.MaxStepsPerEpisode})",
                steps,
                f"Build it with MaxStepsPerEpisode={opts.MaxStepsPerEpisode}",
            )
        return env
    return TimeLimit(env, opts.MaxStepsPerEpisode)


def _check_env(env: Any) -> None:
    """An environment object, refused in MATLAB's terms before anything reads its specs."""
    if isinstance(env, (Env, VectorEnv)):
        return
    fix = "Pass the environment object"
    if isinstance(env, str):  # an id: MATLAB's train takes the env itself, never its name
        fix = f"Build it first, e.g. env = bridge.make({env!r}), and pass env"
    raise error(
        SpecError, "train env", "be an rlFunctionEnv, an rlFunctionVectorEnv or a bridge.Env", _describe_value(env), fix
    )


class _AsSpecs(Wrapper):
    """The env as its MATLAB specs declare it: a neutral Image (or any space the specs read as a
    plain Box) re-declared as the spec's space. The values are the same arrays; only the declaration
    the agent's model was built on changes."""

    def __init__(self, env: Env, agent: Agent) -> None:
        super().__init__(env)
        self.observation_space = agent._spec_env.observation_space
        self.action_space = agent._spec_env.action_space


def _same_specs(agent: Agent, env: Any) -> Any:
    """The env to train on: ``env``, or ``env`` declared by its specs when those equal the agent's."""
    from bridge.adapters.matlab.validation import getActionInfo, getObservationInfo

    spaces_differ = False
    for what, mine, theirs in (
        ("observation", agent._spec_env.observation_space, _space(env, "observation")),
        ("action", agent._spec_env.action_space, _space(env, "action")),
    ):
        if mine != theirs:
            theirs_specs = getObservationInfo(env) if what == "observation" else getActionInfo(env)
            ours = agent.ObservationInfo if what == "observation" else agent.ActionInfo
            if isinstance(env, Env) and theirs_specs == ours:
                spaces_differ = True  # e.g. an Image the specs read as a uint8 rlNumericSpec
                continue
            raise error(
                SpecError,
                f"train env {what} specs",
                f"match the agent's ({agent.ObservationInfo if what == 'observation' else agent.ActionInfo!r})",
                repr(theirs_specs),
                "Build the agent from the env's specs: getObservationInfo(env), getActionInfo(env)",
            )
    return _AsSpecs(env, agent) if spaces_differ else env


def _check_directories(opts: rlTrainingOptions) -> None:
    """The folders train writes to are folders (or can be made), checked before the first episode."""
    used = [
        ("ProgressDirectory", opts.Plots == "training-progress"),
        ("SaveAgentDirectory", opts.SaveAgentCriteria != "none"),
    ]
    for name, in_use in used:
        path = getattr(opts, name)
        if not in_use:
            continue
        parent = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(parent):
            parent = os.path.dirname(parent)
        problem = (
            "a file"
            if os.path.exists(path) and not os.path.isdir(path)
            else f"under {parent!r}, a file"
            if not os.path.isdir(parent)
            else None
        )
        if problem is None and not os.access(path if os.path.isdir(path) else parent, os.W_OK):
            problem = "a folder this process cannot write"
        if problem is not None:
            raise error(
                SpecError,
                f"rlTrainingOptions {name}",
                "name a folder train can write (it is checked before the first episode)",
                f"{path!r} ({problem})",
                f"Set {name} to a folder path, or remove the file",
            )


def _space(env: Any, role: str) -> Any:
    prefix = "single_" if isinstance(env, VectorEnv) else ""
    return getattr(env, f"{prefix}{role}_space")


def train(agent: Agent, env: Any, opts: Optional[rlTrainingOptions] = None, *, seed: Optional[int] = None) -> Any:
    """``trainingStats = train(agent, env, opts)``: train the agent in place with SB3 underneath.

    Args:
        agent: built by ``rlDQNAgent``, ``rlPPOAgent``, ... from the env's specs.
        env: an rlFunctionEnv (or any bridge.Env; a TimeLimit of ``MaxStepsPerEpisode`` is added),
            or an rlFunctionVectorEnv built with the same ``MaxStepsPerEpisode`` (batched).
        opts: :class:`rlTrainingOptions` (MATLAB's defaults when None).
        seed: seeds SB3 and the env's first reset (MATLAB's ``rng(seed)`` before ``train``).

    Returns:
        :class:`TrainingStatistics`, one entry per episode up to the one that met the criterion.
    """
    sb3("train (the MATLAB facade trains with SB3)")
    if not isinstance(agent, Agent):
        raise error(
            SpecError,
            "train agent",
            "be an agent built by rlDQNAgent, rlPPOAgent, ...",
            _describe_value(agent),
            "Build one with e.g. rlDQNAgent(obsInfo, actInfo)",
        )
    opts = opts if opts is not None else rlTrainingOptions()
    if not isinstance(opts, rlTrainingOptions):
        raise error(
            SpecError,
            "train opts",
            "be rlTrainingOptions",
            _describe_value(opts),
            "Build them with rlTrainingOptions()",
        )
    seed = arguments.seed(seed, "train seed", high=SEED_HIGH)
    _check_env(env)
    env = _same_specs(agent, env)
    _check_directories(opts)
    from bridge.adapters.matlab.workflow.training_loop import run

    rows, reason, elapsed = run(agent, _training_env(env, opts), opts, seed)
    return TrainingStatistics(rows, opts, reason, elapsed)

"""The declared type and range of every MATLAB option (agent, optimizer, initialization, training
and simulation options), checked when the option is set, before anything is built or trained.

The checks are :mod:`bridge.config`'s (``number``, ``count``, ``flag``, ``choice``), read the way
MATLAB writes values: a number is a double, so a whole ``5e4`` is the count 50000 while ``64.7`` is
refused (never truncated); numpy scalars count as the Python values they hold. ``inf`` is accepted
only where MATLAB's own default is ``inf`` (``GradientThreshold``, ``SaveAgentValue``, ...).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict

import numpy as np

from bridge.config import Check, choice, count, flag, number
from bridge.errors import SpecError, error

__all__ = ["SCHEMA", "checked", "whole", "real_or_inf", "text"]


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (np.float64(0.9) -> 0.9, np.bool_ -> bool)."""
    return value.item() if isinstance(value, np.generic) and value.dtype.kind in "biuf" else value


def whole(low: int = 0) -> Check:
    """A whole number >= ``low``: an int, or a double that is one (MATLAB's ``5e4``)."""
    inner = count(low)

    def check(subject: str, value: Any) -> int:
        value = _plain(value)
        if isinstance(value, float) and math.isfinite(value) and value == math.floor(value):
            value = int(value)
        return inner(subject, value)

    return check


def real(low: float = -math.inf, high: float = math.inf, *, open_low: bool = False) -> Check:
    inner = number(low, high, open_low=open_low)
    return lambda subject, value: inner(subject, _plain(value))


def real_or_inf(low: float = 0.0, *, open_low: bool = True) -> Check:
    """A finite number above ``low``, or ``inf`` (MATLAB's "no limit"); with ``low=-inf`` also ``-inf``."""
    inner = real(low, open_low=open_low)
    unbounded = low == -math.inf  # then -inf is a value too (a criterion always met)
    infinities = (math.inf, -math.inf) if unbounded else (math.inf,)
    above = "" if unbounded else f" {'>' if open_low else '>='} {low:g}"
    what = "a number, inf or -inf" if unbounded else f"a number{above} or inf"

    def check(subject: str, value: Any) -> float:
        value = _plain(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value in infinities:
            return float(value)
        try:
            return inner(subject, value)
        except SpecError:
            raise error(SpecError, subject, f"be {what}", repr(value), "Pass a number, or inf for no limit") from None

    return check


def real_or_none(subject: str, value: Any) -> Any:
    return None if value is None else real()(subject, value)


def switch(subject: str, value: Any) -> bool:
    return flag(subject, _plain(value))


def text(subject: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise error(SpecError, subject, "be a non-empty string", repr(value), 'Pass e.g. "savedAgents"')
    return value


def _learning_frequency(subject: str, value: Any) -> int:
    return -1 if _plain(value) == -1 and not isinstance(_plain(value), bool) else whole(1)(subject, value)


_POSITIVE = real(0.0, open_low=True)
_NONNEGATIVE = real(0.0)
_FRACTION = real(0.0, 1.0)

# option name -> its check (an option of the same name means the same in every options object)
SCHEMA: Dict[str, Callable[[str, Any], Any]] = {
    # agent options
    "SampleTime": _POSITIVE,
    "DiscountFactor": _FRACTION,
    "MiniBatchSize": whole(1),
    "ExperienceBufferLength": whole(1),
    "NumWarmStartSteps": whole(0),
    "LearningFrequency": _learning_frequency,
    "NumEpoch": whole(1),
    "MaxMiniBatchPerEpoch": whole(1),
    "UseDoubleDQN": switch,
    "TargetSmoothFactor": real(0.0, 1.0, open_low=True),
    "TargetUpdateFrequency": whole(1),
    "NumStepsToLookAhead": whole(1),
    "ExperienceHorizon": whole(1),
    "ClipFactor": _POSITIVE,
    "EntropyLossWeight": _NONNEGATIVE,
    "AdvantageEstimateMethod": text,  # the values SB3 honours are checked with their fixes
    "GAEFactor": _FRACTION,
    "NormalizedAdvantageMethod": text,
    "PolicyUpdateFrequency": whole(1),
    # rlOptimizerOptions
    "LearnRate": _POSITIVE,
    "GradientThreshold": real_or_inf(),
    "L2RegularizationFactor": _NONNEGATIVE,
    "Algorithm": text,
    # rlAgentInitializationOptions
    "NumHiddenUnit": whole(1),
    "UseRNN": switch,
    # exploration and noise
    "Epsilon": _FRACTION,
    "EpsilonMin": _FRACTION,
    "EpsilonDecay": _FRACTION,
    "EntropyWeight": _POSITIVE,
    "TargetEntropy": real_or_none,
    "Mean": real(),
    "StandardDeviation": _NONNEGATIVE,
    "LowerLimit": real(),
    "UpperLimit": real(),
    "MeanAttractionConstant": _NONNEGATIVE,
    # rlTrainingOptions
    "MaxEpisodes": whole(1),
    "MaxStepsPerEpisode": whole(1),
    "ScoreAveragingWindowLength": whole(1),
    "StopTrainingValue": real_or_inf(-math.inf, open_low=False),
    "SaveAgentValue": real_or_inf(-math.inf, open_low=False),
    "SaveAgentDirectory": text,
    "ProgressDirectory": text,
    "Verbose": switch,
    "UseParallel": switch,
    "Plots": choice("training-progress", "none"),
    # rlSimulationOptions
    "MaxSteps": whole(1),
    "NumSimulations": whole(1),
}


def checked(title: str, name: str, value: Any) -> Any:
    """``value`` of option ``name`` of ``title`` (an options object's name), or the house SpecError."""
    check = SCHEMA.get(name)
    return value if check is None else check(f"{title} {name}", value)

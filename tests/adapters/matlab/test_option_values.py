"""Every MATLAB option value is checked against its declared type and range when it is set (issue 28
family 2), and specs build exactly what was asked (family 4): a table of bad values, each refused
with the whole house message and leaving the options object as it was; the values MATLAB users
write (5e4, np.float64, inf, -1 for LearningFrequency) are accepted. numpy and bridge only."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bridge.adapters.matlab import (
    rlAgentInitializationOptions,
    rlDDPGAgentOptions,
    rlDQNAgentOptions,
    rlFiniteSetSpec,
    rlNumericSpec,
    rlOptimizerOptions,
    rlPPOAgentOptions,
    rlSACAgentOptions,
    rlSimulationOptions,
    rlTD3AgentOptions,
    rlTrainingOptions,
)
from support import raises_exactly

from bridge.errors import SpecError

RANGE = "Pass a number in range"
WHOLE = "Pass a whole number in range"
# (options class, option, bad value, the whole message)
BAD = [
    (rlDQNAgentOptions, "DiscountFactor", math.nan, f"must be a finite number in [0.0, 1.0], got nan. {RANGE}."),
    (rlPPOAgentOptions, "DiscountFactor", 1.5, f"must be a finite number in [0.0, 1.0], got 1.5. {RANGE}."),
    (rlDQNAgentOptions, "MiniBatchSize", 64.7, f"must be an int >= 1, got 64.7. {WHOLE}."),
    (rlSACAgentOptions, "ExperienceBufferLength", 0, f"must be an int >= 1, got 0. {WHOLE}."),
    (rlAgentInitializationOptions, "NumHiddenUnit", 0, f"must be an int >= 1, got 0. {WHOLE}."),
    (
        rlAgentInitializationOptions,
        "UseRNN",
        "no",
        "must be true or false, got 'no'. Write true or false (yes/no/on/off are not read).",
    ),
    (rlOptimizerOptions, "LearnRate", -1, f"must be a finite number in (0.0, inf], got -1. {RANGE}."),
    (
        rlOptimizerOptions,
        "GradientThreshold",
        0,
        "must be a number > 0 or inf, got 0. Pass a number, or inf for no limit.",
    ),
    (
        rlOptimizerOptions,
        "L2RegularizationFactor",
        -1e-4,
        f"must be a finite number in [0.0, inf], got -0.0001. {RANGE}.",
    ),
    (rlPPOAgentOptions, "ExperienceHorizon", 0, f"must be an int >= 1, got 0. {WHOLE}."),
    (rlPPOAgentOptions, "GAEFactor", math.inf, f"must be a finite number in [0.0, 1.0], got inf. {RANGE}."),
    (rlPPOAgentOptions, "ClipFactor", 0.0, f"must be a finite number in (0.0, inf], got 0.0. {RANGE}."),
    (
        rlDQNAgentOptions,
        "UseDoubleDQN",
        0,
        "must be true or false, got 0. Write true or false (yes/no/on/off are not read).",
    ),
    (rlDQNAgentOptions, "LearningFrequency", 0, f"must be an int >= 1, got 0. {WHOLE}."),
    (rlTD3AgentOptions, "PolicyUpdateFrequency", 2.5, f"must be an int >= 1, got 2.5. {WHOLE}."),
    (rlDDPGAgentOptions, "SampleTime", -1, f"must be a finite number in (0.0, inf], got -1. {RANGE}."),
    (rlTrainingOptions, "MaxEpisodes", 2.5, f"must be an int >= 1, got 2.5. {WHOLE}."),
    (
        rlTrainingOptions,
        "Verbose",
        1,
        "must be true or false, got 1. Write true or false (yes/no/on/off are not read).",
    ),
    (
        rlTrainingOptions,
        "StopTrainingValue",
        math.nan,
        "must be a number, inf or -inf, got nan. Pass a number, or inf for no limit.",
    ),
    (
        rlTrainingOptions,
        "SaveAgentValue",
        "high",
        "must be a number, inf or -inf, got 'high'. Pass a number, or inf for no limit.",
    ),
    (rlTrainingOptions, "SaveAgentDirectory", "", "must be a non-empty string, got ''. Pass e.g. \"savedAgents\"."),
    (rlSimulationOptions, "MaxSteps", 0, f"must be an int >= 1, got 0. {WHOLE}."),
    (rlSimulationOptions, "NumSimulations", True, f"must be an int >= 1, got True. {WHOLE}."),
]


@pytest.mark.parametrize("cls, name, value, text", BAD, ids=[f"{c.__name__}-{n}-{v!r}" for c, n, v, _ in BAD])
def test_a_bad_option_value_is_refused_when_set_and_moves_nothing(cls, name, value, text):
    with raises_exactly(SpecError, f"{cls.__name__} {name} {text}"):
        cls(**{name: value})
    opts = cls()
    before = repr(opts)
    with raises_exactly(SpecError, f"{cls.__name__} {name} {text}"):
        setattr(opts, name, value)  # dot notation, as in MATLAB
    assert repr(opts) == before


def test_nested_option_values_are_checked_too():
    opts = rlDQNAgentOptions()
    with raises_exactly(
        SpecError,
        "EpsilonGreedyExploration EpsilonDecay must be a finite number in [0.0, 1.0], got 2. Pass a number in range.",
    ):
        opts.EpsilonGreedyExploration.EpsilonDecay = 2
    with raises_exactly(
        SpecError,
        "rlDQNAgentOptions option EpsilonGreedyExploration must be an EpsilonGreedyExploration object, "
        "got 0.5. Set its fields instead (e.g. opts.EpsilonGreedyExploration.Epsilon).",
    ):
        opts.EpsilonGreedyExploration = 0.5
    with raises_exactly(
        SpecError,
        "rlOptimizerOptions LearnRate must be a finite number in (0.0, inf], got nan. Pass a number in range.",
    ):
        opts.CriticOptimizerOptions.LearnRate = np.float64("nan")


def test_values_as_matlab_users_write_them_are_accepted_exactly():
    opts = rlDQNAgentOptions(ExperienceBufferLength=5e4, MiniBatchSize=np.int64(32), DiscountFactor=np.float64(0.9))
    assert (opts.ExperienceBufferLength, opts.MiniBatchSize, opts.DiscountFactor) == (50000, 32, 0.9)
    assert type(opts.ExperienceBufferLength) is int and type(opts.DiscountFactor) is float
    assert rlDQNAgentOptions(LearningFrequency=-1).LearningFrequency == -1  # MATLAB's "each episode's end"
    assert rlOptimizerOptions(GradientThreshold=math.inf).GradientThreshold == math.inf
    assert rlTrainingOptions(StopTrainingValue=-math.inf, MaxEpisodes=10.0).MaxEpisodes == 10
    assert rlSACAgentOptions().EntropyWeightOptions.TargetEntropy is None
    assert rlSimulationOptions(MaxSteps=1e3).MaxSteps == 1000


def test_simulation_options_list_their_names():
    with raises_exactly(
        SpecError,
        "rlSimulationOptions option MaxStep must be one of ['MaxSteps', 'NumSimulations'], got MaxStep. "
        "envbridge refuses an option rather than ignore it; drop it or use a listed one.",
    ):
        rlSimulationOptions(MaxStep=10)


@pytest.mark.parametrize(
    "elements, kept",
    [([True, False], [True, False]), ([False], [False]), (np.array([True, False]), [True, False])],
    ids=["list", "one", "array"],
)
def test_logical_elements_are_kept_as_given(elements, kept):
    spec = rlFiniteSetSpec(elements)
    assert spec.Elements == kept and [type(e) for e in spec.Elements] == [bool] * len(kept)
    assert spec.DataType == "logical"


def test_a_logical_finite_set_stays_logical():
    spec = rlFiniteSetSpec([True, False])
    assert spec.Elements == [True, False] and spec.DataType == "logical"
    assert [type(e) for e in spec.Elements] == [bool, bool] and spec.index(False) == 1
    with raises_exactly(
        SpecError,
        "rlFiniteSetSpec Elements must be all logical (True/False) or all numbers (a mix would turn True into 1.0), "
        "got [True, 2]. Use [True, False] or [1, 0].",
    ):
        rlFiniteSetSpec([True, 2])


@pytest.mark.parametrize(
    "kwargs, prop, value, inward",
    [
        (dict(LowerLimit=0.5, UpperLimit=3, DataType="int32"), "LowerLimit", 0.5, 1),
        (dict(LowerLimit=-2, UpperLimit=2.5, DataType="int32"), "UpperLimit", 2.5, 2),
        (dict(LowerLimit=-0.5, DataType="uint8"), "LowerLimit", -0.5, 0),
        (dict(UpperLimit=np.array([[1.0], [7.25]]), DataType="int16"), "UpperLimit", 7.25, 7),
        (dict(LowerLimit=np.array([[-3.0], [-1.5]]), DataType="int8"), "LowerLimit", -1.5, -1),
        (dict(LowerLimit=-7.9, UpperLimit=7.9, DataType="int64"), "LowerLimit", -7.9, -7),
        (dict(UpperLimit=1e-3, DataType="uint16"), "UpperLimit", 0.001, 0),
        (dict(LowerLimit=2.5, UpperLimit=9, DataType="uint32"), "LowerLimit", 2.5, 3),
        (dict(UpperLimit=np.float32(100.5), DataType="uint8"), "UpperLimit", 100.5, 100),
        (dict(LowerLimit=-0.25, UpperLimit=0.25, DataType="int16"), "LowerLimit", -0.25, 0),
    ],
    ids=[
        "int32-low",
        "int32-high",
        "uint8-low",
        "int16-array",
        "int8-array",
        "int64",
        "uint16",
        "uint32",
        "f32",
        "both",
    ],
)
def test_an_integer_spec_with_a_fractional_limit_is_refused_not_widened(kwargs, prop, value, inward):
    arrays = [v for v in kwargs.values() if isinstance(v, np.ndarray)]
    dims = list(arrays[0].shape) if arrays else [1, 1]
    text = (
        f"rlNumericSpec {prop} must be a whole number for DataType {kwargs['DataType']!r} (an integer class holds no "
        f'fraction), got {value!r}. Pass {prop}={inward} (the whole limit inside {value!r}), or DataType="double".'
    )
    with raises_exactly(SpecError, text):
        rlNumericSpec(dims, **kwargs)
    spec = rlNumericSpec(dims, **{k: v for k, v in kwargs.items() if k != "DataType"})
    with raises_exactly(SpecError, text):
        spec.DataType = kwargs["DataType"]  # set after the limits: the same refusal, nothing changed
    assert spec.DataType == "double"


@pytest.mark.parametrize("options", [rlSimulationOptions, rlPPOAgentOptions, rlAgentInitializationOptions])
def test_unnamed_option_values_are_refused_with_the_names_to_use(options):
    names = ", ".join(f"{n}=..." for n in options._defaults)
    with raises_exactly(
        SpecError,
        f"{options._title} options must be given by name, got 2 unnamed values. "
        f"Pass them as name-value pairs, e.g. {options._title}({names}).",
    ):
        options(500, 3)

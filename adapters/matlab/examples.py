"""MATLAB's cart-pole, ported as a MATLAB user would port it: step and reset FUNCTIONS, with the
simulation state carried in ``Info`` (MATLAB's EnvData / LoggedSignals), and batched versions of
the same functions for :class:`rlFunctionVectorEnv`.

Constants are Gym's: g 9.8, cart 1.0 kg, pole 0.1 kg, half-length 0.5 m, Ts 0.02 s, limits
+-12 degrees and +-2.4 m; reward +1 per step and -10 on a fall. The observation is MATLAB's
[4 1] column (x, dx, theta, dtheta). The reset draws all four states from U(-0.05, 0.05) with the
env's Generator (MATLAB's ``rand`` becomes ``rng.uniform``), like ``bridge.examples.CartPole``.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Tuple

import numpy as np
from bridge.adapters.matlab.datatypes import DATA_TYPES
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.function_env import rlFunctionEnv
from bridge.adapters.matlab.specs import rlNumericSpec
from bridge.adapters.matlab.vector_env import rlFunctionVectorEnv

from bridge.env import Env, TimeLimit

__all__ = [
    "cartpole_reset",
    "cartpole_step_discrete",
    "cartpole_step_continuous",
    "vec_cartpole_setup",
    "vec_cartpole_reset",
    "vec_cartpole_step",
    "cartpole_observation_info",
    "cartpole_action_info",
    "make_cartpole",
    "make_cartpole_single",
    "make_vector_cartpole",
]

Gravity = 9.8
CartMass = 1.0
PoleMass = 0.1
PoleLength = 0.5  # half the pole's length
MaxForce = 10.0
Ts = 0.02
ThetaThresholdRadians = 12 * 2 * np.pi / 360
XThreshold = 2.4
RewardForNotFalling = 1.0
PenaltyForFalling = -10.0


def cartpole_observation_info(DataType: str = "double") -> rlNumericSpec:
    """MATLAB's [4 1] observation; ``DataType="single"`` for float32 targets such as DreamerV2."""
    obsInfo = rlNumericSpec([4, 1], DataType=DataType)
    obsInfo.Name = "CartPole States"
    obsInfo.Description = "x, dx, theta, dtheta"
    return obsInfo


def cartpole_action_info(kind: str = "discrete") -> Any:
    """``rlFiniteSetSpec([-10, 10])`` ("discrete") or ``rlNumericSpec([1, 1], -10, 10)`` ("continuous")."""
    if kind == "discrete":
        actInfo: Any = rlFiniteSetSpec([-MaxForce, MaxForce])
    elif kind == "continuous":
        actInfo = rlNumericSpec([1, 1], LowerLimit=-MaxForce, UpperLimit=MaxForce)
    else:
        raise ValueError(f"kind must be 'discrete' or 'continuous', got {kind!r}")
    actInfo.Name = "CartPole Action"
    return actInfo


# -- one cart-pole ----------------------------------------------------------------------------------
def cartpole_reset(rng: Optional[np.random.Generator] = None, DataType: str = "double") -> Tuple[np.ndarray, dict]:
    """``[InitialObservation, Info] = myResetFunction()``; ``rng`` replaces MATLAB's ``rand``.

    ``DataType`` is an extra parameter (bind it with functools.partial): the state stays double,
    the observation is cast as MATLAB's ``single(State)`` would.
    """
    rng = rng if rng is not None else np.random.default_rng()
    State = rng.uniform(-0.05, 0.05, size=(4, 1))
    Info = {"State": State}
    InitialObservation = State.astype(DATA_TYPES[DataType])
    return InitialObservation, Info


def _cartpole_transition(Force: Any, Info: dict, DataType: str) -> Tuple[np.ndarray, float, bool, dict]:
    State = Info["State"]
    XDot = State[1, 0]
    Theta = State[2, 0]
    ThetaDot = State[3, 0]

    CosTheta = np.cos(Theta)
    SinTheta = np.sin(Theta)
    SystemMass = CartMass + PoleMass
    PoleMassLength = PoleMass * PoleLength
    temp = (Force + PoleMassLength * ThetaDot**2 * SinTheta) / SystemMass
    ThetaDotDot = (Gravity * SinTheta - CosTheta * temp) / (
        PoleLength * (4.0 / 3.0 - PoleMass * CosTheta**2 / SystemMass)
    )
    XDotDot = temp - PoleMassLength * ThetaDotDot * CosTheta / SystemMass

    NextState = State + Ts * np.array([[XDot], [XDotDot], [ThetaDot], [ThetaDotDot]])
    X = NextState[0, 0]
    Theta = NextState[2, 0]
    IsDone = bool(abs(X) > XThreshold or abs(Theta) > ThetaThresholdRadians)
    NextObs = NextState.astype(DATA_TYPES[DataType])
    Reward = RewardForNotFalling if not IsDone else PenaltyForFalling
    return NextObs, Reward, IsDone, {"State": NextState}


def cartpole_step_discrete(Action: Any, Info: dict, DataType: str = "double") -> Tuple[np.ndarray, float, bool, dict]:
    """``[NextObs, Reward, IsDone, Info] = myStepFunction(Action, Info)``; Action is -10 or 10."""
    if Action not in (-MaxForce, MaxForce):
        raise ValueError(f"Action must be {-MaxForce:g} for going left and {MaxForce:g} for going right.")
    return _cartpole_transition(Action, Info, DataType)


def cartpole_step_continuous(Action: Any, Info: dict, DataType: str = "double") -> Tuple[np.ndarray, float, bool, dict]:
    """The same plant with a [1 1] force in [-10, 10] N."""
    return _cartpole_transition(Action[0, 0], Info, DataType)


def make_cartpole(kind: str = "discrete", MaxStepsPerEpisode: Optional[int] = 500, DataType: str = "double") -> Env:
    """The rlFunctionEnv cart-pole, in a ``bridge.TimeLimit`` of ``MaxStepsPerEpisode`` steps.

    ``DataType`` is the observation's class ("double" as in MATLAB; "single" for DreamerV2).
    """
    step: Any = cartpole_step_discrete if kind == "discrete" else cartpole_step_continuous
    reset: Any = cartpole_reset
    if DataType != "double":  # extra parameters, bound like a MATLAB anonymous function
        step, reset = functools.partial(step, DataType=DataType), functools.partial(reset, DataType=DataType)
    env: Env = rlFunctionEnv(cartpole_observation_info(DataType), cartpole_action_info(kind), step, reset)
    return TimeLimit(env, MaxStepsPerEpisode) if MaxStepsPerEpisode else env


def make_cartpole_single() -> Env:
    """The discrete cart-pole with "single" observations: the variant DreamerV2 takes (float32).

    A zero-argument factory, so the CLI can name it:
    ``envbridge check bridge.adapters.matlab.examples:make_cartpole_single``.
    """
    return make_cartpole("discrete", 500, DataType="single")


# -- NumEnv cart-poles in one batch (instances on the leading axis) --------------------------------------
def vec_cartpole_setup(NumEnv: int) -> dict:
    return {"State": np.zeros((NumEnv, 4, 1))}


def vec_cartpole_reset(
    EnvData: dict, ResetMask: np.ndarray, rng: Optional[np.random.Generator] = None
) -> Tuple[np.ndarray, dict]:
    rng = rng if rng is not None else np.random.default_rng()
    State = EnvData["State"].copy()
    State[ResetMask] = rng.uniform(-0.05, 0.05, size=(int(ResetMask.sum()), 4, 1))
    return State, {"State": State}


def vec_cartpole_step(Action: np.ndarray, EnvData: dict) -> Tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Action: (NumEnv,) forces (finite set) or (NumEnv, 1, 1) (numeric); one call per batch step."""
    Force = np.reshape(Action, -1)
    State = EnvData["State"]
    XDot = State[:, 1, 0]
    Theta = State[:, 2, 0]
    ThetaDot = State[:, 3, 0]

    CosTheta = np.cos(Theta)
    SinTheta = np.sin(Theta)
    SystemMass = CartMass + PoleMass
    PoleMassLength = PoleMass * PoleLength
    temp = (Force + PoleMassLength * ThetaDot**2 * SinTheta) / SystemMass
    ThetaDotDot = (Gravity * SinTheta - CosTheta * temp) / (
        PoleLength * (4.0 / 3.0 - PoleMass * CosTheta**2 / SystemMass)
    )
    XDotDot = temp - PoleMassLength * ThetaDotDot * CosTheta / SystemMass

    NextState = State + Ts * np.stack([XDot, XDotDot, ThetaDot, ThetaDotDot], axis=1)[:, :, None]
    X = NextState[:, 0, 0]
    Theta = NextState[:, 2, 0]
    IsDone = (np.abs(X) > XThreshold) | (np.abs(Theta) > ThetaThresholdRadians)
    Reward = np.where(IsDone, PenaltyForFalling, RewardForNotFalling)
    return NextState, Reward, IsDone, {"State": NextState}


def make_vector_cartpole(
    NumEnv: int = 16, kind: str = "discrete", MaxStepsPerEpisode: Optional[int] = 500, autoreset_mode: str = "same-step"
) -> rlFunctionVectorEnv:
    return rlFunctionVectorEnv(
        cartpole_observation_info(),
        cartpole_action_info(kind),
        vec_cartpole_step,
        vec_cartpole_reset,
        vec_cartpole_setup,
        NumEnv=NumEnv,
        MaxStepsPerEpisode=MaxStepsPerEpisode,
        autoreset_mode=autoreset_mode,
    )

"""Two environments written as ``.m`` files (``examples/`` beside this module), each with its Python
port, line by line, and the factories of both forms.

* the cart-pole (``cartpole_step.m`` / ``cartpole_reset.m``, in the style of MATLAB's "create a
  custom environment using step and reset functions" example): [4 1] observation, finite-set force
  [-10 10];
* the reach task (``reach_step.m`` / ``reach_reset.m``): two observation channels, ``State`` [2 1]
  and ``Goal`` [1 1], a continuous force in [-1, 1].

The ports draw MATLAB's ``rand`` with :func:`octave_rand`: the host seeds Octave's generators at
every reset with two words from the env's Generator, and numpy's ``RandomState`` seeded with the same
words (Mersenne Twister, ``init_by_array``) gives Octave's ``rand`` bit for bit; so a tape of the
``.m`` env, resets included, replays through the port (``randn`` differs: Octave's ziggurat).
"""

from __future__ import annotations

import os
from typing import Any, Optional, Tuple

import numpy as np
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.function_env import rlFunctionEnv
from bridge.adapters.matlab.octave.runner import seed_words
from bridge.adapters.matlab.specs import rlNumericSpec

from bridge.env import Env, TimeLimit

__all__ = [
    "EXAMPLES",
    "octave_rand",
    "seed_words",
    "make_m_cartpole",
    "make_py_cartpole",
    "make_m_reach",
    "make_py_reach",
    "cartpole_reset",
    "cartpole_step",
    "reach_reset",
    "reach_step",
]

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")
# Octave's libm (sin, cos) and numpy's may round the last bit apart ("another machine"); each step
# is compared from the recorded state, so this is one step's difference (docs/matlab.md)
CROSS_ULPS = 4


def octave_rand(rng: np.random.Generator) -> np.random.RandomState:
    """The ``rand`` a reset of the ``.m`` env sees, from the env's Generator (draws two words)."""
    return np.random.RandomState(seed_words(rng).astype(np.uint32))


# -- the cart-pole ---------------------------------------------------------------------------------
def cartpole_specs() -> Tuple[rlNumericSpec, rlFiniteSetSpec]:
    obsInfo = rlNumericSpec([4, 1])
    obsInfo.Name = "CartPole States"
    actInfo = rlFiniteSetSpec([-10.0, 10.0])
    actInfo.Name = "CartPole Action"
    return obsInfo, actInfo


def cartpole_reset(rng: np.random.Generator) -> Tuple[np.ndarray, dict]:
    rand = octave_rand(rng)
    Theta0 = 2 * 0.05 * rand.random_sample() - 0.05
    LoggedSignals = {"State": np.array([[0.0], [0.0], [Theta0], [0.0]])}
    return LoggedSignals["State"].copy(), LoggedSignals


def cartpole_step(Action: Any, LoggedSignals: dict) -> Tuple[np.ndarray, float, bool, dict]:
    Gravity, CartMass, PoleMass, HalfPoleLength, MaxForce, Ts = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    AngleThreshold = 12 * np.pi / 180
    DisplacementThreshold = 2.4
    if Action not in (-MaxForce, MaxForce):
        raise ValueError(f"Action must be {-MaxForce:g} for going left and {MaxForce:g} for going right.")
    Force = float(Action)
    State = LoggedSignals["State"]
    XDot, Theta, ThetaDot = State[1, 0], State[2, 0], State[3, 0]
    CosTheta, SinTheta = np.cos(Theta), np.sin(Theta)
    SystemMass = CartMass + PoleMass
    temp = (Force + PoleMass * HalfPoleLength * ThetaDot * ThetaDot * SinTheta) / SystemMass
    ThetaDotDot = (Gravity * SinTheta - CosTheta * temp) / (
        HalfPoleLength * (4.0 / 3.0 - PoleMass * CosTheta * CosTheta / SystemMass)
    )
    XDotDot = temp - PoleMass * HalfPoleLength * ThetaDotDot * CosTheta / SystemMass
    State = State + Ts * np.array([[XDot], [XDotDot], [ThetaDot], [ThetaDotDot]])
    IsDone = bool(abs(State[0, 0]) > DisplacementThreshold or abs(State[2, 0]) > AngleThreshold)
    return State.copy(), (-10.0 if IsDone else 1.0), IsDone, {"State": State}


def make_m_cartpole(MaxStepsPerEpisode: Optional[int] = 500, **kwargs: Any) -> Env:
    """The cart-pole from its ``.m`` files, run by Octave."""
    obsInfo, actInfo = cartpole_specs()
    step, reset = os.path.join(EXAMPLES, "cartpole_step.m"), os.path.join(EXAMPLES, "cartpole_reset.m")
    env: Env = rlFunctionEnv(obsInfo, actInfo, step, reset, **kwargs)
    return TimeLimit(env, MaxStepsPerEpisode) if MaxStepsPerEpisode else env


def make_py_cartpole(MaxStepsPerEpisode: Optional[int] = 500) -> Env:
    """The cart-pole's Python port."""
    obsInfo, actInfo = cartpole_specs()
    env: Env = rlFunctionEnv(obsInfo, actInfo, cartpole_step, cartpole_reset)
    env.cross_era_ulps = CROSS_ULPS  # type: ignore[attr-defined]
    return TimeLimit(env, MaxStepsPerEpisode) if MaxStepsPerEpisode else env


# -- the reach task ---------------------------------------------------------------------------------
def reach_specs() -> Tuple[list, rlNumericSpec]:
    state = rlNumericSpec([2, 1])
    state.Name = "State"
    goal = rlNumericSpec([1, 1], LowerLimit=-1, UpperLimit=1)
    goal.Name = "Goal"
    force = rlNumericSpec([1, 1], LowerLimit=-1, UpperLimit=1)
    force.Name = "Force"
    return [state, goal], force


def reach_reset(rng: np.random.Generator) -> Tuple[list, dict]:
    rand = octave_rand(rng)
    Position = 2 * rand.random_sample() - 1
    Goal = 2 * rand.random_sample() - 1
    LoggedSignals = {"State": np.array([[Position], [0.0]]), "Goal": Goal, "Steps": 0.0}
    return [LoggedSignals["State"].copy(), Goal], LoggedSignals


def reach_step(Action: Any, LoggedSignals: dict) -> Tuple[list, float, bool, dict]:
    Ts, Friction = 0.05, 0.5
    Force = float(np.asarray(Action).reshape(()))
    Position, Velocity = LoggedSignals["State"][0, 0], LoggedSignals["State"][1, 0]
    Acceleration = Force - Friction * Velocity
    Velocity = Velocity + Ts * Acceleration
    Position = Position + Ts * Velocity
    Goal = LoggedSignals["Goal"]
    State = np.array([[Position], [Velocity]])
    Distance = abs(Position - Goal)
    Reward = -Distance - 0.01 * Force**2
    AtGoal = bool(Distance < 0.05 and abs(Velocity) < 0.1)
    IsDone = AtGoal or bool(abs(Position) > 2)
    if AtGoal:
        Reward = Reward + 10
    Info = {"State": State, "Goal": Goal, "Steps": LoggedSignals["Steps"] + 1}
    return [State.copy(), Goal], float(Reward), IsDone, Info


def make_m_reach(MaxStepsPerEpisode: Optional[int] = 200, **kwargs: Any) -> Env:
    """The reach task from its ``.m`` files, run by Octave."""
    obsInfo, actInfo = reach_specs()
    step, reset = os.path.join(EXAMPLES, "reach_step.m"), os.path.join(EXAMPLES, "reach_reset.m")
    env: Env = rlFunctionEnv(obsInfo, actInfo, step, reset, **kwargs)
    return TimeLimit(env, MaxStepsPerEpisode) if MaxStepsPerEpisode else env


def make_py_reach(MaxStepsPerEpisode: Optional[int] = 200) -> Env:
    """The reach task's Python port."""
    obsInfo, actInfo = reach_specs()
    env: Env = rlFunctionEnv(obsInfo, actInfo, reach_step, reach_reset)
    env.cross_era_ulps = CROSS_ULPS  # type: ignore[attr-defined]
    return TimeLimit(env, MaxStepsPerEpisode) if MaxStepsPerEpisode else env

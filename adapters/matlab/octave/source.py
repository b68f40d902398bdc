"""``path/to/createEnv.m`` as an env source for every command (``envbridge check/conform/train``,
``bridge.make``-style resolvers): the MATLAB function that creates the env, run as it is.

The file is a MATLAB function of no inputs that returns ``rlFunctionEnv(ObservationInfo,
ActionInfo, StepFcn, ResetFcn)``, the code a MATLAB user already has::

    function env = createCartPoleEnv()
    ObservationInfo = rlNumericSpec([4 1]);
    ObservationInfo.Name = "CartPole States";
    ActionInfo = rlFiniteSetSpec([-10 10]);
    env = rlFunctionEnv(ObservationInfo, ActionInfo, "cartpole_step", "cartpole_reset");
    end

Octave runs it once with stand-ins for ``rlNumericSpec``, ``rlFiniteSetSpec`` and ``rlFunctionEnv``
(``host/shims/``) that return structs; the specs, the functions' text and the variables an anonymous
function captured (``EnvConstants``) come back as plain data, and the env is built from them here.
The file's folder goes on the MATLAB path (as MATLAB's ``run`` makes it the current folder).
``MaxStepsPerEpisode=N`` (a make kwarg, ``--kwarg`` on the command line) wraps it in a TimeLimit.
"""

from __future__ import annotations

import os
from typing import Any, List, Optional

import numpy as np
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.function_env import rlFunctionEnv
from bridge.adapters.matlab.octave import session as _session
from bridge.adapters.matlab.octave.names import addpath
from bridge.adapters.matlab.specs import rlNumericSpec

from bridge.env import Env, TimeLimit
from bridge.errors import ContractError, SpecError, error

__all__ = ["from_m_file"]


def from_m_file(path: str, MaxStepsPerEpisode: Optional[int] = None, **kwargs: Any) -> Env:
    """The env the MATLAB function in ``path`` creates (see the module docstring); ``kwargs`` go to
    :class:`rlFunctionEnv` (``timeout``, ``determinism``, ...)."""
    folder, name = _located(path)
    made = _run(folder, name, path)
    if not isinstance(made, dict) or made.get("Kind") != "rlFunctionEnv":
        fix = "End it with: env = rlFunctionEnv(ObservationInfo, ActionInfo, StepFcn, ResetFcn)"
        raise error(SpecError, f"env file {path}", "return an rlFunctionEnv", _shown(made), fix)
    addpath(folder)
    observation = [_spec(s, path) for s in _items(made["ObservationInfo"])]
    action = [_spec(s, path) for s in _items(made["ActionInfo"])]
    workspace = made.get("Workspace") or {}
    env: Env = rlFunctionEnv(
        observation if len(observation) > 1 else observation[0],
        action if len(action) > 1 else action[0],
        made["StepFcn"],
        made["ResetFcn"],
        workspace=workspace if isinstance(workspace, dict) else {},
        **kwargs,
    )
    return TimeLimit(env, int(MaxStepsPerEpisode)) if MaxStepsPerEpisode else env


def _located(path: str) -> tuple:
    base = os.path.basename(path)
    if not os.path.isfile(path):
        raise error(SpecError, "env file", "exist", repr(path), "Check the path (relative to the current folder)")
    name = base[: -len(".m")]
    if not (name[:1].isalpha() and name.replace("_", "a").isalnum()):
        fix = "Rename the file to a valid MATLAB function name (a letter, then letters, digits, _)"
        raise error(SpecError, "env file", "be named as a MATLAB function", repr(base), fix)
    return os.path.dirname(os.path.abspath(path)), name


def _run(folder: str, name: str, path: str) -> Any:
    """Run the creating function in a short-lived Octave session (closed whatever happens)."""
    octave = _session.OctaveSession(f"env file {path}")
    try:
        status, reply = octave.call(_session.CREATE, _session.values.pack({"folder": folder, "name": name}), "create")
        if status == _session.RAISED:
            fix = "Fix the error in the file (Octave ran it with envbridge's rlNumericSpec, rlFiniteSetSpec, "
            fix += "rlFunctionEnv)"
            raise error(ContractError, f"env file {path}", "run without error", str(octave.raised(reply)), fix)
        return _session.values.unpack(reply, f"what {path} returned")
    finally:
        octave.close()


def _items(value: Any) -> List[Any]:
    if isinstance(value, dict) and "@struct" in value:
        return list(value["@struct"])
    return list(value) if isinstance(value, list) else [value]


def _spec(value: Any, path: str) -> Any:
    if not isinstance(value, dict) or value.get("Kind") not in ("numeric", "finite"):
        fix = "Build it with rlNumericSpec(...) or rlFiniteSetSpec(...)"
        raise error(SpecError, f"env file {path} spec", "be an rlNumericSpec or rlFiniteSetSpec", _shown(value), fix)
    if value["Kind"] == "finite":
        elements = value["Elements"]
        if isinstance(elements, np.ndarray) and (elements.ndim == 2 and 1 in elements.shape):
            elements = elements.reshape(-1).tolist()  # a row or column of numbers: scalar elements
        spec: Any = rlFiniteSetSpec(elements if isinstance(elements, list) else [elements])
    else:
        dims = [int(d) for d in np.asarray(value["Dimension"]).reshape(-1)]
        spec = rlNumericSpec(dims, LowerLimit=_limit(value["LowerLimit"]), UpperLimit=_limit(value["UpperLimit"]))
        spec.DataType = value["DataType"]
    spec.Name, spec.Description = value.get("Name") or "", value.get("Description") or ""
    return spec


def _limit(value: Any) -> Any:
    return value if isinstance(value, float) else np.asarray(value, dtype=np.float64)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

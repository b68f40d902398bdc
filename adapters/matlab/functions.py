"""The user's functions as the facade calls them: resolved, their outputs counted and converted.

``resolve_function`` takes a callable or a ``"module:function"`` string; ``accepts_rng`` finds an
``rng`` parameter (it receives the env's Generator); ``outputs`` checks the number of outputs;
``to_reward`` / ``to_done`` (and the batched forms) convert MATLAB scalars to Python values.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Sequence

import numpy as np
from bridge.adapters.matlab.datatypes import same_size
from bridge.adapters.matlab.octave import names

from bridge.errors import ContractError, SpecError, error
from bridge.spaces import _describe_value

_FLOAT64, _BOOL = np.dtype(np.float64), np.dtype(np.bool_)  # builtin dtypes are singletons: `is` tests

__all__ = [
    "resolve_function",
    "is_matlab",
    "hosted",
    "accepts_rng",
    "outputs",
    "to_reward",
    "to_done",
    "to_rewards",
    "to_dones",
]


def resolve_function(fcn: Any, prop: str) -> Any:
    """A callable (lambda, function, ``functools.partial``), a ``"module:function"`` string, or MATLAB
    text (a .m function's name or path, or handle text): an :class:`~bridge.adapters.matlab.octave.names.MFunction`."""
    if callable(fcn):
        return fcn
    if names.is_matlab_text(fcn):
        return names.MFunction(fcn, prop)
    if isinstance(fcn, str) and fcn.count(":") == 1:
        module, name = fcn.split(":")
        try:
            found = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as e:
            raise error(
                SpecError,
                prop,
                'name an importable function as "module:function"',
                fcn,
                f"Check the module and function names ({type(e).__name__}: {e})",
            ) from e
        if callable(found):
            return found
    raise error(
        SpecError,
        prop,
        'be a callable or a "module:function" string',
        _describe_value(fcn),
        "Pass e.g. my_step, functools.partial(my_step, params=p) or 'mypkg.cartpole:step'",
    )


def is_matlab(fn: Any) -> bool:
    """True for a function resolved from MATLAB text (it runs in Octave)."""
    return isinstance(fn, names.MFunction)


def hosted(
    step: Any, reset: Any, obs_specs: Any, act_specs: Any, workspace: Any, timeout: Any, num_envs: Any = None
) -> Any:
    """The Octave session that runs ``.m`` step and reset functions (both must be MATLAB); with
    ``num_envs``, that many instances of them for rlFunctionVectorEnv."""
    from bridge.adapters.matlab.octave.batch import OctaveBatch  # starts processes: loaded when used
    from bridge.adapters.matlab.octave.runner import OctaveFunctions

    python = [p for p, f in (("StepFcn", step), ("ResetFcn", reset)) if not is_matlab(f)]
    if python:
        raise error(
            SpecError,
            f"rlFunctionEnv {python[0]}",
            "be a .m function too (both run in one Octave session, where LoggedSignals lives)",
            "a Python function",
            "Pass both as .m functions, or both as Python functions",
        )
    if num_envs is not None:
        return OctaveBatch(step, reset, obs_specs, act_specs, workspace, timeout, num_envs)
    return OctaveFunctions(step, reset, obs_specs, act_specs, workspace, timeout)


def accepts_rng(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` has a parameter named ``rng`` (it then receives ``env.np_random``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return any(p.name == "rng" and p.kind in kinds for p in params)


def outputs(out: Any, fcn: str, names: Sequence[str]) -> tuple:
    """Check that a user function returned ``len(names)`` outputs (a Python tuple)."""
    if isinstance(out, tuple) and len(out) == len(names):
        return out
    count = f"{len(out)} outputs" if isinstance(out, tuple) else f"1 output ({type(out).__name__})"
    snake = ", ".join(_snake(n) for n in names)
    raise error(
        ContractError, fcn, f"return {len(names)} outputs ({', '.join(names)})", count, f"End it with: return {snake}"
    )


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


def to_reward(value: Any, subject: str = "StepFcn output Reward") -> float:
    """A real numeric scalar (MATLAB 1x1) -> Python float."""
    if type(value) is float:
        return value
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return float(value.reshape(()))
    raise error(
        ContractError,
        subject,
        "be a real numeric scalar",
        _describe_value(value),
        "Return one number, e.g. float(reward)",
    )


def to_done(value: Any, subject: str = "StepFcn output IsDone") -> bool:
    """A scalar logical (True/False, or integer 0/1) -> Python bool."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if (
        isinstance(value, (int, np.integer, np.ndarray))
        and np.size(value) == 1
        and np.asarray(value).dtype.kind in "biu"
    ):
        flag = np.asarray(value).reshape(()).item()
        if flag in (0, 1):
            return bool(flag)
    raise error(
        ContractError,
        subject,
        "be a scalar logical (True or False; 0 or 1 also accepted)",
        _describe_value(value),
        "Return one logical, e.g. bool(abs(x) > 2.4)",
    )


def to_rewards(value: Any, n: int, subject: str = "StepFcn output Reward") -> np.ndarray:
    """A batch of ``n`` rewards -> float64 array of shape (n,) (a copy: the user's buffer may change later)."""
    if type(value) is np.ndarray and value.dtype is _FLOAT64 and value.shape == (n,):
        return value.copy()  # the common case (see vector_env.step_envs for the figure)
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if arr is None or arr.dtype.kind not in "iuf" or not same_size(arr.shape, (n,)):
        raise error(
            ContractError,
            subject,
            f"be {n} real numbers (one per instance)",
            _describe_value(value),
            "Return an array of shape (NumEnv,)",
        )
    return arr.reshape(n).astype(np.float64)


def to_dones(value: Any, n: int, subject: str = "StepFcn output IsDone") -> np.ndarray:
    """A batch of ``n`` logicals -> bool array of shape (n,) (a copy)."""
    if type(value) is np.ndarray and value.dtype is _BOOL and value.shape == (n,):
        return value.copy()
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    ok = arr is not None and arr.dtype.kind in "biu" and same_size(arr.shape, (n,))
    if ok and arr.dtype.kind != "b":
        ok = bool(((arr == 0) | (arr == 1)).all())
    if not ok:
        raise error(
            ContractError,
            subject,
            f"be {n} logicals (one per instance)",
            _describe_value(value),
            "Return a bool array of shape (NumEnv,)",
        )
    return arr.reshape(n).astype(bool)

"""The MATLAB export: any neutral env seen as MATLAB sees an environment object.

``to_matlab(env)`` gives a :class:`MatlabEnv`, declared on the Export base: ``reset()`` returns the
InitialObservation and ``step(Action)`` returns ``(NextObservation, Reward, IsDone, Info)``, all in
MATLAB values (finite-set element values, a list of channels, [4 1] columns, logical arrays).
``sim`` and the "matlab" conformance view run through it. An rlFunctionEnv's lowering is its
own specs (:func:`own_lowering`); any other env is described (:func:`lower`) by ``getObservationInfo`` /
``getActionInfo`` and mapped onto those specs (a Discrete start, a Tuple of channels, a scalar Box
as [1 1]) exactly both ways.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from bridge.adapters._shared.export import Export
from bridge.adapters._shared.lowering import Lowering, role
from bridge.adapters.matlab.describe import specs_from_space
from bridge.adapters.matlab.function_env import unwrap_function_env
from bridge.adapters.matlab.lowering import MatlabLowering, specs_lowering

from bridge import spaces
from bridge.env import Env

__all__ = ["MatlabEnv", "to_matlab", "lower", "own_lowering"]

Fn = Callable[[Any], Any]


def lower(space: spaces.Space, *, path: str, options: Dict[str, Any]) -> MatlabLowering:
    """The MATLAB lowering of a neutral ``space`` (the protocol's one constructor shape): the specs
    ``getObservationInfo`` / ``getActionInfo`` describe, mapped exactly both ways (a Discrete start,
    a Tuple of channels, a scalar Box as [1 1]). No option changes a MATLAB value."""
    role = "action" if path.startswith("action") else "observation"
    described = specs_from_space(space, role)
    specs = described if isinstance(described, list) else [described]
    if role == "observation" and isinstance(space, (spaces.Dict, spaces.Tuple)):
        keys = [s.Name or f"obs{i + 1}" for i, s in enumerate(specs)]
        parts = list(space.spaces.values()) if isinstance(space, spaces.Dict) else list(space)
        to_facade, from_facade = _channels(space, parts, keys)
    elif role == "action" and isinstance(space, spaces.Tuple):
        keys = None
        (a, a_back), (b, b_back) = _leaf(space[0]), _leaf(space[1])
        to_facade = lambda x: (a(x[0]), b(x[1]))  # noqa: E731
        from_facade = lambda y: (a_back(y[0]), b_back(y[1]))  # noqa: E731
    else:
        keys = None
        to_facade, from_facade = _leaf(space)
    facade_space: spaces.Space = (
        spaces.Dict([(k, s.to_space()) for k, s in zip(keys, specs)])
        if keys is not None
        else spaces.Tuple([s.to_space() for s in specs])
        if len(specs) > 1
        else specs[0].to_space()
    )
    matlab = specs_lowering(facade_space, specs, keys, role)
    encode, convert = matlab.encode, matlab.convert
    return MatlabLowering(
        space,
        facade_space,
        matlab.specs,
        lambda x: encode(to_facade(x)),
        lambda y, subject: from_facade(convert(y, subject)),
        role,
    )


def own_lowering(env: Env, role: str) -> Optional[MatlabLowering]:
    """An rlFunctionEnv's own lowering of ``role`` when ``env`` (wrappers such as TimeLimit keep
    its spaces) presents its spaces unchanged, else None."""
    function_env = unwrap_function_env(env)
    own = None if function_env is None else getattr(function_env, f"{role}_lowering")
    space = env.observation_space if role == "observation" else env.action_space
    return own if own is not None and own.source == space else None


def _leaf(space: spaces.Space) -> Tuple[Fn, Fn]:
    """Neutral leaf value <-> the value of the spec that describes it (exact both ways)."""
    if isinstance(space, spaces.Discrete):
        start = space.start
        return (lambda v: np.int64(int(v) - start)), (lambda i: np.int64(int(i) + start))
    if isinstance(space, spaces.Box) and space.shape == ():
        return (lambda v: np.reshape(v, (1, 1))), (lambda y: np.reshape(y, ()))  # MATLAB's [1 1]
    return (lambda v: v), (lambda y: y)


def _channels(space: spaces.Space, parts: List[spaces.Space], keys: List[str]) -> Tuple[Fn, Fn]:
    """A Dict or Tuple observation <-> the facade's dict of channels."""
    leaves = [_leaf(p) for p in parts]
    names = list(space.keys()) if isinstance(space, spaces.Dict) else None

    def to_facade(x: Any) -> dict:
        values = [x[k] for k in names] if names is not None else list(x)
        return {key: enc(v) for key, (enc, _), v in zip(keys, leaves, values)}

    def from_facade(y: dict) -> Any:
        values = [back(y[key]) for key, (_, back) in zip(keys, leaves)]
        return dict(zip(names, values)) if names is not None else tuple(values)

    return to_facade, from_facade


class MatlabEnv(Export):
    """A neutral env behind MATLAB's environment-object API (build it with :func:`to_matlab`).

    Attributes:
        neutral: the neutral env; observation_lowering, action_lowering: its MATLAB lowerings.
        last_flags: the neutral ``(terminated, truncated)`` of the last step (MATLAB has one IsDone).
    """

    runtime = "matlab"
    export_name = "to_matlab"
    label = "MATLAB env"

    def lower(self, space: spaces.Space, *, path: str, options: Dict[str, Any]) -> Lowering:
        """An rlFunctionEnv's own lowering (its specs) where it presents its spaces unchanged, else :func:`lower`."""
        return own_lowering(self.neutral, role(path)) or lower(space, path=path, options=options)

    def present(self) -> None:
        self.last_flags: Tuple[bool, bool] = (False, False)

    @property
    def observationInfo(self) -> Any:
        """Copies of the observation specs (one spec, or a list of channels)."""
        return copy.deepcopy(self.observation_lowering.specs)

    @property
    def actionInfo(self) -> Any:
        """Copies of the action specs (one spec, or [rlFiniteSetSpec, rlNumericSpec])."""
        return copy.deepcopy(self.action_lowering.specs)

    def reset(self, seed: Optional[int] = None) -> Any:
        """``InitialObservation = reset(env)``; ``seed`` seeds the env's Generator."""
        return super().reset(seed=seed)[0]

    def step(self, Action: Any) -> Tuple[Any, float, bool, dict]:
        """``[NextObservation, Reward, IsDone, Info] = step(env, Action)``; IsDone is terminated or
        truncated (both are in ``last_flags``). An Action that is not a value of the specs raises
        ContractError before the env moves."""
        obs, reward, terminated, truncated, info = super().step(Action)
        self.last_flags = (terminated, truncated)
        return obs, reward, terminated or truncated, info


def to_matlab(env: Any, **options: Any) -> MatlabEnv:
    """Export ``env`` (a bridge.Env, an rlFunctionEnv, or anything the env resolver takes) to
    MATLAB's env API. Options (docs/options.md): ``check_actions``, ``strict``, ``max_episode_steps``."""
    return MatlabEnv.build(env, options)

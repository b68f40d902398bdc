"""``rlFunctionEnv``: an environment from a MATLAB-style step function and reset function.

The result is a :class:`bridge.Env`, so every export takes it as it is. The user's functions work
in MATLAB values (finite-set actions arrive as the element VALUE, a hybrid action as
``[element, array]``, several observation channels as a list); the facade converts at the
boundary to neutral values (Discrete index, Box array of the spec's dtype, Dict of channels).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
from bridge.adapters.matlab import functions
from bridge.adapters.matlab.checks import FUNCTION_WHERE, validate_once
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.lowering import specs_lowering
from bridge.adapters.matlab.specs import rlNumericSpec

from bridge import spaces
from bridge.env import Env
from bridge.errors import BridgeError, ContractError, SpecError, error
from bridge.guard import CLOSED, RUNNING, Guarded
from bridge.spaces import _describe_value
from bridge.workers import DEFAULT_TIMEOUT

__all__ = ["rlFunctionEnv"]

STEP_OUTPUTS = ("NextObservation", "Reward", "IsDone", "Info")
RESET_OUTPUTS = ("InitialObservation", "Info")


def spec_kind(spec: Any) -> Optional[str]:
    """ "numeric", "finite", or None for anything that is not a MATLAB spec."""
    if isinstance(spec, rlNumericSpec):
        return "numeric"
    if isinstance(spec, rlFiniteSetSpec):
        return "finite"
    return None


def observation_channels(observationInfo: Any) -> Tuple[List[Any], Optional[List[str]]]:
    """Copies of the observation specs, and the Dict keys when there are several channels."""
    many = isinstance(observationInfo, (list, tuple))
    specs = list(observationInfo) if many else [observationInfo]
    if not specs or any(spec_kind(s) is None for s in specs):
        raise error(
            SpecError,
            "observationInfo",
            "be an rlNumericSpec, an rlFiniteSetSpec or a non-empty list of them",
            _describe_value(observationInfo),
            "Build it with rlNumericSpec([4, 1]) or rlFiniteSetSpec([...])",
        )
    specs = [copy.deepcopy(s) for s in specs]  # later edits to the caller's specs must not desync the spaces
    if not many:
        return specs, None
    keys = [s.Name or f"obs{i + 1}" for i, s in enumerate(specs)]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise error(
            SpecError,
            "observationInfo Names",
            "be distinct (they key the Dict observation)",
            repeated,
            "Give every channel its own Name",
        )
    return specs, keys


def action_channels(actionInfo: Any) -> List[Any]:
    """Copies of the action specs: one spec, or [rlFiniteSetSpec, rlNumericSpec] for a hybrid."""
    specs = list(actionInfo) if isinstance(actionInfo, (list, tuple)) else [actionInfo]
    kinds = [spec_kind(s) for s in specs]
    if kinds not in (["numeric"], ["finite"], ["finite", "numeric"]):
        raise error(
            SpecError,
            "actionInfo",
            "be one rlNumericSpec, one rlFiniteSetSpec, or [rlFiniteSetSpec, rlNumericSpec] (hybrid)",
            _describe_value(actionInfo),
            "MATLAB allows one action channel, or two for a hybrid action",
        )
    return [copy.deepcopy(s) for s in specs]


def channels_space(specs: List[Any], keys: Optional[List[str]]) -> spaces.Space:
    if keys is None:
        return specs[0].to_space()
    return spaces.Dict([(k, s.to_space()) for k, s in zip(keys, specs)])


def action_space_of(specs: List[Any]) -> spaces.Space:
    return specs[0].to_space() if len(specs) == 1 else spaces.Tuple([s.to_space() for s in specs])


def spec_copies(specs: List[Any], as_list: bool) -> Any:
    """Copies of ``specs`` as MATLAB hands them back: a list, or the one spec."""
    copies = [copy.deepcopy(s) for s in specs]
    return copies if as_list else copies[0]


class rlFunctionEnv(Guarded, Env):
    """A custom environment from your step and reset functions, as MATLAB's ``rlFunctionEnv``.

    Args:
        observationInfo: an rlNumericSpec / rlFiniteSetSpec, or a list of them (a Dict
            observation keyed by each spec's Name, falling back to "obs1", "obs2", ...).
        actionInfo: one spec, or ``[rlFiniteSetSpec, rlNumericSpec]`` for a hybrid action (a
            neutral ``Tuple(Discrete, Box)``).
        stepFcn: ``stepFcn(Action, Info) -> (NextObservation, Reward, IsDone, Info)``.
        resetFcn: ``resetFcn() -> (InitialObservation, Info)``.
            Either may be a callable (lambda, ``functools.partial`` with extra parameters) or a
            ``"module:function"`` string; a parameter named ``rng`` receives ``env.np_random``.
            Or both are MATLAB ``.m`` functions, run by GNU Octave: a function name on the MATLAB
            path (``bridge.adapters.matlab.addpath``), a ``path/to/file.m`` or MATLAB handle text
            such as ``"@(Action,LoggedSignals) myStepFunction(Action,LoggedSignals,EnvConstants)"``
            (see bridge.adapters.matlab.octave.names for which wins; docs/matlab.md).
        check_actions: validate each action against the action space (cheap); False skips it.
        determinism: the snapshot promise; "strong" holds when the functions depend only on their
            inputs (Action, Info, rng), as MATLAB's contract asks.
        validate: run :func:`validateEnvironment` now, as MATLAB does at creation.
        workspace: (.m functions) the variables MATLAB handle text uses, as plain data
            (``{"EnvConstants": {...}}``).
        timeout: (.m functions) seconds one call into Octave may take before it counts as hung.

    ``IsDone`` becomes ``terminated``; the env never truncates by itself: wrap it in
    ``bridge.TimeLimit(env, MaxStepsPerEpisode)`` (or register it with ``max_episode_steps``).

    It guards itself as an export does (:class:`bridge.guard.Guarded`: lifecycle, user exceptions
    named with the step, actions checked), alone or under an export, where both check (cheaply; pass
    ``check_actions=False`` to leave the action check to the export).
    """

    metadata = {"render_modes": [], "render_fps": None}
    label = "rlFunctionEnv"
    authoring = "matlab-function"  # check fixes speak of Info, rng and the functions

    def __init__(
        self,
        observationInfo: Any,
        actionInfo: Any,
        stepFcn: Any,
        resetFcn: Any,
        *,
        check_actions: bool = True,
        determinism: str = "strong",
        validate: bool = True,
        workspace: Optional[dict] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
    ) -> None:
        self._host: Any = None  # the Octave session of .m functions (see bridge.adapters.matlab.octave)
        self._obs_specs, self._obs_keys = observation_channels(observationInfo)
        self._act_specs = action_channels(actionInfo)
        self.observation_space = channels_space(self._obs_specs, self._obs_keys)
        self.action_space = action_space_of(self._act_specs)
        self.determinism = determinism
        self.check_actions = bool(check_actions)
        # the facade's neutral values <-> the MATLAB values of the specs
        self.observation_lowering = specs_lowering(
            self.observation_space, self._obs_specs, self._obs_keys, "observation"
        )
        self.action_lowering = specs_lowering(self.action_space, self._act_specs, None, "action")
        self._encode_action, self._convert_observation = self.action_lowering.encode, self.observation_lowering.convert
        self.StepFcn = stepFcn
        self.ResetFcn = resetFcn
        self.Info: Any = None
        self._start_lifecycle()  # lifecycle and user exceptions with context (bridge.guard)
        if functions.is_matlab(self._step_fn) or functions.is_matlab(self._reset_fn):
            self._host = functions.hosted(
                self._step_fn, self._reset_fn, self._obs_specs, self._act_specs, workspace, timeout
            )
            self._step_fn, self._step_rng = self._host.step, False
            self._reset_fn, self._reset_rng = self._host.reset, True
        if validate:
            try:
                validate_once(self, FUNCTION_WHERE, self.keep_moment)
            except BaseException:
                self.close()  # a refused env leaves no Octave running
                raise

    # -- MATLAB properties -----------------------------------------------------------------------
    @property
    def StepFcn(self) -> Any:
        """The step function as given (callable or "module:function")."""
        return self._step_given

    @StepFcn.setter
    def StepFcn(self, value: Any) -> None:
        fn = functions.resolve_function(value, "rlFunctionEnv StepFcn")
        if self._host is not None:  # .m functions: the Octave session runs the new one
            self._host.rebind("StepFcn", fn)
            self._step_given = value
            return
        self._step_given, self._step_fn, self._step_rng = value, fn, functions.accepts_rng(fn)

    @property
    def ResetFcn(self) -> Any:
        """The reset function as given (callable or "module:function")."""
        return self._reset_given

    @ResetFcn.setter
    def ResetFcn(self, value: Any) -> None:
        fn = functions.resolve_function(value, "rlFunctionEnv ResetFcn")
        if self._host is not None:  # .m functions: the Octave session runs the new one
            self._host.rebind("ResetFcn", fn)
            self._reset_given = value
            return
        self._reset_given, self._reset_fn, self._reset_rng = value, fn, functions.accepts_rng(fn)

    @property
    def engine(self) -> str:
        """What runs the step (a tape records it: bridge.conformance.machine): "GNU Octave <version>"
        for .m functions, else "Python"."""
        return "Python" if self._host is None else f"GNU Octave {self._host.session.version}"

    observationInfo = property(lambda self: spec_copies(self._obs_specs, self._obs_keys is not None))
    observationInfo.__doc__ = "Copies of the observation specs (one spec, or a list)."
    actionInfo = property(lambda self: spec_copies(self._act_specs, len(self._act_specs) > 1))
    actionInfo.__doc__ = "Copies of the action specs (one spec, or a list for a hybrid action)."

    # -- the Env API ---------------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        return self._guarded_reset(self._reset, seed, None, None)  # the output is built here, from converted values

    def step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        """``StepFcn(Action, Info)`` on the MATLAB value of ``action``; its outputs converted and
        checked (a failed step changes nothing: Info is committed last)."""
        if self._lifecycle is not RUNNING:
            self._misuse()
        if self.check_actions:
            self._check_action(action)
        try:
            out = self._step(action)
        except BridgeError:
            self._end(f"an exception at step {self._steps + 1}")
            raise
        except Exception as e:
            raise self._user_exception(e) from e
        self._steps += 1
        if out[2]:
            self._end_step(True)
        return out

    def close(self) -> None:
        self._lifecycle = CLOSED
        if self._host is not None:
            self._host.close()

    def _reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[Any, dict]:
        if seed is not None:  # Env.reset does nothing else
            super().reset(seed=seed)
        out = self._reset_fn(rng=self.np_random) if self._reset_rng else self._reset_fn()
        if type(out) is not tuple or len(out) != 2:  # the common case without a call
            out = functions.outputs(out, "ResetFcn", RESET_OUTPUTS)
        observation, info = out
        neutral = self.observation_lowering.convert(observation, "ResetFcn output InitialObservation")
        self.Info = info
        return neutral, {}

    def _step(self, action: Any) -> Tuple[Any, float, bool, bool, dict]:
        # the common cases (a 4-tuple, a float reward, a bool IsDone) are tested inline, not by a call
        # each (with the reset's 2-tuple): +1.7k instr/step, 2.8 % of the rlFunctionEnv cart-pole step
        # (benchmarks/bench_matlab.py --instructions)
        value = self._encode_action(action)
        out = self._step_fn(value, self.Info, rng=self.np_random) if self._step_rng else self._step_fn(value, self.Info)
        if type(out) is not tuple or len(out) != 4:
            out = functions.outputs(out, "StepFcn", STEP_OUTPUTS)
        observation, reward, is_done, info = out
        neutral = self._convert_observation(observation, "StepFcn output NextObservation")
        if type(reward) is not float:
            reward = functions.to_reward(reward)
        if reward - reward != 0.0:  # NaN or inf: refused before Info is committed
            raise error(
                ContractError,
                "StepFcn output Reward",
                "be finite",
                reward,
                "Guard the reward computation against NaN and inf",
            )
        if is_done is not True and is_done is not False:
            is_done = functions.to_done(is_done)
        self.Info = info  # committed only once every output converted: a failed step changes nothing
        return neutral, reward, is_done, False, {}

    def _check_action(self, a: Any) -> None:
        """The common action types tested inline (Discrete: an index type in range; Box: an array
        of the space's dtype and shape within bounds), anything else by the space's own check:
        +4.0k instr/step, 6.8 % of the rlFunctionEnv cart-pole step against the space's check alone
        (benchmarks/bench_matlab.py --instructions)."""
        space = self.action_space
        if type(space) is spaces.Discrete:
            if type(a) in _INDEX_TYPES and space.start <= a < space.start + space.n:
                return
        elif type(space) is spaces.Box:
            if (
                type(a) is np.ndarray
                and a.dtype == space.dtype
                and a.shape == space.shape
                and bool((a >= space.low).all() and (a <= space.high).all())
            ):
                return
        elif space.contains(a):
            return
        self._refuse_action(a)

    def _refuse_action(self, action: Any) -> None:
        found = self.action_space.mismatch(action, "action")
        if found is None:
            return  # the fast check is stricter than the space for exotic integer types
        subject, expectation, actual, fix = found
        if isinstance(self._act_specs[0], rlFiniteSetSpec) and isinstance(self.action_space, spaces.Discrete):
            expectation = f"{expectation} (an index into the rlFiniteSetSpec Elements {self._act_specs[0].Elements!r})"
            fix = "Pass the element's index; env.to_neutral_action(value) converts an element value"
        raise error(ContractError, subject, expectation, actual, fix)

    # -- MATLAB values <-> neutral values --------------------------------------------------------
    def to_matlab_observation(self, observation: Any) -> Any:
        """Neutral observation -> what a MATLAB policy sees (element values; a list of channels)."""
        return self.observation_lowering.encode(observation)

    def to_matlab_action(self, action: Any) -> Any:
        """Neutral action -> the value the step function receives."""
        return self.action_lowering.encode(action)

    def to_neutral_action(self, value: Any) -> Any:
        """MATLAB action value (an element of an rlFiniteSetSpec, an array, ...) -> neutral action."""
        return self.action_lowering.convert(value, "action")

    def keep_moment(self) -> Callable[[], None]:
        """A function that puts Info and the lifecycle back to this moment (for validation)."""
        info = copy.deepcopy(self.Info)

        def restore() -> None:
            self.Info = info
            self._restart()

        return restore

    # -- snapshots: Info is the state (MATLAB's EnvData / LoggedSignals) ------------------------
    def get_state(self) -> Any:
        if self._host is not None:  # LoggedSignals and Octave's generators, from Octave
            return self._host.get_state(self.Info)
        return {"Info": plain_copy(self.Info, "rlFunctionEnv Info")}

    def set_state(self, state: Any) -> None:
        if self._host is not None:
            self.Info = self._host.set_state(state)
        else:
            self.Info = plain_copy(state["Info"], "rlFunctionEnv Info")
        self._restart()  # a restored snapshot is a running episode

    def __repr__(self) -> str:
        name = lambda f: f if isinstance(f, str) else getattr(f, "__name__", type(f).__name__)  # noqa: E731
        return f"<rlFunctionEnv StepFcn={name(self._step_given)} ResetFcn={name(self._reset_given)}>"


_INDEX_TYPES = (int, np.int64, np.int32)


def plain_copy(tree: Any, path: str) -> Any:
    """A deep copy of plain data (dict with str keys, list, tuple, ndarray, numbers, str, None)."""
    if isinstance(tree, np.ndarray):
        if tree.dtype.kind not in "biufcUS":
            raise error(
                ContractError,
                path,
                "hold plain data to be snapshotted",
                f"an ndarray of dtype {tree.dtype}",
                "Keep numeric arrays in Info",
            )
        return tree.copy()
    if isinstance(tree, dict):
        bad = [k for k in tree if not isinstance(k, str)]
        if bad:
            raise error(
                ContractError,
                f"{path} keys",
                "be str to be snapshotted",
                repr(bad[0]),
                "Use string keys (MATLAB struct field names)",
            )
        return {k: plain_copy(v, f"{path}[{k!r}]") for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(plain_copy(v, f"{path}[{i}]") for i, v in enumerate(tree))
    if tree is None or isinstance(tree, (bool, int, float, str, np.generic)):
        return tree
    raise error(
        ContractError,
        path,
        "be plain data (dict, list, tuple, ndarray, number, str, bool or None) to be snapshotted",
        type(tree).__name__,
        "Keep simulation state in Info as plain data and objects outside it (e.g. in a functools.partial)",
    )


def unwrap_function_env(env: Any) -> Optional[rlFunctionEnv]:
    """The rlFunctionEnv under wrappers, or None."""
    inner = getattr(env, "unwrapped", env)
    return inner if isinstance(inner, rlFunctionEnv) else None

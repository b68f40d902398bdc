"""An rlFunctionEnv's ``.m`` step and reset functions, run in one Octave session, as the facade calls
Python ones: ``step(Action, Info) -> (NextObs, Reward, IsDone, Info)`` and ``reset(rng) ->
(InitialObservation, Info)``.

``Info`` here is a :class:`LoggedSignals` token: the struct itself stays in Octave, and the token
says which one it is. The facade keeps the token of the last accepted step; a step whose outputs
the facade refuses leaves the old token in place, and the next step first puts Octave's
LoggedSignals back (one level of undo, kept in Octave). A deep copy of a token (the facade's
validation keeps a moment that way) carries the struct as plain data; stepping from it puts it
back into Octave. Snapshots cross as plain data (:mod:`values`) with Octave's generator states.

Seeding: every reset seeds Octave's ``rand``/``randn``/``rande``/``randg``/``randp`` from two words
drawn from the env's Generator, so ``reset(seed=s)`` is reproducible and a snapshot (which holds
the Generator) replays resets too.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np
from bridge.adapters.matlab.finite_set import rlFiniteSetSpec
from bridge.adapters.matlab.octave import session as _session
from bridge.adapters.matlab.octave.names import MFunction, matlab_path
from bridge.adapters.matlab.octave.session import OctaveSession

from bridge.errors import ContractError, SpecError, error

__all__ = ["OctaveFunctions", "LoggedSignals", "seed_words"]

_FLOAT64 = np.float64
_SIGNATURES = {
    "StepFcn": (
        2,
        4,
        "[NextObs,Reward,IsDone,LoggedSignals] = {name}(Action,LoggedSignals)",
        "(Action, LoggedSignals)",
    ),
    "ResetFcn": (0, 2, "[InitialObservation,LoggedSignals] = {name}()", "no inputs"),
}


def seed_words(rng: np.random.Generator) -> np.ndarray:
    """The two words a reset seeds Octave's generators with (``rand("state", words)``); below
    2^32 - 1, which Octave takes as they are."""
    return rng.integers(0, 2**32 - 1, size=2, dtype=np.uint64)


class LoggedSignals:
    """Which LoggedSignals the facade holds: Octave's current one, or plain data to put back."""

    __slots__ = ("owner", "plain")

    def __init__(self, owner: OctaveFunctions, plain: Any = None) -> None:
        self.owner, self.plain = owner, plain

    def __deepcopy__(self, memo: dict) -> LoggedSignals:
        return LoggedSignals(self.owner, self.owner.fetch(self))

    def __reduce__(self) -> Any:
        raise error(
            ContractError,
            "LoggedSignals of an Octave-run rlFunctionEnv",
            "stay in its process",
            "a pickle",
            "Take a snapshot instead: env.clone_state() is plain data",
        )

    def __repr__(self) -> str:
        return "<LoggedSignals in Octave: env.get_state()['Info'] reads it>"


def _channel(spec: Any) -> Tuple[str, List[int], np.dtype]:
    """(MATLAB class, size, numpy dtype) of one channel's value as the step function returns it."""
    if isinstance(spec, rlFiniteSetSpec):
        shape = list(spec.shape) or [1, 1]
        return "double", shape + [1] * (2 - len(shape)), np.dtype(np.float64)
    return spec.DataType, list(spec.shape) + [1] * (2 - len(spec.shape)), spec.dtype


def _row(dims: List[int]) -> np.ndarray:
    return np.array([dims], dtype=np.float64)


def _check_workspace(fcn: MFunction, prop: str, workspace: Optional[dict]) -> None:
    """Every variable handle text uses besides its parameters must come with ``workspace=``."""
    missing = [name for name in fcn.free if name not in (workspace or {})]
    if missing:
        shown = ", ".join(f"{n!r}: ..." for n in missing)
        raise error(
            SpecError,
            f"rlFunctionEnv {prop} {fcn.given!r}",
            f"find {', '.join(missing)} in workspace=",
            f"workspace={sorted(workspace or {})!r}",
            f"Pass their values as plain data: rlFunctionEnv(..., workspace={{{shown}}})",
        )


class OctaveFunctions:
    """The session, the fixed step layout and the LoggedSignals tokens of one env."""

    def __init__(
        self,
        step: MFunction,
        reset: MFunction,
        obs_specs: List[Any],
        act_specs: List[Any],
        workspace: Optional[dict],
        timeout: Optional[float],
        num_envs: int = 1,
    ) -> None:
        if len(act_specs) != 1:
            raise error(
                SpecError,
                "rlFunctionEnv actionInfo",
                "be one spec for .m functions",
                "a hybrid [rlFiniteSetSpec, rlNumericSpec]",
                "Use one action channel, or port the functions to Python",
            )
        self.step_fcn, self.reset_fcn = step, reset
        _check_workspace(step, "StepFcn", workspace)
        _check_workspace(reset, "ResetFcn", workspace)
        channels = [_channel(s) for s in obs_specs]
        self.obs_layout = [
            (int(np.prod(dims)), tuple(dims), dtype, isinstance(s, rlFiniteSetSpec))
            for (_, dims, dtype), s in zip(channels, obs_specs)
        ]
        self.nobs = sum(n for n, _, _, _ in self.obs_layout)
        one = self.obs_layout[0] if len(self.obs_layout) == 1 else None
        self.plain = one[1] if one is not None and one[2] == np.float64 and not one[3] else None
        act_class, act_dims, _ = _channel(act_specs[0])
        self.num_envs, self.act_dims = num_envs, act_dims
        self.current: Any = LoggedSignals(self)
        self.previous: Any = None  # the token Octave can go back to with one undo
        folders = [f.folder for f in (step, reset) if f.folder] + matlab_path()
        spec = {
            "path": list(dict.fromkeys(folders)),
            "step": step.text,
            "reset": reset.text,
            "workspace": dict(workspace or {}),
            "obs_class": [c for c, _, _ in channels],
            "obs_dims": [_row(d) for _, d, _ in channels],
            "nobs": float(self.nobs),
            "act_class": act_class,
            "act_dims": _row(act_dims),
            "num_envs": float(num_envs),
        }
        self.spec = spec
        owner = "rlFunctionEnv" if type(self) is OctaveFunctions else "rlFunctionVectorEnv"
        self.session = OctaveSession(f"{owner} {step.name}", timeout)
        try:
            self._bind()
        except BaseException:
            self.session.close()
            raise

    def _bind(self) -> None:
        found = self.session.value(_session.BIND, self.spec, "bind", "rlFunctionEnv StepFcn and ResetFcn")
        self.session.block(int(np.prod(self.spec["act_dims"])))
        self._check_signature("StepFcn", self.step_fcn, found["step"])
        self._check_signature("ResetFcn", self.reset_fcn, found["reset"])

    def rebind(self, prop: str, fcn: Any) -> None:
        """``env.StepFcn = ...`` / ``env.ResetFcn = ...`` on a running env: another .m function."""
        if not isinstance(fcn, MFunction):
            raise error(
                SpecError,
                f"rlFunctionEnv {prop}",
                "be a .m function (this env runs its functions in Octave)",
                "a Python function",
                "Build a new rlFunctionEnv for Python functions",
            )
        _check_workspace(fcn, prop, self.spec["workspace"])
        key = "step" if prop == "StepFcn" else "reset"
        old = (self.step_fcn, self.reset_fcn, dict(self.spec))
        setattr(self, f"{key}_fcn", fcn)
        self.spec[key] = fcn.text
        if fcn.folder:
            self.spec["path"] = [fcn.folder] + list(self.spec["path"])
        try:
            self._bind()
        except BaseException:
            self.step_fcn, self.reset_fcn, self.spec = old
            self._bind()
            raise

    @staticmethod
    def _check_signature(prop: str, fcn: MFunction, found: dict) -> None:
        inputs, outputs, form, said = _SIGNATURES[prop]
        nin, nout = int(found["nargin"]), int(found["nargout"])
        where = f" ({fcn.file})"
        if nin >= 0 and nin != inputs:
            fix = f"Write it as: function {form.format(name=fcn.name)}"
            if prop == "StepFcn":
                fix += ", or pass extra parameters through a handle: " + (
                    f'"@(Action,LoggedSignals) {fcn.name}(Action,LoggedSignals,EnvConstants)"'
                )
            got = f"{nin} input{'s' if nin != 1 else ''}"
            raise error(SpecError, f"rlFunctionEnv {prop} {fcn.given}", f"take {said}", got + where, fix)
        if 0 <= nout < outputs:
            fix = f"Write it as: function {form.format(name=fcn.name)}"
            got = f"{nout} output{'s' if nout != 1 else ''}"
            raise error(SpecError, f"rlFunctionEnv {prop} {fcn.given}", f"return {outputs} outputs", got + where, fix)

    # -- the facade's calls --------------------------------------------------------------------
    def step(self, Action: Any, Info: Any) -> Tuple[Any, Any, Any, LoggedSignals]:
        if Info is not self.current:
            self._put_back(Info)
        # a finite-set element is a numpy float64 scalar: its own bytes, one call
        payload = Action.tobytes() if type(Action) is _FLOAT64 else np.asarray(Action, np.float64).tobytes("F")
        status, reply = self.session.step(payload)
        if status == _session.OK:
            data = self._doubles(reply, self.nobs + 2)
            done = float(data[-1])
            if done != 0.0 and done != 1.0:  # Octave tests IsDone's class, we its value: refused below
                status, reply = self.session.call(_session.OUTPUTS, b"", "step")
                return (*self._off_layout(status, reply, 3), self._advance())  # type: ignore[return-value]
            if self.plain is not None:  # one double channel: a read-only view the facade copies
                observation = data[: self.nobs].reshape(self.plain, order="F")
            else:
                observation = self._observation(data)
            return observation, float(data[-2]), done == 1.0, self._advance()
        return (*self._off_layout(status, reply, 3), self._advance())  # type: ignore[return-value]

    def reset(self, rng: np.random.Generator) -> Tuple[Any, LoggedSignals]:
        words = seed_words(rng).astype(np.float64)
        status, reply = self.session.call(_session.RESET, _session.values.pack(words, "seed"), "reset")
        if status == _session.OK:
            return self._observation(self._doubles(reply, self.nobs)), self._advance()
        return self._off_layout(status, reply, 1)[0], self._advance()

    def _doubles(self, reply: bytes, count: int) -> np.ndarray:
        """The doubles of a fast-layout reply, whose length the bind fixed (a peer is a stranger)."""
        if len(reply) != 8 * count:
            self.session.pool.fault(0, _session._garbled(self.session.last, f"{len(reply)} bytes, not {8 * count}"))
        return np.frombuffer(reply, dtype=np.float64)

    def _observation(self, data: np.ndarray) -> Any:
        parts, at = [], 0
        for n, dims, dtype, finite in self.obs_layout:
            chunk = data[at : at + n]
            at += n
            if finite and n == 1:
                parts.append(float(chunk[0]))
            else:
                parts.append(chunk.reshape(dims, order="F").astype(dtype))
        return parts[0] if len(parts) == 1 else parts

    def _off_layout(self, status: int, reply: bytes, count: int) -> List[Any]:
        """The outputs as Octave gave them (for the facade's own conversion and refusals)."""
        if status == _session.RAISED:
            raise self.session.raised(reply)
        outputs = _session.values.unpack(reply, "the Octave host's outputs")
        if status != _session.OFF_LAYOUT or not isinstance(outputs, list) or len(outputs) != count:
            self.session.pool.fault(0, _session._garbled("the call", repr(outputs)[:80]))
        return outputs

    def _advance(self) -> LoggedSignals:
        self.previous, self.current = self.current, LoggedSignals(self)
        return self.current

    def _put_back(self, Info: Any) -> None:
        """Octave's LoggedSignals back to what the facade holds (a refused step, a restored moment)."""
        ours = isinstance(Info, LoggedSignals) and Info.owner is self
        if ours and Info.plain is not None:
            self._set({"Info": Info.plain})
        elif ours and Info is self.previous:
            self.session.value(_session.UNDO, None, "undo", "LoggedSignals")
        elif Info is None:
            self._set({"Info": np.zeros((0, 0))})
        else:
            raise error(
                ContractError,
                "rlFunctionEnv Info",
                "be this env's current LoggedSignals (it lives in Octave)",
                repr(Info),
                "Restore a snapshot instead: env.restore_state(snapshot)",
            )
        self.previous, self.current = None, Info  # Octave holds what Info names; no undo past it

    # -- snapshots -----------------------------------------------------------------------------
    def fetch(self, Info: Any) -> Any:
        """The plain data of the LoggedSignals ``Info`` names."""
        if isinstance(Info, LoggedSignals) and Info.plain is not None:
            return Info.plain
        if Info is not self.current:
            self._put_back(Info)
        return self.session.value(_session.GET, None, "get_state", "LoggedSignals")["Info"]

    def get_state(self, Info: Any) -> dict:
        if Info is not self.current:
            self._put_back(Info)
        state = self.session.value(_session.GET, None, "get_state", "LoggedSignals")
        return {"Info": state["Info"], "Octave": {"rng": state["rng"]}}

    def set_state(self, state: Any) -> LoggedSignals:
        rng = state.get("Octave", {}).get("rng") if isinstance(state, dict) else None
        self._set({"Info": state["Info"], "rng": rng} if rng is not None else {"Info": state["Info"]})
        self.previous, self.current = None, LoggedSignals(self)
        return self.current

    def _set(self, tree: dict) -> None:
        self.session.value(_session.SET, tree, "restore_state", "rlFunctionEnv state")

    def close(self) -> None:
        self.session.close()

    def __reduce__(self) -> Any:
        raise error(
            ContractError,
            f"rlFunctionEnv {self.step_fcn.name} (.m functions in Octave)",
            "be built in the process that steps it",
            "a pickle or a copy",
            "Pass a factory (a function that builds the env) where a copy would be made",
        )

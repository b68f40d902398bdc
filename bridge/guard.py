"""Run-time guards every export shares: the episode lifecycle, user output checks, user errors.

One :class:`Guard` sits between an export and the user's env. It is the one place that knows

* the **lifecycle**: ``step()`` before the first ``reset()``, after an episode ended (terminated,
  truncated, or a refused step) without ``reset()``, and ``step()``/``reset()`` after ``close()``
  raise :class:`~bridge.errors.ContractError` before the env is touched;
* the **user's output**: a step must return a 5-tuple with a Python-float finite reward and
  Python-bool flags, a reset a 2-tuple. These type checks cost a few attribute reads per step and
  are always on. The observation-in-space check (shape, dtype, bounds: a full ``mismatch`` walk)
  is not free, so it runs only with ``strict=True`` (or in ``envbridge check``);
* **user exceptions**: an exception raised by the user's ``step``/``reset`` becomes a
  ContractError naming the env id and the step index (1 = the first step after ``reset()``),
  raised ``from`` the original (``__cause__`` keeps its traceback). Our own :class:`BridgeError`
  (already a house message) passes through unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Tuple

import numpy as np

from bridge.errors import BridgeError, ContractError, message
from bridge.spaces import Space, _describe_value

__all__ = ["Guard", "env_id"]

# lifecycle states (ints: the per-step test is one identity comparison)
NEW, RUNNING, ENDED, CLOSED = 0, 1, 2, 3


def env_id(env: Any) -> str:
    """The registered id of ``env`` (``spec.id``), else the class name of the innermost env."""
    inner = getattr(env, "unwrapped", env)
    spec_id = getattr(getattr(inner, "spec", None), "id", None)
    return spec_id if isinstance(spec_id, str) else type(inner).__name__


def _kind(value: Any) -> str:
    """Type and value, the same text under numpy 1.19 and 2.x."""
    if isinstance(value, np.generic):
        return f"numpy {value.dtype.name} {value.item()!r}"
    return f"{type(value).__name__} {value!r}"


class Guard:
    """The lifecycle and output checks of one export around one user env.

    Args:
        env: the user's env (wrappers included); names it in errors and gives the observation space.
        label: how the export names itself in lifecycle errors, e.g. ``"gymnasium env"``.
        strict: also check every observation against the observation space (not free).
        check_output: check the step/reset output types (off only where the caller builds the
            output itself, e.g. the MATLAB facade, which converts the user's values).
        warn_after_end: a step after the episode ended warns (once per ended episode) instead of
            raising, unless ``strict``. Only for a runtime whose own tools step past the end
            (gym 0.23's ``check_env`` does; its classic envs warn the same way).
    """

    __slots__ = (
        "label",
        "env",
        "space",
        "strict",
        "check_output",
        "warn_after_end",
        "state",
        "steps",
        "_ended_by",
        "_user_step",
        "checked_step",
    )

    def __init__(
        self, env: Any, label: str, *, strict: bool = False, check_output: bool = True, warn_after_end: bool = False
    ) -> None:
        self.label = label
        self.env = env  # named lazily: the registry sets spec after construction
        self.space: Optional[Space] = getattr(env, "observation_space", None)
        self.strict = bool(strict)
        self.check_output = bool(check_output)
        self.warn_after_end = bool(warn_after_end) and not strict
        self.state = NEW
        self.steps = 0  # steps of the current episode that returned
        self._ended_by = ""
        self._user_step: Optional[Callable[[Any], Any]] = None

    @property
    def env_id(self) -> str:
        """The env's registered id, else its class name."""
        return env_id(self.env)

    # -- lifecycle ---------------------------------------------------------------------------
    def reset(self, reset: Callable[..., Any], **kwargs: Any) -> Tuple[Any, Any]:
        """Call the user's ``reset(**kwargs)``, check its output, and start an episode."""
        if self.state is CLOSED:
            raise self._closed("reset")
        try:
            out = reset(**kwargs)
        except BridgeError:
            raise
        except Exception as e:
            self._end("an exception in reset()")
            raise ContractError(self._raised("reset()", e)) from e
        if self.check_output:
            if type(out) is not tuple or len(out) != 2:
                self._end("a refused reset() output")
                raise ContractError(
                    message(
                        f"{self.env_id} reset()",
                        "return a tuple (observation, info)",
                        _describe_value(out),
                        "Return obs, info",
                    )
                )
            if self.strict:
                self._check_observation(out[0], "reset observation")
        self.state, self.steps = RUNNING, 0
        return out

    def restart(self, steps: int = 0) -> None:
        """Mark an episode as running (after a snapshot restore or a validation that rewinds)."""
        if self.state is not CLOSED:
            self.state, self.steps = RUNNING, int(steps)

    def close(self) -> None:
        self.state = CLOSED

    def check_running(self) -> None:
        """Raise the lifecycle ContractError unless an episode is running."""
        if self.state is not RUNNING:
            self._misuse()

    def step(self, step: Callable[[Any], Any], action: Any) -> Any:
        """Bind ``step`` (see :meth:`bind`) and call it once: for tests and one-off callers."""
        self.bind(step)
        return self.checked_step(action)

    def bind(self, step: Callable[[Any], Any]) -> None:
        """Build ``self.checked_step(action)``: ``step`` behind the guard (the per-step path).

        Exports bind the user's step once at construction and call ``guard.checked_step``. It
        checks the lifecycle, calls ``step(action)``, checks the output and counts the step, and
        raises ContractError for misuse (before ``step`` runs), a user exception (with env id and
        step index), or a refused output (the episode then needs ``reset()``). It is a closure
        (the cheapest call in CPython); copies and pickles of the guard rebuild it.
        """
        self._user_step = step
        guard, check, strict = self, self.check_output, self.strict
        running, _type, _tuple, _float = RUNNING, type, tuple, float

        def checked_step(action: Any) -> Any:
            if guard.state is not running:
                guard._misuse()
            try:
                out = step(action)
            except BridgeError:
                raise
            except Exception as e:
                raise guard._user_exception(e) from e
            try:  # a 4-tuple (or anything but 5 items) fails to unpack: no len() on the fast path
                _, reward, terminated, truncated, _ = out
            except (TypeError, ValueError):
                guard._refuse_output(out)
            # identity tests only (True and False are singletons, so no type() call for the flags);
            # reward - reward is 0.0 only for a finite float
            if check and not (
                (terminated is True or terminated is False)
                and (truncated is True or truncated is False)
                and _type(reward) is _float
                and reward - reward == 0.0
                and _type(out) is _tuple
            ):
                guard._refuse_output(out)
            if strict:
                guard._check_observation(out[0], "step observation")
            guard.steps += 1
            if terminated or truncated:
                guard._end(f"{'terminated' if terminated else 'truncated'}=True at step {guard.steps}")
            return out

        self.checked_step = checked_step

    def __getstate__(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__ if k != "checked_step" and hasattr(self, k)}

    def __setstate__(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        if getattr(self, "_user_step", None) is not None:
            self.bind(self._user_step)  # a closure is not copied by deepcopy nor pickled: rebuild it

    # -- errors (off the fast path) ------------------------------------------------------------
    def _end(self, why: str) -> None:
        self.state, self._ended_by = ENDED, why

    def _closed(self, method: str) -> ContractError:
        return ContractError(
            message(
                f"{self.label} {method}()",
                "not be called after close()",
                f"{method}() on a closed env",
                "Make a new env",
            )
        )

    def _misuse(self) -> None:
        error = self._refused_step()
        if self.state is not ENDED or not self.warn_after_end:
            raise error
        warnings.warn(str(error), UserWarning, stacklevel=4)
        self.state = RUNNING  # warned once for this ended episode

    def _refused_step(self) -> ContractError:
        if self.state is CLOSED:
            return self._closed("step")
        if self.state is NEW:
            return ContractError(
                message(
                    f"{self.label} step()",
                    "come after reset()",
                    "step() before the first reset()",
                    "Call env.reset() first",
                )
            )
        return ContractError(
            message(
                f"{self.label} step()",
                "come after reset() once an episode has ended",
                f"step() after {self._ended_by}",
                "Call env.reset() when terminated or truncated is True",
            )
        )

    def _user_exception(self, error: Exception) -> ContractError:
        self._end(f"an exception at step {self.steps + 1}")
        return ContractError(self._raised(f"step() at step {self.steps + 1}", error))

    def _raised(self, where: str, error: Exception) -> str:
        return message(
            f"{self.env_id} {where}",
            "run without raising",
            f"{type(error).__name__}: {error}",
            "Fix the env; the original exception and its traceback are chained as __cause__",
        )

    def _refuse_output(self, out: Any) -> None:
        self._end(f"a refused step() output at step {self.steps + 1}")
        subject = f"{self.env_id} step"
        if type(out) is not tuple or len(out) != 5:
            got = f"a {len(out)}-tuple" if isinstance(out, tuple) else _describe_value(out)
            raise ContractError(
                message(
                    f"{subject}()",
                    "return a 5-tuple (obs, reward, terminated, truncated, info)",
                    got,
                    "Split done into terminated and truncated",
                )
            )
        reward = out[1]
        if isinstance(reward, np.generic):
            raise ContractError(
                message(
                    f"{subject} reward",
                    "be a Python float (a numpy scalar is a defect)",
                    _kind(reward),
                    "Return float(reward)",
                )
            )
        if type(reward) is not float:
            raise ContractError(
                message(f"{subject} reward", "be a Python float", _kind(reward), "Return float(reward)")
            )
        if reward - reward != 0.0:
            raise ContractError(
                message(f"{subject} reward", "be finite", reward, "Guard the reward computation against NaN and inf")
            )
        for name, flag in (("terminated", out[2]), ("truncated", out[3])):
            if type(flag) is not bool:
                raise ContractError(
                    message(f"{subject} {name}", "be a Python bool", _kind(flag), f"Return bool({name})")
                )

    def _check_observation(self, obs: Any, where: str) -> None:
        found = self.space.mismatch(obs, f"{self.env_id} {where}") if self.space is not None else None
        if found is not None:
            self._end(f"a refused {where}" + ("" if where.startswith("reset") else f" at step {self.steps + 1}"))
            raise ContractError(message(*found))

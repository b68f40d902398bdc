"""The run-time guard between an export and the user's env: lifecycle, user outputs, user errors.

One :class:`Guard` per export (the single-env port builds it). A facade env that guards itself when
used alone (``rlFunctionEnv``) is passed through while an export's guard calls it (:attr:`Guard.through`),
so a step is guarded once, and the facade keeps its own checks for direct use.
It is the one place that knows

* the **lifecycle**: ``step()`` before the first ``reset()``, after an episode ended (terminated,
  truncated, a refused output or an exception) and ``step()``/``reset()`` after ``close()`` raise
  :class:`~bridge.errors.ContractError` before the env is touched;
* **seeding**: a ``reset(seed=s)`` after which the env's Generator was not seeded with ``s`` (the
  env's reset did not call ``super().reset(seed=seed)``) is refused at the first seeded reset;
* the **user's output**: a 5-tuple with a Python-float finite reward and Python-bool flags, a
  2-tuple from reset, and an observation of exactly the space's dtype and shape (discrete kinds
  in range). Bounds of float observations are checked only with ``strict=True`` (not free);
* **user exceptions**: an exception raised inside the user's ``step``/``reset`` ends the episode
  and becomes a ContractError naming the env id and the step (1 = the first step after reset),
  raised ``from`` the original; our own :class:`BridgeError` passes through unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Tuple

import numpy as np

from bridge import checks
from bridge.errors import BridgeError, ContractError, error
from bridge.spaces import Space, _describe_value

__all__ = ["Guard", "env_id", "kind_of", "generator_of", "seeded", "unseeded_reset"]

# lifecycle states (ints: the per-step test is one identity comparison)
NEW, RUNNING, ENDED, CLOSED = 0, 1, 2, 3
Fn = Callable[[Any], Any]


def env_id(env: Any) -> str:
    """The registered id of ``env`` (``spec.id``), else the class name of the innermost env."""
    inner = getattr(env, "unwrapped", env)
    spec_id = getattr(getattr(inner, "spec", None), "id", None)
    return spec_id if isinstance(spec_id, str) else type(inner).__name__


def kind_of(value: Any) -> str:
    """Type and value, the same text under numpy 1.19 and 2.x."""
    if isinstance(value, np.generic):
        return f"numpy {value.dtype.name} {value.item()!r}"
    return f"{type(value).__name__} {value!r}"


class Guard:
    """The lifecycle and output checks of one export around one user env.

    Args:
        env: the user's env (wrappers included); names it in errors and gives the observation space.
        label: how the export names itself in lifecycle errors, e.g. ``"gymnasium env"``.
        strict: also check the float bounds of every observation (not free).
        check_output: check the step/reset output (off only where the caller builds the output
            itself from converted values, e.g. the MATLAB facade used on its own).
        warn_after_end: a step after the episode ended warns (once per ended episode) instead of
            raising, unless ``strict``. Only for a runtime whose own tools step past the end
            (gym 0.23's ``check_env`` does; its classic envs warn the same way).
        passable: the guard of a facade env used alone; an export's guard sets ``through`` while
            it calls the facade, so the step is checked once (the port does this).
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
        "through",
        "passable",
        "_ended_by",
        "_bound",
        "_check_obs",
        "checked_step",
    )

    def __init__(
        self,
        env: Any,
        label: str,
        *,
        strict: bool = False,
        check_output: bool = True,
        warn_after_end: bool = False,
        passable: bool = False,
    ) -> None:
        self.label = label
        self.env = env  # named lazily: the registry sets spec after construction
        self.space: Optional[Space] = getattr(env, "observation_space", None)
        self.strict = bool(strict)
        self.check_output = bool(check_output)
        self.warn_after_end = bool(warn_after_end) and not strict
        self.state = NEW
        self.steps = 0  # steps of the current episode that returned
        self.passable = bool(passable)
        self.through = False  # (passable guards) True while an outer export's guard is calling
        self._ended_by = ""
        self._bound: Tuple[Any, ...] = (None, None, None, None)
        self._check_obs = checks.value_check(self.space, self.strict) if self.space is not None else None
        self.checked_step: Fn = self._unbound

    @property
    def env_id(self) -> str:
        """The env's registered id, else its class name."""
        return env_id(self.env)

    def _unbound(self, action: Any) -> Any:
        raise RuntimeError("Guard.bind(step) must run before checked_step")  # a bug in an export, not user input

    # -- lifecycle ---------------------------------------------------------------------------
    def reset(
        self, reset: Callable[..., Any], seed: Optional[int] = None, options: Optional[dict] = None
    ) -> Tuple[Any, Any]:
        """Call the user's ``reset(seed=, options=)``, check its output and seeding, and start an episode."""
        if self.through:
            return reset(seed=seed, options=options)
        if self.state is CLOSED:
            raise self._closed("reset")
        before = generator_of(self.env) if seed is not None else None
        try:
            out = reset(seed=seed, options=options)
        except BridgeError:
            self._end("an exception in reset()")
            raise
        except Exception as e:
            self._end("an exception in reset()")
            raise self._raised("reset()", e) from e
        if self.check_output:
            if type(out) is not tuple or len(out) != 2:
                self._end("a refused reset() output")
                raise error(
                    ContractError,
                    f"{self.env_id} reset()",
                    "return a tuple (observation, info)",
                    _describe_value(out),
                    "Return obs, info",
                )
            if self._check_obs is not None and self._check_obs(out[0], "") is not None:
                self._check_observation(out[0], "reset observation")  # the message only on failure
        # super().reset(seed=seed) makes a new Generator from the seed: the same one (or another
        # seed) means the seed never reached env.np_random
        if seed is not None and not seeded(self.env, seed, before):
            self._end("a reset(seed=...) that did not seed the env")
            raise unseeded_reset(self.env_id, seed)
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

    def step(self, step: Fn, action: Any) -> Any:
        """Bind ``step`` (see :meth:`bind`) and call it once: for tests and one-off callers."""
        self.bind(step)
        return self.checked_step(action)

    def bind(
        self,
        step: Optional[Fn],
        prepare: Optional[Fn] = None,
        encode: Optional[Fn] = None,
        table: Optional[dict] = None,
    ) -> None:
        """Build ``self.checked_step(action)``, the per-step path of an export.

        It checks the lifecycle, ``prepare(action)`` (the export's action check and decode: it
        raises before anything moves; an int action found in ``table``, a dict of every valid
        action to its neutral value, skips it), calls ``step`` on the neutral action, checks the output,
        counts the step and returns ``(encode(obs), reward, terminated, truncated, info)``. Misuse,
        a refused output and a user exception (named with env id and step) raise ContractError.
        A closure, not a method reading the guard's attributes: +0.9k instr/step on GridWorld, 1.1 %
        (benchmarks/bench_gymnasium_instructions.py); copies and pickles of the guard rebuild it.
        """
        self._bound = (step, prepare, encode, table)
        if step is not None:
            self.checked_step = self._closure(step, prepare, encode, table)

    def _closure(self, step: Fn, prepare: Optional[Fn], encode: Optional[Fn], table: Optional[dict]) -> Fn:
        guard, check, obs_check, passable = self, self.check_output, self._check_obs, self.passable
        running, _type, _tuple, _float, _array, _int, _int64 = RUNNING, type, tuple, float, np.ndarray, int, np.int64
        _dict = dict
        lookup = table.get if table is not None and prepare is not None else None
        # a plain Box observation is checked inline, not through obs_check: +0.8k instr/step on
        # GridWorld, 1.1 % (benchmarks/bench_gymnasium_instructions.py)
        box = checks.box_signature(self.space, self.strict) if self.space is not None else None
        box_dtype, box_shape = box if box is not None else (None, None)

        def checked_step(action: Any) -> Any:
            # a facade's own guard goes straight through while an export's guard calls
            if passable and guard.through:
                return step(action)
            if guard.state is not running:
                guard._misuse()
            # a Discrete action: one dict lookup, not prepare(): +2.4k instr/step on GridWorld (3.0 %)
            # and CartPole (2.0 %) (benchmarks/bench_gymnasium_instructions.py)
            if lookup is not None:
                hit = lookup(action) if _type(action) is _int64 or _type(action) is _int else None
                action = prepare(action) if hit is None else hit
            elif prepare is not None:
                action = prepare(action)
            try:
                out = step(action)
            except BridgeError:
                guard._end(f"an exception at step {guard.steps + 1}")
                raise
            except Exception as e:
                raise guard._user_exception(e) from e
            if check:
                # an unpack that fails on anything but 5 items (no len()), identity tests of the flags
                # (True and False are singletons) and reward - reward == 0.0 (finite floats only), not
                # len(), type(flag) is bool and math.isfinite: +0.4k instr/step, 4.6 % of Drift under
                # gymnasium.make, 0.5 % of GridWorld (benchmarks/bench_gymnasium_instructions.py)
                try:
                    obs, reward, terminated, truncated, info = out
                except (TypeError, ValueError):
                    guard._refuse_output(out)
                if not (
                    (terminated is False or terminated is True)
                    and (truncated is False or truncated is True)
                    and _type(reward) is _float
                    and reward - reward == 0.0
                    and _type(out) is _tuple
                    and _type(info) is _dict
                ):
                    guard._refuse_output(out)
                if box is not None:
                    if not (_type(obs) is _array and obs.dtype is box_dtype and obs.shape == box_shape):
                        guard._check_observation(obs, "step observation")
                elif obs_check is not None and obs_check(obs, "") is not None:
                    guard._check_observation(obs, "step observation")
            else:
                obs, reward, terminated, truncated, info = out
            guard.steps += 1
            if terminated or truncated:
                guard._end(f"{'terminated' if terminated else 'truncated'}=True at step {guard.steps}")
                # the last observation outlives the reset that follows (SB3's terminal_observation,
                # autoreset's final obs): an env that reuses its buffer would overwrite it. Once per episode.
                obs = checks.copy_observation(obs)
                out = (obs, reward, terminated, truncated, info)
            if encode is not None:
                return encode(obs), reward, terminated, truncated, info
            return out

        return checked_step

    def __getstate__(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__ if k not in ("checked_step", "_check_obs")}

    def __setstate__(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._check_obs = checks.value_check(self.space, self.strict) if self.space is not None else None
        self.checked_step = self._unbound
        self.bind(*self._bound)  # a closure is neither deep-copied nor pickled: rebuild it

    # -- errors (off the fast path) ------------------------------------------------------------
    def _end(self, why: str) -> None:
        self.state, self._ended_by = ENDED, why

    def _closed(self, method: str) -> ContractError:
        return error(
            ContractError,
            f"{self.label} {method}()",
            "not be called after close()",
            f"{method}() on a closed env",
            "Make a new env",
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
            return error(
                ContractError,
                f"{self.label} step()",
                "come after reset()",
                "step() before the first reset()",
                "Call env.reset() first",
            )
        return error(
            ContractError,
            f"{self.label} step()",
            "come after reset() once an episode has ended",
            f"step() after {self._ended_by}",
            "Call env.reset() when terminated or truncated is True",
        )

    def _user_exception(self, cause: Exception) -> BridgeError:
        self._end(f"an exception at step {self.steps + 1}")
        return self._raised(f"step() at step {self.steps + 1}", cause)

    def _raised(self, where: str, cause: Exception) -> BridgeError:
        return error(
            ContractError,
            f"{self.env_id} {where}",
            "run without raising",
            f"{type(cause).__name__}: {cause}",
            "Fix the env; the original exception and its traceback are chained as __cause__",
        )

    def _refuse_output(self, out: Any) -> None:
        self._end(f"a refused step() output at step {self.steps + 1}")
        subject = f"{self.env_id} step"
        if type(out) is not tuple or len(out) != 5:
            if isinstance(out, tuple) and len(out) == 5:  # a namedtuple or other tuple subclass
                got = f"a {type(out).__name__} (a tuple subclass)"
                fix = "Return a plain tuple: return obs, reward, terminated, truncated, info"
            else:
                got = f"a {len(out)}-tuple" if isinstance(out, tuple) else _describe_value(out)
                fix = "Split done into terminated and truncated"
            raise error(
                ContractError, f"{subject}()", "return a 5-tuple (obs, reward, terminated, truncated, info)", got, fix
            )
        reward = out[1]
        if isinstance(reward, np.generic):
            raise error(
                ContractError,
                f"{subject} reward",
                "be a Python float (a numpy scalar is a defect)",
                kind_of(reward),
                "Return float(reward)",
            )
        if type(reward) is not float:
            raise error(
                ContractError, f"{subject} reward", "be a Python float", kind_of(reward), "Return float(reward)"
            )
        if reward - reward != 0.0:
            raise error(
                ContractError,
                f"{subject} reward",
                "be finite",
                reward,
                "Guard the reward computation against NaN and inf",
            )
        for name, flag in (("terminated", out[2]), ("truncated", out[3])):
            if type(flag) is not bool:
                raise error(
                    ContractError, f"{subject} {name}", "be a Python bool", kind_of(flag), f"Return bool({name})"
                )
        if type(out[4]) is not dict:
            got = kind_of(out[4])
            raise error(ContractError, f"{subject} info", "be a dict", got, "Return {} when there is nothing to report")

    def _check_observation(self, obs: Any, where: str) -> None:
        found = self._check_obs(obs, f"{self.env_id} {where}") if self._check_obs is not None else None
        if found is not None:
            self._end(f"a refused {where}" + ("" if where.startswith("reset") else f" at step {self.steps + 1}"))
            raise error(ContractError, *found)


def seeded(env: Any, seed: int, before: Any) -> bool:
    """Whether ``env.reset(seed=seed)`` reached env.np_random (``before``: :func:`generator_of` before it).

    super().reset(seed=seed) makes a new Generator from the seed: the same one (or another seed)
    means the seed never reached env.np_random.
    """
    return getattr(env, "np_random_seed", seed) == seed and generator_of(env) is not before


def unseeded_reset(env_id: str, seed: int) -> ContractError:
    return error(  # type: ignore[return-value]
        ContractError,
        f"{env_id}.reset(seed={seed})",
        "seed the env's Generator (env.np_random)",
        "a reset that did not call super().reset(seed=seed)",
        "Call super().reset(seed=seed) first in your reset()",
    )


def generator_of(env: Any) -> Any:
    """The Generator object the neutral env holds now (None before its first use)."""
    # not base.__dict__: in CPython 3.11+ that materializes the instance dict, and every later
    # attribute load in the user's own step takes the slower dict path: +2.1k instr/step on GridWorld,
    # 2.7 % (benchmarks/bench_gymnasium_instructions.py)
    return getattr(getattr(env, "unwrapped", env), "_np_random", None)

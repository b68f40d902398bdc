"""The run-time guard between an export and the user's env: lifecycle, user outputs, user errors.

:class:`Guarded` is a base class with plain methods, mixed into every single-env export (the
Export base) and into the MATLAB facade's ``rlFunctionEnv`` (which checks itself when used alone).
The export's ``step`` reads the guard's state and calls these methods where it needs them; nothing
is bound per instance. It is the one place that knows

* the **lifecycle**: ``step()`` before the first ``reset()``, after an episode ended (terminated,
  truncated, a refused output or an exception) and ``step()``/``reset()`` after ``close()`` raise
  :class:`~bridge.errors.ContractError` before the env is touched;
* **seeding**: a ``reset(seed=s)`` after which the env's Generator was not seeded with ``s`` (the
  env's reset did not call ``super().reset(seed=seed)``) is refused at the first seeded reset;
* the **user's output**: a 2-tuple from reset and, through :func:`bridge.checks.step_output` (the
  one check of a step's output, also under ``SyncVectorEnv`` and ``ProcessVectorEnv``), a 5-tuple
  with a Python-float finite reward, Python-bool flags and a dict info; an observation of exactly
  the space's dtype and shape (discrete kinds in range; float bounds only with ``strict=True``);
* **user exceptions**: an exception raised inside the user's ``step``/``reset`` ends the episode
  and becomes a ContractError naming the env id and the step (1 = the first step after reset),
  raised ``from`` the original; our own :class:`BridgeError` passes through unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Tuple

from bridge.checks import kind_of, step_output
from bridge.errors import BridgeError, ContractError, error
from bridge.spaces import _describe_value

__all__ = [
    "Guarded",
    "env_id",
    "kind_of",
    "generator_of",
    "seeded",
    "unseeded_reset",
    "NEW",
    "RUNNING",
    "CLOSED",
]

# lifecycle states (ints: the per-step test is one identity comparison)
NEW, RUNNING, ENDED, CLOSED = 0, 1, 2, 3


def env_id(env: Any) -> str:
    """The registered id of ``env`` (``spec.id``), else the class name of the innermost env."""
    inner = getattr(env, "unwrapped", env)
    spec_id = getattr(getattr(inner, "spec", None), "id", None)
    return spec_id if isinstance(spec_id, str) else type(inner).__name__


class Guarded:
    """The lifecycle of one guarded env, as plain methods over plain attributes (see the module doc).

    A subclass sets ``label`` (how lifecycle errors name it, e.g. ``"gymnasium env"``), calls
    :meth:`_start_lifecycle` once, tests ``self._lifecycle is not RUNNING`` at the top of its
    ``step`` (then :meth:`_misuse` raises or warns), counts ``self._steps`` and calls :meth:`_end`
    when an episode ends. :meth:`_guarded` is the env the messages name.
    """

    label = ""
    warn_after_end = False  # a step after the end warns once per episode (gym 0.23's checker steps past it)
    _lifecycle = NEW
    _steps = 0
    _ended_by = ""

    def _start_lifecycle(self) -> None:
        self._lifecycle, self._steps, self._ended_by = NEW, 0, ""

    def _guarded(self) -> Any:
        """The user's env, as messages name it (its id, else its class)."""
        return self

    # -- lifecycle ---------------------------------------------------------------------------
    def _guarded_reset(
        self, reset: Callable[..., Any], seed: Optional[int], options: Optional[dict], check: Optional[Any]
    ) -> Tuple[Any, Any]:
        """Call ``reset(seed=, options=)``, check its output (``check``: the observation check, or
        None when the caller builds the output itself) and its seeding, and start an episode."""
        if self._lifecycle is CLOSED:
            raise self._closed("reset")
        env = self._guarded()
        before = generator_of(env) if seed is not None else None
        try:
            out = reset(seed=seed, options=options)
        except BridgeError:
            self._end("an exception in reset()")
            raise
        except Exception as e:
            self._end("an exception in reset()")
            raise self._raised("reset()", e) from e
        if check is not None:
            if type(out) is not tuple or len(out) != 2:
                self._end("a refused reset() output")
                subject = f"{env_id(env)} reset()"
                raise error(
                    ContractError,
                    subject,
                    "return a tuple (observation, info)",
                    _describe_value(out),
                    "Return obs, info",
                )
            found = check(out[0], "")
            if found is not None:  # the path is named only on failure
                self._refuse_observation(check, out[0], "reset observation")
        # super().reset(seed=seed) makes a new Generator from the seed: the same one (or another
        # seed) means the seed never reached env.np_random
        if seed is not None and not seeded(env, seed, before):
            self._end("a reset(seed=...) that did not seed the env")
            raise unseeded_reset(env_id(env), seed)
        self._lifecycle, self._steps = RUNNING, 0
        return out

    def _restart(self, steps: int = 0) -> None:
        """Mark an episode as running (after a snapshot restore or a validation that rewinds)."""
        if self._lifecycle is not CLOSED:
            self._lifecycle, self._steps = RUNNING, int(steps)

    def _end(self, why: str) -> None:
        self._lifecycle, self._ended_by = ENDED, why

    def _end_step(self, terminated: bool) -> None:
        self._end(f"{'terminated' if terminated else 'truncated'}=True at step {self._steps}")

    # -- errors (off the fast path) ------------------------------------------------------------
    def _misuse(self) -> None:
        """A step while no episode runs: the lifecycle ContractError (or, past the end of an
        episode with ``warn_after_end``, a warning once for that episode)."""
        refused = self._refused_step()
        if self._lifecycle is not ENDED or not self.warn_after_end:
            raise refused
        warnings.warn(str(refused), UserWarning, stacklevel=3)
        self._lifecycle = RUNNING  # warned once for this ended episode
        inner = getattr(self._guarded(), "unwrapped", None)
        if isinstance(inner, Guarded) and inner is not self:  # a guarded env under it runs on too
            inner._restart(inner._steps)

    def _closed(self, method: str) -> ContractError:
        return error(  # type: ignore[return-value]
            ContractError,
            f"{self.label} {method}()",
            "not be called after close()",
            f"{method}() on a closed env",
            "Make a new env",
        )

    def _refused_step(self) -> ContractError:
        if self._lifecycle is CLOSED:
            return self._closed("step")
        if self._lifecycle is NEW:
            return error(  # type: ignore[return-value]
                ContractError,
                f"{self.label} step()",
                "come after reset()",
                "step() before the first reset()",
                "Call env.reset() first",
            )
        return error(  # type: ignore[return-value]
            ContractError,
            f"{self.label} step()",
            "come after reset() once an episode has ended",
            f"step() after {self._ended_by}",
            "Call env.reset() when terminated or truncated is True",
        )

    def _user_exception(self, cause: Exception) -> BridgeError:
        """An exception from the user's step: the episode ends; the ContractError to raise from it."""
        self._end(f"an exception at step {self._steps + 1}")
        return self._raised(f"step() at step {self._steps + 1}", cause)

    def _raised(self, where: str, cause: Exception) -> BridgeError:
        return error(  # type: ignore[return-value]
            ContractError,
            f"{env_id(self._guarded())} {where}",
            "run without raising",
            f"{type(cause).__name__}: {cause}",
            "Fix the env; the original exception and its traceback are chained as __cause__",
        )

    def _refuse_output(self, out: Any) -> None:
        """A step output the fast test did not accept: the one check says why (the episode ends;
        nothing happens when it accepts ``out``)."""
        try:
            step_output(out, env_id(self._guarded()))
        except ContractError:
            self._end(f"a refused step() output at step {self._steps + 1}")
            raise

    def _refuse_observation(self, check: Any, obs: Any, where: str) -> None:
        found = check(obs, f"{env_id(self._guarded())} {where}")
        if found is not None:
            self._end(f"a refused {where}" + ("" if where.startswith("reset") else f" at step {self._steps + 1}"))
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

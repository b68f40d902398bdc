"""The one VectorEnv base: subclasses step and reset sub-envs; the base owns everything else.

A subclass implements two methods over numpy batches (sub-envs on the leading axis):
* ``reset_envs(mask, seeds, options) -> (obs, infos)``: reset the sub-envs where the bool ``mask``
  is True (``seeds[i]`` is the seed of sub-env ``i`` or None) and return a full batch of
  observations (rows outside the mask are ignored) and Gymnasium-layout infos;
* ``step_envs(actions, active) -> (obs, rewards, terminated, truncated, infos)``: step the sub-envs
  where ``active`` is True with the already checked ``actions``; rows outside ``active`` are ignored
  (a batched simulator may step them anyway).

The base's ``reset`` and ``step`` own the rest, in every autoreset mode: the lifecycle (step before reset,
after close, after a fault), seeds (``reset(seed=s)`` seeds ``self.np_random`` and gives sub-env ``i`` the
seed ``s + i``), the action check of the whole batch before any sub-env moves (a bad slot is named by its
index), output checks (rewards, flags, the observation batch), user exceptions (named with the env and the
step), episode counters, ``max_episode_steps`` truncation, autoreset and final observations:

* ``"next-step"`` (Gymnasium 1.x): the step after an episode ends resets that sub-env and ignores
  its action (reward 0, flags False); the ending step returns the final observation;
* ``"same-step"`` (SB3): the ending step resets at once and returns the new episode's first
  observation; the final one is in ``infos["final_obs"]`` where ``infos["_final_obs"]`` holds (both
  keys always there), the ending step's infos (Gymnasium's vector layout) in ``infos["final_info"]``;
* ``"disabled"`` (Gymnasium's): nothing resets by itself; an ended sub-env is refused a step until
  ``reset(options={"reset_mask": mask})`` (a partial reset, in every mode) resets it.

The mode is a setting of the base: every export takes a VectorEnv of any mode and presents the one
its runtime wants (``autoreset_mode`` may change while no episode runs).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from bridge import checks, spaces
from bridge.errors import BridgeError, ContractError, SpecError, error
from bridge.vector import refusals
from bridge.vector.batches import Seeds, checked_rewards, merge_rows, refuse_batch, reset_mask, seed_list
from bridge.vector.infos import merge_infos, select_rows

__all__ = ["VectorEnv", "AUTORESET_MODES", "VectorStepResult", "Seeds"]

AUTORESET_MODES = ("next-step", "same-step", "disabled")
VectorStepResult = Tuple[Any, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]
NEW, RUNNING, BROKEN, CLOSED = 0, 1, 2, 3
_FLOAT64, _BOOL = np.dtype(np.float64), np.dtype(np.bool_)  # builtin dtypes are singletons: `is` tests


def check_mode(mode: str) -> str:
    if mode not in AUTORESET_MODES:
        raise error(SpecError, "autoreset_mode", f"be one of {AUTORESET_MODES}", mode, "Pick one")
    return mode


class VectorEnv:
    """``num_envs`` environments stepped as one numpy batch (see the module doc).

    Subclasses set ``num_envs``, ``single_observation_space`` and ``single_action_space`` (and
    optionally ``autoreset_mode``, ``max_episode_steps``, ``metadata``, ``render_mode``), and
    implement :meth:`reset_envs` and :meth:`step_envs`; :meth:`close_envs` if they hold resources.
    They do not override ``reset``, ``step`` or ``close``.
    """

    num_envs: int
    single_observation_space: spaces.Space
    single_action_space: spaces.Space
    max_episode_steps: Optional[int] = None
    check_actions: bool = True  # False: step() checks only that the batch holds one action per env
    _strict: bool = False
    metadata: Dict[str, Any] = {"render_modes": [], "render_fps": None}
    render_mode: Optional[str] = None
    _np_random: Optional[np.random.Generator] = None
    _autoreset_mode: str = "next-step"
    _state: int = NEW
    _why: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        overridden = [name for name in ("reset", "step") if name in vars(cls)]
        if overridden:
            raise error(
                SpecError,
                f"VectorEnv subclass {cls.__name__}",
                "implement reset_envs(mask, seeds, options) and step_envs(actions, active)",
                f"an override of {', '.join(f'{n}()' for n in overridden)}",
                "Rename them: the base's reset() and step() own autoreset, checks and the guard",
            )

    # -- settings --------------------------------------------------------------------------------
    @property
    def autoreset_mode(self) -> str:
        """ "next-step", "same-step" or "disabled" (see the module doc); settable while no episode runs."""
        return self._autoreset_mode

    @autoreset_mode.setter
    def autoreset_mode(self, mode: str) -> None:
        check_mode(mode)
        if mode != self._autoreset_mode and self._state is RUNNING:
            raise error(ContractError, *refusals.mode_change(type(self).__name__, mode, self._autoreset_mode))
        self._autoreset_mode = mode
        if self._state is RUNNING:
            self._state = NEW

    @property
    def strict(self) -> bool:
        """True: the float bounds of every observation batch are checked too (not free)."""
        return self._strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self._strict = bool(value)
        if getattr(self, "_bookkept", None) is not None:
            self._observation_checks()

    def _observation_checks(self) -> None:
        n, full = self.num_envs, self._strict
        self._check_obs = checks.batch_check(self.single_observation_space, n, full=full)
        # Box batches checked inline: +2.0k instr a CartPoleVector(16) batch, 0.75 % (bench_sb3_vec.py
        # --instructions, N=16); kept under 1 % as that row is already 1.2 % above 5990964's without it
        self._obs_box = checks.box_signature(self._batch_spaces[0], full)

    @property
    def observation_space(self) -> spaces.Space:
        """The space of a batch of observations."""
        self._bookkeeping()
        return self._batch_spaces[0]

    @property
    def action_space(self) -> spaces.Space:
        """The space of a batch of actions."""
        self._bookkeeping()
        return self._batch_spaces[1]

    @property
    def np_random(self) -> np.random.Generator:
        """The batch's one Generator; seeded by ``reset(seed=int)``."""
        if self._np_random is None:
            self._np_random = np.random.default_rng()
        return self._np_random

    @property
    def episode_steps(self) -> np.ndarray:
        """Steps each sub-env's current episode has done (during a step call: the steps before it)."""
        self._bookkeeping()
        return self._calls - self._start

    # -- what subclasses implement ----------------------------------------------------------------
    def reset_envs(self, mask: np.ndarray, seeds: List[Optional[int]], options: Optional[dict]) -> Tuple[Any, dict]:
        raise NotImplementedError(f"{type(self).__name__}.reset_envs is not implemented")

    def step_envs(self, actions: Any, active: np.ndarray) -> VectorStepResult:
        raise NotImplementedError(f"{type(self).__name__}.step_envs is not implemented")

    def close_envs(self) -> None:
        """Release the sub-envs' resources (called once by :meth:`close`)."""

    # -- the API ---------------------------------------------------------------------------------
    def reset(self, *, seed: Seeds = None, options: Optional[dict] = None) -> Tuple[Any, Dict[str, Any]]:
        """Reset every sub-env; ``seed=s`` seeds the batch's Generator and gives sub-env ``i`` ``s + i``.
        ``options={"reset_mask": mask}`` resets only where ``mask`` holds (other rows: the latest)."""
        self._bookkeeping()
        if self._state is CLOSED:
            raise self._closed("reset")
        seeds = seed_list(seed, self.num_envs, type(self).__name__)
        mask, options = reset_mask(options, self.num_envs, type(self).__name__)
        if mask is not None and not mask.all():  # a mask of every env is a whole reset (also the first)
            return self._partial_reset(mask, seeds, options)
        if seeds[0] is not None:
            self._np_random = np.random.default_rng(seeds[0])
        everyone = np.ones(self.num_envs, dtype=bool)
        obs, infos = self._call("reset()", self.reset_envs, everyone, seeds, options)
        self._check_batch(obs, infos, "reset")
        self._note_seeds(seeds, everyone)
        self._start[:] = 0
        self._oldest = 0
        self._needs_reset[:] = False
        self._calls = 0
        self._state = RUNNING
        self._obs = obs
        return obs, infos

    @property
    def seeds(self) -> Tuple[Optional[int], ...]:
        """The seed each sub-env was last reset with (None: never), Gymnasium's ``np_random_seed``."""
        return tuple(getattr(self, "_seeds", None) or [None] * self.num_envs)

    def _note_seeds(self, seeds: List[Optional[int]], mask: np.ndarray) -> None:
        self._seeds = [s if m and s is not None else old for s, m, old in zip(seeds, mask, self._seeds)]

    def _partial_reset(self, mask: np.ndarray, seeds: List[Optional[int]], options: dict) -> Tuple[Any, dict]:
        if self._state is not RUNNING:
            raise error(ContractError, *refusals.partial_reset(type(self).__name__, self._state is NEW, self._why))
        index = mask.nonzero()[0]
        fresh, infos = self._call("reset()", self.reset_envs, mask, seeds, options)
        self._check_batch(fresh, infos, "reset")
        self._note_seeds(seeds, mask)
        self._start[index] = self._calls
        self._needs_reset[index] = False
        self._obs = merge_rows(self._obs, fresh, mask)
        return self._obs, select_rows(infos, mask)

    def step(self, actions: Any) -> VectorStepResult:
        """Step every sub-env; the batch is checked whole (length and every slot) before any moves."""
        self._running()
        refuse_batch(self._check_actions if self.check_actions else None, actions, self.num_envs)
        return self._advance(actions)

    def step_validated(self, actions: Any) -> VectorStepResult:
        """:meth:`step` for an export that checked ``actions`` in its runtime's terms (one check)."""
        self._running()
        return self._advance(actions)

    def check_running(self) -> None:
        """The lifecycle ContractError unless the batch can step (an export asks before its checks)."""
        self._running()

    def close(self) -> None:
        """Close every sub-env; safe to call twice."""
        if self._state is CLOSED:
            return
        self._state = CLOSED
        self.close_envs()

    def __enter__(self) -> VectorEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} num_envs={self.num_envs} autoreset={self.autoreset_mode}>"

    # -- the work --------------------------------------------------------------------------------
    def _advance(self, actions: Any) -> VectorStepResult:
        # episode steps are counted as "calls since the episode began": nothing is counted per step
        mode = self._autoreset_mode
        next_step = mode != "same-step"  # "disabled" steps as "next-step" does, with nothing to restart
        restart = None
        if next_step and self._needs_reset.any():  # never set in "same-step" mode
            if mode == "disabled":  # an ended sub-env steps only after a reset_mask reset
                raise error(ContractError, *refusals.ended(type(self).__name__, self._needs_reset))
            restart = self._needs_reset
        active = self._everyone if restart is None else ~restart
        out = self._call("step()", self.step_envs, actions, active)
        self._calls += 1  # after the call: during it, calls - start is the steps done before it
        obs, rewards, terminated, truncated, infos = self._check_step(out)
        cap = self.max_episode_steps
        if cap is not None and self._calls - self._oldest >= cap and self._calls - self._min_start() >= cap:
            cut = (self._calls - self._start) >= cap  # some episode reached the cap
            cut &= ~terminated if restart is None else ~terminated & active
            truncated = truncated | cut
        if next_step:  # the sub-envs in ``restart`` only reset this step
            if restart is not None:
                obs, infos = self._restart(obs, infos, restart, restart.nonzero()[0])
                rewards = np.where(restart, 0.0, rewards)
                terminated, truncated = terminated & active, truncated & active
            self._needs_reset = terminated | truncated
            self._obs = obs
            return obs, rewards, terminated, truncated, infos
        ended = terminated | truncated
        # the rows to reset, not ended.any() first: +5.9k instr a CartPoleVector(16) batch, 2.2 % (bench_sb3_vec)
        index = ended.nonzero()[0]
        if not len(index):
            self._obs = obs
            return obs, rewards, terminated, truncated, dict(infos, final_obs=obs, _final_obs=ended)
        fresh, merged = self._restart(obs, infos, ended, index)  # the ending step's infos are the final ones
        self._obs = fresh
        final_info = select_rows(infos, ended)  # only the ended sub-envs' rows, as Gymnasium's
        return (
            fresh,
            rewards,
            terminated,
            truncated,
            dict(merged, final_obs=obs, _final_obs=ended, final_info=final_info),
        )

    def _restart(self, obs: Any, infos: dict, mask: np.ndarray, index: np.ndarray) -> Tuple[Any, dict]:
        """Reset the sub-envs in ``mask`` (at ``index``) and merge their first observations and infos in."""
        fresh, fresh_infos = self._call("reset() (autoreset)", self.reset_envs, mask, self._no_seeds, None)
        box = self._obs_box
        if box is None or not (type(fresh) is np.ndarray and fresh.dtype is box[0] and fresh.shape == box[1]):
            self._check_batch(fresh, fresh_infos, "reset")
        elif type(fresh_infos) is not dict:
            self._check_batch(fresh, fresh_infos, "reset")
        self._start[index] = self._calls  # their first step is the next call
        return merge_rows(obs, fresh, mask), merge_infos(infos, fresh_infos, mask)

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except BridgeError:
            self._break(f"an error in {self._at(what)}")
            raise
        except Exception as e:
            self._break(f"an exception in {self._at(what)}")
            raise error(
                ContractError,
                f"{type(self).__name__} {self._at(what)}",
                "run without raising",
                f"{type(e).__name__}: {e}",
                "Fix the env; the original exception and its traceback are chained as __cause__",
            ) from e

    def _min_start(self) -> int:
        """``self._oldest`` made exact again (restarts only raise starts, so a stale one is a lower
        bound: the cheap test above may fire early, never late)."""
        self._oldest = int(self._start.min())
        return self._oldest

    def _at(self, what: str) -> str:
        return f"{what} at step {self._calls + 1}" if what == "step()" else what

    # -- checks ------------------------------------------------------------------------------------
    def _bookkeeping(self) -> None:
        """Counters, masks and precomputed checks, made on first use (subclasses need not call
        ``super().__init__``) and again when ``num_envs`` or the spaces change."""
        key = (self.num_envs, id(self.single_observation_space), id(self.single_action_space))
        if getattr(self, "_bookkept", None) == key:
            return
        n = self.num_envs
        self._start = np.zeros(n, dtype=np.int64)  # the call after which each episode began
        self._oldest = 0  # a lower bound of min(self._start): no cap is reached while calls - oldest < cap
        self._needs_reset = np.zeros(n, dtype=bool)
        self._calls = 0
        self._seeds: List[Optional[int]] = [None] * n
        self._batch_spaces = (
            spaces.batch_space(self.single_observation_space, n),
            spaces.batch_space(self.single_action_space, n),
        )
        self._check_actions = checks.batch_check(self.single_action_space, n, full=True)
        self._shape = (n,)
        self._no_seeds = (None,) * n  # the seeds of an autoreset
        self._observation_checks()
        self._everyone = np.ones(n, dtype=bool)
        self._everyone.setflags(write=False)  # handed to step_envs as ``active``: nobody may change it
        self._bookkept = key

    def _running(self) -> None:
        if self._state is RUNNING:  # reset() did the bookkeeping
            return
        self._bookkeeping()
        if self._state is not RUNNING:
            self._require_usable()  # a batch that no reset can bring back says so, not "Call reset() first"
            if self._state is CLOSED:
                raise self._closed("step")
            expectation, actual = "come after reset()", "step() before the first reset()"
            if self._state is BROKEN:
                expectation, actual = "come after reset() once a step failed", f"step() after {self._why}"
            raise error(ContractError, f"{type(self).__name__} step()", expectation, actual, "Call reset() first")

    def _require_usable(self) -> None:
        """Raise when no ``reset()`` can make the batch step again (a process pool poisoned by a fault)."""

    def _closed(self, method: str) -> BridgeError:
        return error(ContractError, *refusals.closed(type(self).__name__, method))

    def _break(self, why: str) -> None:
        if self._state is not CLOSED:
            self._state, self._why = BROKEN, why

    def _check_batch(self, obs: Any, infos: Any, where: str) -> None:
        if self._check_obs(obs, "") is None and type(infos) is dict:  # the path is named only on failure
            return
        found = self._check_obs(obs, f"{type(self).__name__} {where} observations")
        if found is None and not isinstance(infos, dict):
            found = (f"{type(self).__name__} {where} infos", "be a dict", type(infos).__name__, "Return {}")
        if found is not None:
            self._break(f"a refused {where} output")
            raise error(ContractError, *found)

    def _check_step(self, out: Any) -> tuple:
        """The batch step's output, checked: the common case is identity tests on cached values."""
        try:
            obs, rewards, terminated, truncated, infos = out
        except (TypeError, ValueError):
            self._break("a refused step() output")
            raise error(ContractError, *refusals.not_a_step(type(self).__name__, out)) from None
        shape, array = self._shape, np.ndarray
        if not (
            type(rewards) is array
            and rewards.dtype is _FLOAT64
            and rewards.shape == shape
            and type(terminated) is array
            and terminated.dtype is _BOOL
            and terminated.shape == shape
            and type(truncated) is array
            and truncated.dtype is _BOOL
            and truncated.shape == shape
        ):
            try:
                rewards = checked_rewards(rewards, terminated, truncated, self.num_envs, type(self).__name__)
            except ContractError:
                self._break("a refused step() output")
                raise
        box = self._obs_box
        if box is None or not (type(obs) is array and obs.dtype is box[0] and obs.shape == box[1]):
            self._check_batch(obs, infos, "step")
        elif type(infos) is not dict:
            self._check_batch(obs, infos, "step")
        return obs, rewards, terminated, truncated, infos

"""Stable-Baselines3 2.x on neutral envs: ``to_sb3`` and ``make_vec_env``.

Scalar envs go through :func:`bridge.adapters.gymnasium.to_gymnasium` into SB3's own
``DummyVecEnv`` / ``SubprocVecEnv`` (with SB3's ``Monitor``); a :class:`bridge.VectorEnv` becomes a
:class:`~bridge.adapters.sb3.vec.BatchedVecEnv` stepped as one numpy batch. What SB3 cannot train
on (a hybrid or Dict action, an integer Box action) is refused here with the reason.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
from bridge.adapters._shared.lowering import Lowering
from bridge.adapters.gymnasium.export import GoalExport, GymnasiumEnv
from bridge.adapters.gymnasium.lowering import FLAT, lower
from bridge.adapters.sb3.lowering import sb3_refusal
from bridge.adapters.sb3.subproc import reporting_factory
from bridge.adapters.sb3.subproc import vec_env_cls as sb3_vec_env_cls
from bridge.compat import optional_import

from bridge.env import Env
from bridge.errors import SpecError, close_beside, error
from bridge.loading import resolve
from bridge.options import declared, honoured_by, split
from bridge.vector import VectorEnv

optional_import("stable_baselines3", "the SB3 export")
from stable_baselines3.common import env_util  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv  # noqa: E402

__all__ = ["make_vec_env", "to_sb3", "SB3Env", "GoalSB3Env"]


class SB3Env(GymnasiumEnv):
    """The scalar export SB3 trains on: the Gymnasium export with the sb3 row's options (float64
    presented as float32 by default: SB3's policies compute in float32) and SB3's refusals."""

    runtime = "sb3"
    export_name = "to_sb3"
    check_targets = ("sb3", "gymnasium")

    def lower(self, space: Any, *, path: str, options: Dict[str, Any]) -> Lowering:
        """The Gymnasium lowering with one level of Dict (MultiInputPolicy's)."""
        return lower(space, path=path, options={**options, FLAT: True})

    def present(self) -> None:
        super().present()
        refusal = sb3_refusal(self.neutral.action_space, self.action_space)
        if refusal is not None:  # raised inside the build: an env built here is closed
            raise refusal


class GoalSB3Env(GoalExport, SB3Env):
    """The SB3 export of a goal env (HER relabels through ``compute_reward``)."""


SB3Env.goal_variant = GoalSB3Env


def to_sb3(env: Any, **options: Any) -> SB3Env:
    """:func:`to_gymnasium` with the sb3 row's options, plus SB3's own refusals (ConversionError).

    float64 Box observations (MATLAB's "double") are presented as float32 unless
    ``float64_as_float32=False``: SB3's policies compute in float32, so this is the rounding SB3
    would do anyway, done once at the boundary; the "sb3" check profile reports it.
    """
    return SB3Env.build(env, options)


def make_vec_env(
    env_or_id_or_factory: Any,
    n_envs: int = 1,
    *,
    seed: Optional[int] = None,
    vec_env_cls: Optional[type] = None,
    vec_env_kwargs: Optional[dict] = None,
    env_kwargs: Optional[dict] = None,
    monitor_dir: Optional[str] = None,
    **options: Any,
) -> Any:
    """An SB3 ``VecEnv`` from a neutral env, a registered id, a factory or a VectorEnv.

    Args:
        env_or_id_or_factory: a registered id, a zero-argument factory of ``bridge.Env``, one
            ``bridge.Env`` (``n_envs`` must be 1), a ``bridge.VectorEnv`` of either autoreset
            mode (presented with SB3's same-step conventions), or a VectorEnv class (built with
            ``num_envs=n_envs``).
        n_envs: number of scalar envs (DummyVecEnv by default, or ``vec_env_cls``).
        seed: seeds the first reset (SB3's convention: env i gets ``seed + i``).
        vec_env_cls: SB3's ``DummyVecEnv`` or ``SubprocVecEnv`` for scalar envs. For
            ``SubprocVecEnv`` a worker that raises, dies or exceeds ``vec_env_kwargs["timeout"]``
            seconds is a ContractError naming the env and the step (see :mod:`bridge.adapters.sb3.subproc`).
        options: the export options of the sb3 row (docs/options.md): those of :func:`to_sb3` for
            scalar envs, those of the batched export for a VectorEnv.
    """
    n_envs, seed = _counts(n_envs, seed)
    given, unknown = split(options)
    if unknown:  # env kwargs go in env_kwargs: SB3's own make_vec_env has no **kwargs
        fix = "Pass env kwargs as env_kwargs={...}; export options are " + ", ".join(honoured_by("sb3"))
        raise error(SpecError, "make_vec_env option", "be an export option", repr(sorted(unknown)), fix)
    checked = declared("sb3", "make_vec_env", given, batch=None)[0]  # before anything is built
    source = env_or_id_or_factory
    first, built = resolve(source, env_kwargs, subject="make_vec_env env", batch=True, num_envs=n_envs)
    if isinstance(first, VectorEnv):
        return _batched(first, built, n_envs, seed, given)
    try:
        probe = to_sb3(first, **given)  # refuse now, before SB3 spawns anything
    except BaseException as refusal:
        if built:
            close_beside(refusal, first.close, "the env built for the check")
        raise
    if not built:  # one instance: it is the env (SB3 refuses one instance in several slots too)
        if n_envs != 1:
            fix = "Pass an id, a class or a factory to build several envs"
            raise error(SpecError, "make_vec_env n_envs", "be 1 for a single env instance", n_envs, fix)
        factory: Callable[[], Env] = functools.partial(_same, first)
    else:
        probe.close()
        factory = functools.partial(_resolved, source, env_kwargs)
    # SB3's own two classes check each batch whole before any env moves (subproc.py): then that is
    # the one action check of a step, and each env only decodes; with check_actions=False, neither checks
    ours = vec_env_cls in (None, DummyVecEnv, SubprocVecEnv)
    invalid_batch = probe.action_lowering.invalid_batch if checked["check_actions"] else None
    make = functools.partial(_export, factory, {**given, "check_actions": False} if ours else given)
    if vec_env_cls is SubprocVecEnv:  # worker faults name the env and the step (subproc.py)
        make = reporting_factory(make)
    vec_env_cls = sb3_vec_env_cls(vec_env_cls, repr(probe.neutral), invalid_batch)
    return env_util.make_vec_env(
        make, n_envs=n_envs, seed=seed, vec_env_cls=vec_env_cls, vec_env_kwargs=vec_env_kwargs, monitor_dir=monitor_dir
    )


def _counts(n_envs: Any, seed: Any) -> Tuple[int, Optional[int]]:
    """``n_envs`` and ``seed`` as Python ints (Gymnasium takes no numpy seed), refused before anything
    is built when they are not whole numbers in range (SB3 raised IndexError for 0 envs)."""
    whole = (int, np.integer)
    if isinstance(n_envs, bool) or not isinstance(n_envs, whole) or n_envs < 1:
        raise error(SpecError, "make_vec_env n_envs", "be an int >= 1", repr(n_envs), "Pass e.g. n_envs=4")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, whole) or seed < 0):
        fix = "Pass e.g. seed=0 (env i is seeded with seed + i)"
        raise error(SpecError, "make_vec_env seed", "be a non-negative int or None", repr(seed), fix)
    return int(n_envs), None if seed is None else int(seed)


def _export(factory: Callable[[], Env], options: Dict[str, Any]) -> SB3Env:
    return to_sb3(factory(), **options)


def _same(env: Env) -> Env:
    return env


def _resolved(source: Any, env_kwargs: Optional[dict]) -> Env:
    return resolve(source, env_kwargs, subject="make_vec_env env")[0]


def _batched(vector_env: VectorEnv, built: bool, n_envs: int, seed: Optional[int], options: Dict[str, Any]) -> Any:
    from bridge.adapters.sb3.vec import BatchedVecEnv

    try:
        if n_envs not in (1, vector_env.num_envs):
            expectation = f"be 1 or the VectorEnv's num_envs ({vector_env.num_envs})"
            raise error(SpecError, "make_vec_env n_envs", expectation, n_envs, "Size the VectorEnv itself")
        vec = BatchedVecEnv(vector_env, **options)
    except BaseException as refusal:
        if built:
            close_beside(refusal, vector_env.close, "the VectorEnv built here")
        raise
    vec.seed(seed)
    return vec

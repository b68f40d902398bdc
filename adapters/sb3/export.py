"""Stable-Baselines3 2.x on neutral envs: ``to_sb3`` and ``make_vec_env``.

Scalar envs go through :func:`bridge.adapters.gymnasium.to_gymnasium` into SB3's own
``DummyVecEnv`` / ``SubprocVecEnv`` (with SB3's ``Monitor``); a :class:`bridge.VectorEnv` becomes a
:class:`~bridge.adapters.sb3.vec.BatchedVecEnv` stepped as one numpy batch. What SB3 cannot train
on (a hybrid or Dict action, an integer Box action) is refused here with the reason.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional, Union

from bridge.adapters.gymnasium.export import GymnasiumEnv, to_gymnasium
from bridge.adapters.sb3.lowering import sb3_refusal
from bridge.adapters.sb3.subproc import reporting_factory
from bridge.adapters.sb3.subproc import vec_env_cls as sb3_vec_env_cls
from bridge.compat import optional_import

from bridge.env import Env
from bridge.errors import SpecError, message
from bridge.vector import VectorEnv

optional_import("stable_baselines3", "the SB3 export")
from stable_baselines3.common import env_util  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv  # noqa: E402

__all__ = ["make_vec_env", "to_sb3"]


def to_sb3(env: Union[Env, str], **options: Any) -> GymnasiumEnv:
    """:func:`to_gymnasium`, plus SB3's own refusals (raised as ConversionError).

    float64 Box observations (MATLAB's "double") are presented as float32 unless
    ``float64_as_float32=False``: SB3's policies compute in float32, so this is the rounding SB3
    would do anyway, done once at the boundary; the "sb3" check profile reports it.
    """
    options.setdefault("float64_as_float32", True)
    export = to_gymnasium(env, **options)
    error = sb3_refusal(export.neutral.action_space, export)
    if error is not None:
        if isinstance(env, str):  # built here from an id; a caller's env stays theirs
            export.close()
        raise error
    return export


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
        options: export options for :func:`to_gymnasium` (image_layout, check_actions, ...).
    """
    source = env_or_id_or_factory
    if isinstance(source, type) and issubclass(source, VectorEnv):
        source = source(num_envs=n_envs, **(env_kwargs or {}))
    if isinstance(source, VectorEnv):
        return _batched(source, n_envs, seed, options)
    factory = _scalar_factory(source, n_envs, env_kwargs)
    if factory is None:  # the factory made a VectorEnv
        return _batched(source(**(env_kwargs or {})), n_envs, seed, options)
    probe = to_sb3(factory(), **options)  # refuse now, before SB3 spawns anything
    if not isinstance(source, Env):
        probe.close()
    make = functools.partial(_export, factory, options)
    if vec_env_cls is SubprocVecEnv:  # worker faults name the env and the step (subproc.py)
        make = reporting_factory(make)
    # SB3's own classes, checking each batch whole before any env moves (subproc.py)
    vec_env_cls = sb3_vec_env_cls(vec_env_cls, repr(probe.neutral), probe.action_lowering.invalid_batch)
    return env_util.make_vec_env(
        make, n_envs=n_envs, seed=seed, vec_env_cls=vec_env_cls, vec_env_kwargs=vec_env_kwargs, monitor_dir=monitor_dir
    )


def _export(factory: Callable[[], Env], options: Dict[str, Any]) -> GymnasiumEnv:
    return to_sb3(factory(), **options)


def _scalar_factory(source: Any, n_envs: int, env_kwargs: Optional[dict]) -> Optional[Callable[[], Env]]:
    from bridge.registry import make

    if isinstance(source, str):
        return functools.partial(make, source, **(env_kwargs or {}))
    if isinstance(source, Env):
        if n_envs != 1:
            raise SpecError(
                message(
                    "make_vec_env n_envs",
                    "be 1 for a single env instance",
                    n_envs,
                    "Pass an id or a factory to build several envs",
                )
            )
        return lambda: source
    if callable(source):
        probe = source(**(env_kwargs or {}))
        if isinstance(probe, VectorEnv):
            probe.close()
            return None
        if isinstance(probe, Env):
            probe.close()
            return functools.partial(source, **(env_kwargs or {}))
        raise SpecError(
            message(
                "make_vec_env factory",
                "return a bridge.Env or a bridge.VectorEnv",
                type(probe).__name__,
                "Return a neutral env",
            )
        )
    expectation = "be an id, a bridge.Env, a factory or a bridge.VectorEnv"
    raise SpecError(
        message("make_vec_env env", expectation, type(source).__name__, "Pass e.g. 'envbridge/GridWorld-v0'")
    )


def _batched(vector_env: VectorEnv, n_envs: int, seed: Optional[int], options: Dict[str, Any]) -> Any:
    from bridge.adapters.sb3.vec import BatchedVecEnv

    if n_envs not in (1, vector_env.num_envs):
        expectation = f"be 1 or the VectorEnv's num_envs ({vector_env.num_envs})"
        raise SpecError(message("make_vec_env n_envs", expectation, n_envs, "Size the VectorEnv itself"))
    unknown = set(options) - {"image_layout", "check_actions", "float64_as_float32"}
    if unknown:
        expectation = "be image_layout, check_actions or float64_as_float32"
        raise SpecError(
            message("make_vec_env options for a VectorEnv", expectation, sorted(unknown), "Drop the other options")
        )
    vec = BatchedVecEnv(vector_env, **options)
    vec.seed(seed)
    return vec

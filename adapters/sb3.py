"""Stable-Baselines3 2.x on neutral envs: ``make_vec_env``, ``to_sb3``, the "sb3" check profile.

Scalar envs go through :func:`bridge.adapters.gymnasium.to_gymnasium` into SB3's own
``DummyVecEnv`` / ``SubprocVecEnv`` (with SB3's ``Monitor``); a :class:`bridge.VectorEnv` becomes a
:class:`~bridge.adapters.sb3_vec.BatchedVecEnv` stepped as one numpy batch. What SB3 cannot train
on (a hybrid or Dict action, an integer Box action) is refused here with the reason.
The CLI's ``envbridge demo`` and ``envbridge train sb3`` live in :mod:`bridge.adapters.sb3_train`.
"""

from __future__ import annotations

import contextlib
import functools
import io
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np
from bridge.adapters._lowering import refuse
from bridge.adapters.gymnasium import GymnasiumEnv, to_gymnasium
from bridge.adapters.gymnasium_check import export_or_report, run_runtime_checker
from bridge.compat import optional_import

from bridge import spaces as ns
from bridge.checker import Report, register_profile
from bridge.env import Env
from bridge.errors import ConversionError, SpecError, message
from bridge.vector import VectorEnv

optional_import("stable_baselines3", "bridge.adapters.sb3")
import gymnasium  # noqa: E402
from stable_baselines3.common import env_util  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv  # noqa: E402

__all__ = ["make_vec_env", "to_sb3", "policy_for", "sb3_refusal", "demo_command", "train_command"]

T = "sb3"


def sb3_refusal(neutral_action_space: ns.Space, export: GymnasiumEnv) -> Optional[ConversionError]:
    """The reason SB3 cannot train on this export, as a ConversionError, or None."""
    action = export.action_space
    if isinstance(action, gymnasium.spaces.Dict):
        kinds = {type(s).__name__ for s in action.spaces.values()}
        hybrid = "Box" in kinds and len(kinds) > 1
        what = "a hybrid (discrete + continuous) action" if hybrid else "a composite action"
        return refuse(
            "action space for SB3",
            "be a single Box, Discrete, MultiDiscrete or MultiBinary (SB3's policies have one action distribution)",
            f"{what}: {neutral_action_space!r}",
            "Use the plain Gymnasium export (to_gymnasium) with an algorithm that supports it, "
            "or redesign the action as one MultiDiscrete or one Box",
        )
    if isinstance(action, gymnasium.spaces.Box) and action.dtype.kind != "f":
        return refuse(
            "action space for SB3",
            "be a float Box (SB3 emits continuous actions as floats)",
            repr(neutral_action_space),
            "Declare a float Box and round in the env, or use Discrete/MultiDiscrete",
        )
    return None


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


def policy_for(observation_space: Any) -> str:
    """SB3's policy name for an exported observation space: MultiInput / Cnn / Mlp."""
    from stable_baselines3.common.preprocessing import is_image_space

    if isinstance(observation_space, gymnasium.spaces.Dict):
        return "MultiInputPolicy"
    if is_image_space(observation_space, check_channels=False):
        return "CnnPolicy"
    return "MlpPolicy"


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
            ``bridge.Env`` (``n_envs`` must be 1), a ``bridge.VectorEnv`` in "same-step" mode,
            or a VectorEnv class (built with ``num_envs=n_envs, autoreset_mode="same-step"``).
        n_envs: number of scalar envs (DummyVecEnv by default, or ``vec_env_cls``).
        seed: seeds the first reset (SB3's convention: env i gets ``seed + i``).
        vec_env_cls: SB3's ``DummyVecEnv`` or ``SubprocVecEnv`` for scalar envs. For
            ``SubprocVecEnv`` a worker that raises, dies or exceeds ``vec_env_kwargs["timeout"]``
            seconds is a ContractError naming the env and the step (see ``sb3_subproc``).
        options: export options for :func:`to_gymnasium` (image_layout, check_actions, ...).
    """
    source = env_or_id_or_factory
    if isinstance(source, type) and issubclass(source, VectorEnv):
        source = source(num_envs=n_envs, autoreset_mode="same-step", **(env_kwargs or {}))
    if isinstance(source, VectorEnv):
        return _batched(source, n_envs, seed, options)
    factory = _scalar_factory(source, n_envs, env_kwargs)
    if factory is None:  # the factory made a VectorEnv
        return _batched(source(**(env_kwargs or {})), n_envs, seed, options)
    probe = to_sb3(factory(), **options)  # refuse now, before SB3 spawns anything
    if not isinstance(source, Env):
        probe.close()
    make = functools.partial(_export, factory, options)
    if vec_env_cls is SubprocVecEnv:  # worker faults name the env and the step (sb3_subproc)
        from bridge.adapters.sb3_subproc import reporting_factory, reporting_vec_env_cls

        make, vec_env_cls = reporting_factory(make), reporting_vec_env_cls(repr(probe.neutral))
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
    from bridge.adapters.sb3_vec import BatchedVecEnv

    if vector_env.autoreset_mode != "same-step":
        raise refuse(
            "vector env autoreset_mode for SB3",
            "be 'same-step' (SB3 resets on the ending step)",
            vector_env.autoreset_mode,
            "Build the VectorEnv with autoreset_mode='same-step'",
        )
    if n_envs not in (1, vector_env.num_envs):
        expectation = f"be 1 or the VectorEnv's num_envs ({vector_env.num_envs})"
        raise SpecError(message("make_vec_env n_envs", expectation, n_envs, "Size the VectorEnv itself"))
    unknown = set(options) - {"image_layout", "check_actions"}
    if unknown:
        expectation = "be image_layout or check_actions"
        raise SpecError(
            message("make_vec_env options for a VectorEnv", expectation, sorted(unknown), "Drop the other options")
        )
    vec = BatchedVecEnv(vector_env, **options)
    vec.seed(seed)
    return vec


# -- the "sb3" check profile -----------------------------------------------------------------------
def sb3_profile(env: Any, report: Report, seed: int) -> None:
    """SB3's refusals, ``stable_baselines3.common.env_checker.check_env``, and policy advice."""
    from stable_baselines3.common.env_checker import check_env

    export = export_or_report(env, report, T, float64_as_float32=True)  # what to_sb3 builds
    if export is None:
        return
    error = sb3_refusal(export.neutral.action_space, export)
    if error is not None:
        report.add(T, "error", *error.parts, check="lowering")
        return
    with contextlib.redirect_stdout(io.StringIO()):  # SB3 prints a note about goal envs
        run_runtime_checker(
            report, T, "stable_baselines3.common.env_checker.check_env", lambda: check_env(export, warn=True)
        )
    _advise(export, report)
    export.reset(seed=seed)


def _float64_paths(space: ns.Space, path: str = "observation") -> List[str]:
    if isinstance(space, ns.Dict):
        return [p for k, sub in space.items() for p in _float64_paths(sub, f"{path}[{k!r}]")]
    if isinstance(space, ns.Tuple):
        return [p for i, sub in enumerate(space) for p in _float64_paths(sub, f"{path}[{i}]")]
    return [path] if isinstance(space, ns.Box) and space.dtype == np.float64 else []


def _advise(export: GymnasiumEnv, report: Report) -> None:
    wide = _float64_paths(export.neutral.observation_space)
    if wide:
        report.add(
            T,
            "info",
            ", ".join(wide),
            "reach SB3 as float32 (its policies compute in float32)",
            "float64",
            "Nothing to do; to_sb3(env, float64_as_float32=False) keeps float64 if you need it",
            "dtype",
        )
    policy = policy_for(export.observation_space)
    why = {
        "MultiInputPolicy": "a Dict observation",
        "CnnPolicy": "an image observation",
        "MlpPolicy": "a flat observation",
    }[policy]
    fix = f"Use e.g. PPO({policy!r}, vec_env)"
    report.add(T, "info", "the SB3 policy", f"be {policy!r} for {why}", repr(export.observation_space), fix, "policy")
    action = export.neutral.action_space
    if (
        type(action) is ns.Box
        and not export.normalize_actions
        and ((action.low != -1).any() or (action.high != 1).any())
    ):
        bounds = f"[{action.low.min()}, {action.high.max()}]"
        fix = "Export with to_gymnasium(env, normalize_actions=True)"
        report.add(
            T, "info", "the action Box for SB3", "be [-1, 1] (SB3 squashes/clips to the Box)", bounds, fix, "policy"
        )


register_profile(T, sb3_profile)


def demo_command(args: Any) -> int:
    """``envbridge demo``: PPO on GridWorld through the export vs random play (see sb3_train)."""
    from bridge.adapters.sb3_train import demo_command as run

    return run(args)


def train_command(args: Any) -> int:
    """``envbridge train sb3``: train an SB3 algorithm on a registered env (see sb3_train)."""
    from bridge.adapters.sb3_train import train_command as run

    return run(args)


from bridge.adapters import sb3_view as _view  # noqa: E402,F401  (registers the conformance view)

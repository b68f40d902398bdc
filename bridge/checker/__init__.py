"""``bridge.check``: run check profiles ("core", and one per runtime) into a :class:`Report`.

The runtimes and their profiles come from the one runtime table (:mod:`bridge.runtimes`); a
profile is loaded on first use. A runtime whose framework is missing becomes an error entry that
says what to install in this interpreter's era.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Union

from bridge import runtimes
from bridge.checker.core import core_profile
from bridge.checker.report import Problem, Report
from bridge.env import Env
from bridge.errors import ContractError, MissingDependencyError, SpecError, message
from bridge.loading import resolve
from bridge.vector import VectorEnv

__all__ = ["Problem", "Report", "check", "TARGETS"]

Profile = Callable[[Any, Report, int, Dict[str, Any]], None]
TARGETS = ("core",) + tuple(runtimes.RUNTIMES)


def _profile(target: str, report: Report) -> Optional[Profile]:
    if target == "core":
        return lambda env, report, seed, options: core_profile(env, report, seed)
    missing = runtimes.probe(target)
    try:
        if missing:
            raise ImportError(f"No module named {missing[0]!r}")
        return runtimes.load(runtimes.get(target).profile)
    except (MissingDependencyError, ImportError) as e:
        report.add(
            target,
            "error",
            f"the {target} target",
            "have its framework installed",
            f"{type(e).__name__}: {e}",
            runtimes.install_hint(target),
            "import",
        )
        return None


def check(
    env: Any,
    *,
    targets: Union[None, str, Iterable[str]] = None,
    seed: int = 0,
    options: Optional[Dict[str, Dict[str, Any]]] = None,
) -> Report:
    """Check ``env`` (a bridge.Env, a factory of one, or a registered id) against the core contract
    and ``targets``.

    Args:
        env: the environment; an export of one (``to_gymnasium(env, normalize_actions=True)``,
            checked as the neutral env with that export's options); a zero-argument callable that
            builds one (the strong-determinism check replays in a fresh instance from it); or an
            id for :func:`bridge.make`.
        targets: runtime names besides "core" (e.g. ``["gymnasium", "sb3"]``); core always runs.
            None (the default) checks every runtime installed in this interpreter, as
            ``envbridge check`` does; ``"core"`` checks the core contract alone.
        seed: the seed for resets and for the action tapes.
        options: export options per target, e.g. ``{"sb3": {"normalize_actions": True}}``.
    """
    factory, exported, batched_export = None, {}, None
    if not isinstance(env, (Env, VectorEnv)) and callable(getattr(env, "exported", None)):
        found, exported = env.exported()  # an export: check its neutral env with the export's options
        batched_export = env if isinstance(found, VectorEnv) else None
        env = found
    if isinstance(env, VectorEnv) or (isinstance(env, type) and issubclass(env, VectorEnv)):
        return _check_batch(env, targets, seed, exported, options, batched_export)
    built = not isinstance(env, Env)  # an id or a factory: the env is built, and closed, here
    if isinstance(env, str):
        from bridge.registry import make

        name, env = env, make(env)
    else:
        if not isinstance(env, Env):  # a class or factory: the one resolver builds it (its errors named)
            factory = env
            env, _ = resolve(factory, subject="env", batch=True)
            if isinstance(env, VectorEnv):
                env.close()
                return _check_batch(factory, targets, seed, exported, options, None)
        unwrapped = getattr(env, "unwrapped", env)
        name = getattr(getattr(unwrapped, "spec", None), "id", None) or type(unwrapped).__name__
    wanted = _wanted(targets)
    given = dict(options or {})
    _known_targets(wanted, given)
    options = _merged(exported, given, wanted)
    report = Report(name)
    report.make_env = factory
    try:
        for target in wanted:
            report.targets.append(target)
            profile = _profile(target, report)
            if profile is not None:
                try:
                    profile(env, report, seed, dict(options.get(target, {})))
                except ContractError as e:  # the env broke a contract outside a runtime's own checker:
                    # a check always reports (in every era), with the guard's own sentence and fix
                    report.add_exception(target, e, f"the {target} check", "Fix the env", "contract")
    finally:
        if built:  # an env hosted in a process (Octave's .m functions) leaves none running
            env.close()
    return report


def _wanted(targets: Union[None, str, Iterable[str]]) -> List[str]:
    if targets is None:
        targets = runtimes.available()
    wanted = ["core"] + [t for t in ([targets] if isinstance(targets, str) else list(targets)) if t != "core"]
    for target in wanted:
        if target not in TARGETS:
            raise SpecError(message("check target", f"be one of {sorted(TARGETS)}", target, "Pick known targets"))
    return wanted


def _known_targets(wanted: List[str], given: Dict[str, Any]) -> None:
    unknown = sorted(set(given) - set(wanted))
    if unknown:
        fix = "Name the target in targets=[...] too, or drop its options"
        raise SpecError(message("check options", f"name only checked targets {wanted}", unknown, fix))


def _merged(exported: Dict[str, Any], given: Dict[str, Any], wanted: List[str]) -> Dict[str, Dict[str, Any]]:
    """The export's own options first, then the caller's (per target)."""
    return {t: {**exported.get(t, {}), **given.get(t, {})} for t in wanted}


def _check_batch(
    source: Any,
    targets: Union[None, str, Iterable[str]],
    seed: int,
    exported: Dict[str, Any],
    options: Optional[Dict[str, Dict[str, Any]]],
    export: Any,
) -> Report:
    """A VectorEnv (instance, class or factory) or a batched export: :mod:`bridge.checker.vector`."""
    from bridge.checker.vector import check_vector

    wanted = _wanted(targets)
    given = dict(options or {})
    _known_targets(wanted, given)
    name = source.__name__ if isinstance(source, type) else type(source).__name__
    return check_vector(source, Report(name), wanted, seed, _merged(exported, given, wanted), export)

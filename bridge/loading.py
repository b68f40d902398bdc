"""The one env resolver: what counts as an env, for every export, every CLI command and RLlib's
remote env runners.

:func:`resolve` takes a registered id (with its make kwargs), ``module:attr`` or
``path/to/file.py:attr`` (after importing the user's modules that register ids, ``--import``), an
env of another framework as ``scheme:id`` (:data:`SCHEMES`: ``gymnasium:CartPole-v1``,
``gym:CartPole-v1``, ``dm_control:cartpole-swingup``; the rest and the make kwargs go to that
framework's importer), a file an importer of :data:`SUFFIXES` builds (``path/to/createEnv.m``:
a MATLAB function that returns an rlFunctionEnv, run by GNU Octave), a factory, a
:class:`bridge.Env` class or instance, and (for batched exports) a :class:`bridge.VectorEnv` class
or instance; it says whether it built the env (so a refused export
closes what it built, never the caller's env). :func:`load_env` is the same for a string alone.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any, Dict, Iterable, Optional, Tuple

from bridge import runtimes
from bridge.env import Env
from bridge.errors import BridgeError, ContractError, MissingDependencyError, SpecError, close_beside, error, message
from bridge.registry import import_user_module, load_entry_point, make, registry, suggestion
from bridge.regular_file import Refusal, opened
from bridge.vector import VectorEnv

__all__ = ["import_modules", "env_source", "load_env", "importable_cwd", "resolve", "SOURCES", "SCHEMES", "SUFFIXES"]

# what resolve() takes, for messages
SOURCES = "a bridge.Env, its class, a factory, a registered id, module:attr or path/to/file.py:attr"

# scheme -> "module:attr" of the importer that builds a neutral env from the rest of ``scheme:rest``
# (with the make kwargs); loaded on first use, so naming a scheme imports nothing. One entry each.
SCHEMES: Dict[str, str] = {
    "gymnasium": "bridge.adapters.importers.gymnasium:from_gymnasium",
    "gym": "bridge.adapters.importers.gym:from_gym",
    "dm_control": "bridge.adapters.dm_env.importer:from_dm_control",
}

# a file suffix -> "module:attr" of the importer that builds an env from the file (with the make
# kwargs), loaded on first use: a MATLAB function that creates an rlFunctionEnv, run by Octave
SUFFIXES: Dict[str, str] = {".m": "bridge.adapters.matlab.octave.source:from_m_file"}

_FORMS = "module:attr or path/to/file.py:attr"
_NAMES = f"a registered id, {_FORMS}"


def importable_cwd() -> None:
    """Make the current directory importable (an entry-point script does not, ``python -m`` does).

    Appended, not prepended: installed packages win, so a folder that holds a package of the same
    name (a checkout of envbridge itself) cannot shadow them, in this process or its workers.
    """
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)


def import_modules(names: Iterable[str]) -> None:
    """Import each module (a dotted name, or a ``.py`` file) so the ids it registers exist."""
    for name in names:
        if name.endswith(".py"):
            _import_file(name)
            continue
        fix = f"Check the spelling, run from the folder that holds it, or pass the file as --import path/{name}.py"
        import_user_module(name, "--import module", fix)


def _import_file(path: str) -> Any:
    """Import ``path/to/file.py`` as module ``file`` (its folder goes on sys.path, so worker
    processes can import it too); refuse when that name already means another module."""
    if not os.path.exists(path):
        raise SpecError(message("env file", "exist", repr(path), "Check the path (relative to the current folder)"))
    with opened(path, Refusal(f"env file {path!r}", "Point at the .py file itself", SpecError)):
        pass  # a FIFO, a directory or a device named x.py is refused by what it is (never opened blocking)
    folder, stem = os.path.split(os.path.abspath(path))
    stem = stem[: -len(".py")]
    if "." in stem:  # import_module("dotted.name") looks for a package "dotted": "No module named 'dotted'"
        fix = f"Rename the file without the dot, e.g. {stem.replace('.', '_')}.py"
        got = f"{os.path.basename(path)!r} (Python reads a dot in a module name as a package)"
        raise SpecError(message("env file name", "be importable as one module (no dot before .py)", got, fix))
    if folder not in sys.path:
        sys.path.append(folder)  # after the installed packages, as importable_cwd
    module = import_user_module(stem, f"env file {path}")
    found = getattr(module, "__file__", None)
    if found is None or not os.path.samefile(found, path):
        got = f"{stem!r} is already {found or 'a built-in module'}"
        raise SpecError(message(f"the module name of {path}", "be free", got, "Rename the file"))
    return module


def env_source(name: str) -> Any:
    """What ``name`` names: the id itself (str), or the class, factory or instance at ``attr``."""
    if not isinstance(name, str) or not name:
        raise SpecError(message("env", f"be {_NAMES}", repr(name), "Pass e.g. envbridge/GridWorld-v0"))
    if name in registry:
        return name
    suffix = os.path.splitext(name)[1]
    if suffix in SUFFIXES:
        return _imported(name, SUFFIXES[suffix], name)
    if ":" not in name:
        known = suggestion(name)
        known += "" if known.endswith("?") else "."
        fix = f"{known} If a module of yours registers it, pass --import MODULE; or name the env as {_FORMS}"
        raise SpecError(message("env id", "be registered", repr(name), fix))
    scheme, _, rest = name.partition(":")
    if scheme in SCHEMES:
        return _imported(name, SCHEMES[scheme], rest)
    where, _, attr = name.rpartition(":")
    if where.endswith(".py"):
        target = _import_file(where)
        for part in attr.split("."):
            if not hasattr(target, part):
                fix = "Check the name after the colon"
                raise SpecError(message(f"the attribute of {where}", "exist", repr(attr), fix))
            target = getattr(target, part)
    else:
        target = load_entry_point(name)
    if isinstance(target, str):  # an id string would be looked up again: say what it is instead
        raise _not_an_env(name, target)
    return target


def _imported(name: str, importer: str, rest: str) -> Any:
    """A factory of the neutral env over another framework's env ``rest`` (named ``name`` in messages)."""
    if not rest:
        fix = f"Name the env after the colon, e.g. {name}CartPole-v1"
        raise SpecError(message("env", "name an id after the scheme", repr(name), fix))

    def build(**kwargs: Any) -> Any:
        return runtimes.load(importer)(rest, **kwargs)

    build.__qualname__ = build.__name__ = name
    return build


def _not_an_env(name: str, found: Any) -> SpecError:
    got = f"{name} gives {type(found).__name__}"
    fix = "Point at a bridge.Env subclass, a function that returns one, or an instance"
    return SpecError(message("env", "be a bridge.Env", got, fix))


def load_env(name: str) -> Env:
    """A new env for ``name`` (the instance itself when ``attr`` names one)."""
    return resolve(name, subject="env")[0]


def resolve(
    source: Any,
    kwargs: Optional[Dict[str, Any]] = None,
    *,
    subject: str = "env",
    batch: bool = False,
    num_envs: Optional[int] = None,
) -> Tuple[Any, bool]:
    """``(env, built)``: the env ``source`` names, and whether it was built here (then the caller
    owns it and closes it on a refusal; an instance passed in stays the caller's).

    Args:
        source: see the module doc; a string is an id first, then ``module:attr``/``file.py:attr``.
        kwargs: given to the id's entry point, the class or the factory (refused with an instance).
        subject: how messages name the argument, e.g. ``"to_gymnasium env"``.
        batch: a :class:`bridge.VectorEnv` (instance, class or factory result) is accepted too.
        num_envs: what a VectorEnv class is built with (``cls(num_envs=n, **kwargs)``).
    """
    kwargs = dict(kwargs or {})
    kinds = (Env, VectorEnv) if batch else (Env,)
    if isinstance(source, kinds):
        if kwargs:
            fix = "Build the env with them yourself, or pass its id or factory"
            raise error(SpecError, f"{subject} kwargs", "go with an id, a class or a factory", sorted(kwargs), fix)
        return source, False
    named = source
    if isinstance(source, str):
        target = env_source(source)
        if isinstance(target, str):
            if kwargs and target in registry:
                _check_kwargs(load_entry_point(registry[target].entry_point), kwargs, subject)
            return make(target, **kwargs), True
        if isinstance(target, kinds):
            return resolve(target, kwargs, subject=subject, batch=batch)
        source = target
    if not callable(source):
        raise _not_a_source(subject, source, batch)
    if isinstance(source, type) and issubclass(source, VectorEnv):
        if not batch:
            fix = "Export it with the runtime's batched export (to_gymnasium_vector, make_vec_env, ...)"
            raise error(SpecError, subject, "be a single env", f"the VectorEnv class {source.__name__}", fix)
        if num_envs is not None:
            kwargs.setdefault("num_envs", num_envs)
    _check_kwargs(source, kwargs, subject)
    env = _call(source, kwargs, named)
    if not isinstance(env, kinds):
        refusal = _not_a_source(subject, f"a {type(env).__name__} from {_name(named)}()", batch)
        env_close = getattr(env, "close", None)
        if isinstance(env, (Env, VectorEnv)) and callable(env_close):
            # a VectorEnv where one env was wanted: refused, nothing left open (a close error goes beside)
            close_beside(refusal, env_close, f"the {type(env).__name__} {_name(named)}() built")
        raise refusal
    return env, True


def _check_kwargs(factory: Any, kwargs: Dict[str, Any], subject: str) -> None:
    """Refuse keyword arguments ``factory`` (a class or function) does not take, before calling it:
    its own TypeError would come from inside the user's ``__init__`` (RLlib's env_config
    ``{"nope": 1}`` reached ``GridWorld.__init__``). A factory with ``**kwargs`` takes anything."""
    if not kwargs:
        return
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):  # a callable without a signature: its call speaks for itself
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    names = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(k for k in kwargs if k not in names)
    if unknown:
        takes = f"{_name(factory)} takes ({', '.join(names)})" if names else f"{_name(factory)} takes (none)"
        fix = "Pass only those (the make kwargs, or RLlib's env_config)"
        raise error(SpecError, f"{subject} kwargs", f"be keyword arguments {takes}", unknown, fix)


def _call(factory: Any, kwargs: Dict[str, Any], named: Any) -> Any:
    """Call the user's class or factory; what it raises is named, its traceback chained."""
    try:
        return factory(**kwargs)
    except BridgeError:
        raise
    except SystemExit as e:  # sys:exit named as a factory, or one that exits: never end the caller silently
        fix = "Point at a bridge.Env subclass or a function that returns one (building an env must not exit)"
        got = f"sys.exit({e.code!r})"
        raise error(ContractError, f"env factory {_name(named)}", "build the env without exiting", got, fix) from e
    except Exception as e:
        missing = runtimes.missing_package(e) if isinstance(e, ImportError) else ""
        if missing:  # an env package not installed where the env is built (e.g. in a host)
            raise error(
                MissingDependencyError,
                f"the package {missing!r}",
                f"be installed in {sys.executable} for env {_name(named)}",
                f"{type(e).__name__}: {e}",
                runtimes.env_package_hint(missing),
            ) from e
        fix = "Fix the factory; its exception and traceback are chained as __cause__"
        raise error(
            ContractError,
            f"env factory {_name(named)}",
            "build the env without raising",
            f"{type(e).__name__}: {e}",
            fix,
        ) from e


def _name(source: Any) -> str:
    if isinstance(source, str):
        return source
    return getattr(source, "__qualname__", None) or type(source).__name__


def _not_a_source(subject: str, got: Any, batch: bool) -> SpecError:
    shown = got if isinstance(got, str) else type(got).__name__
    what = SOURCES + (", or a bridge.VectorEnv" if batch else "")
    fix = "Pass e.g. 'envbridge/GridWorld-v0', or subclass bridge.Env"
    return error(SpecError, subject, f"be {what}", shown, fix)  # type: ignore[return-value]

"""The one env resolver: what counts as an env, for every export, every CLI command, the host and
RLlib's remote env runners.

:func:`resolve` takes a registered id (with its make kwargs), ``module:attr`` or
``path/to/file.py:attr`` (after importing the user's modules that register ids, ``--import``), an
env of another framework as ``scheme:id`` (:data:`SCHEMES`: ``gymnasium:CartPole-v1``,
``gym:CartPole-v1``, ``dm_control:cartpole-swingup``, and ``gym:module:Class`` for a class of that
framework; the rest and the make kwargs go to that framework's importer), a file an importer of
:data:`SUFFIXES` builds (``path/to/createEnv.m``: a MATLAB function that returns an rlFunctionEnv,
run by GNU Octave), a factory, a :class:`bridge.Env` class or instance, a gym, Gymnasium or dm_env
env class or instance (or a factory of one: each goes through its importer,
:data:`bridge.foreign.FOREIGN`), and (for batched exports) a :class:`bridge.VectorEnv` class or
instance; it says whether it built the env (so a refused export closes what it built, never the
caller's env). ``wrappers`` (``module:Class`` or classes, innermost first) wrap the env as its
framework builds it, and ``import_options`` (``drop_keys``, ...) go to the importer: the command
line's ``--wrapper`` and ``--drop-key``, the host's ``remote(wrappers=, import_options=)``, all
through :class:`Source`. :func:`load_env` is the same for a string alone.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any, Dict, Optional, Sequence, Tuple

from bridge import runtimes
from bridge.env import Env
from bridge.errors import BridgeError, ContractError, MissingDependencyError, SpecError, close_beside, error, message
from bridge.foreign import FOREIGN, foreign_importer, import_with, load_wrapper
from bridge.registry import import_user_module, load_entry_point, make, registry, suggestion
from bridge.user_modules import FORMS as _FORMS
from bridge.user_modules import import_modules, importable_cwd, load_attribute
from bridge.vector import VectorEnv

__all__ = [
    "import_modules",
    "env_source",
    "load_env",
    "importable_cwd",
    "resolve",
    "foreign_importer",
    "Source",
    "SOURCES",
    "SCHEMES",
    "SUFFIXES",
    "FOREIGN",
]

# what resolve() takes, for messages
SOURCES = (
    "a bridge.Env, a gym, Gymnasium or dm_env env, its class, a factory, a registered id, module:attr or "
    "path/to/file.py:attr"
)

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

_NAMES = f"a registered id, {_FORMS}"


def env_source(name: str) -> Any:
    """What ``name`` names: the id itself (str), or the class, factory or instance at ``attr``."""
    if not isinstance(name, str) or not name:
        raise SpecError(message("env", f"be {_NAMES}", repr(name), "Pass e.g. envbridge/GridWorld-v0"))
    if name in registry:
        return name
    if os.path.splitext(name)[1] in SUFFIXES:
        return Source(name)
    if ":" not in name:
        known = suggestion(name)
        known += "" if known.endswith("?") else "."
        fix = f"{known} If a module of yours registers it, pass --import MODULE; or name the env as {_FORMS}"
        raise SpecError(message("env id", "be registered", repr(name), fix))
    scheme, _, rest = name.partition(":")
    if scheme in SCHEMES:
        if not rest:
            fix = f"Name the env after the colon, e.g. {name}CartPole-v1"
            raise SpecError(message("env", "name an id after the scheme", repr(name), fix))
        return Source(name)
    target = load_attribute(name)
    if isinstance(target, str):  # an id string would be looked up again: say what it is instead
        raise _not_an_env(name, target)
    return target


def _not_an_env(name: str, found: Any) -> SpecError:
    got = f"{name} gives {type(found).__name__}"
    fix = "Point at a bridge.Env subclass, a function that returns one, or an instance"
    return SpecError(message("env", "be a bridge.Env", got, fix))


class Source:
    """An env named by a string, with its wrappers and importer options: plain data (it pickles into
    RLlib's env runners and goes to a host as it is), and a factory for :func:`resolve`.

    Attributes:
        name: what :func:`env_source` takes (an id, ``module:attr``, ``scheme:id``).
        wrappers: ``module:Class`` names (or classes), innermost first.
        import_options: keywords of the importer (``drop_keys``, ``determinism``, ...).
    """

    def __init__(self, name: str, wrappers: Sequence[Any] = (), import_options: Optional[Dict[str, Any]] = None):
        self.name, self.wrappers, self.import_options = name, tuple(wrappers), dict(import_options or {})

    def __call__(self, **kwargs: Any) -> Any:
        suffix = os.path.splitext(self.name)[1]
        if suffix in SUFFIXES:  # a file an importer builds (a MATLAB .m function)
            return import_with(SUFFIXES[suffix], self.name, kwargs, self.import_options, self.wrappers, self.name)
        scheme, _, rest = self.name.partition(":")
        if scheme not in SCHEMES:
            return resolve(self.name, kwargs, wrappers=self.wrappers, import_options=self.import_options)[0]
        importer = SCHEMES[scheme]
        if scheme != "dm_control" and ":" in rest:  # gym:module:Class (or gymnasium:package:Id-v0)
            found = _scheme_attribute(rest, self.name)
            if found is not None:
                return resolve(found, kwargs, wrappers=self.wrappers, import_options=self.import_options)[0]
        return import_with(importer, rest, kwargs, self.import_options, self.wrappers, self.name)

    def __repr__(self) -> str:
        return f"Source({self.name!r}, wrappers={list(self.wrappers)}, import_options={self.import_options})"


def _scheme_attribute(rest: str, named: str) -> Any:
    """The class or factory ``module:attr`` names after a scheme, or None when ``attr`` is an id of the
    framework's registry (``gymnasium:minigrid:MiniGrid-Empty-5x5-v0``: the module registers it)."""
    where, _, attr = rest.rpartition(":")
    if where.endswith(".py"):
        return load_attribute(rest)
    try:
        module = importlib.import_module(where)
    except Exception as e:
        absent = _missing_dependency(e, named)
        if absent is not None:  # MiniGrid not installed: its extra and pip line
            raise absent from e
        import_user_module(where, f"the package of {named}")  # any other failure, named as for --import
        raise
    return load_attribute(rest) if hasattr(module, attr.split(".")[0]) else None


def load_env(name: Any) -> Env:
    """A new env for ``name`` (the instance itself when ``attr`` names one)."""
    return resolve(name, subject="env")[0]


def resolve(
    source: Any,
    kwargs: Optional[Dict[str, Any]] = None,
    *,
    subject: str = "env",
    batch: bool = False,
    num_envs: Optional[int] = None,
    wrappers: Sequence[Any] = (),
    import_options: Optional[Dict[str, Any]] = None,
) -> Tuple[Any, bool]:
    """``(env, built)``: the env ``source`` names, and whether it was built here (then the caller
    owns it and closes it on a refusal; an instance passed in stays the caller's).

    Args:
        source: see the module doc; a string is an id first, then ``module:attr``/``file.py:attr``.
        kwargs: given to the id's entry point, the class or the factory (refused with an instance).
        subject: how messages name the argument, e.g. ``"to_gymnasium env"``.
        batch: a :class:`bridge.VectorEnv` (instance, class or factory result) is accepted too.
        num_envs: what a VectorEnv class is built with (``cls(num_envs=n, **kwargs)``).
        wrappers: ``module:Class`` names or classes, innermost first: a foreign env's go to its
            importer (they wrap the gym/Gymnasium env), a neutral env's wrap the bridge.Env.
        import_options: the importer's keywords (``drop_keys``, ``determinism``, ``snapshot``).
    """
    kwargs, options = dict(kwargs or {}), dict(import_options or {})
    kinds = (Env, VectorEnv) if batch else (Env,)
    if isinstance(source, str):
        target = env_source(source)
        if isinstance(target, str):
            if kwargs and target in registry:
                _check_kwargs(load_entry_point(registry[target].entry_point), kwargs, subject)
            return _neutral(make(target, **kwargs), True, wrappers, options, source)
        if isinstance(target, Source) and (wrappers or options):
            target = Source(target.name, wrappers, options)
            wrappers, options = (), {}
        if isinstance(target, kinds) or foreign_importer(target) is not None and not isinstance(target, type):
            return resolve(target, kwargs, subject=subject, batch=batch, wrappers=wrappers, import_options=options)
        return _built(target, kwargs, subject, batch, num_envs, wrappers, options, source)
    if isinstance(source, kinds) or (foreign_importer(source) is not None and not isinstance(source, type)):
        if kwargs:
            fix = "Build the env with them yourself, or pass its id or factory"
            raise error(SpecError, f"{subject} kwargs", "go with an id, a class or a factory", sorted(kwargs), fix)
        if isinstance(source, kinds):
            return _neutral(source, False, wrappers, options, source)
        # a foreign instance: the neutral env over it is new, but what it wraps stays the caller's
        return import_with(foreign_importer(source), source, {}, options, wrappers, _name(source)), False
    return _built(source, kwargs, subject, batch, num_envs, wrappers, options, source)


def _built(
    source: Any,
    kwargs: Dict[str, Any],
    subject: str,
    batch: bool,
    num_envs: Optional[int],
    wrappers: Sequence[Any],
    options: Dict[str, Any],
    named: Any,
) -> Tuple[Any, bool]:
    """The env the class or factory ``source`` builds (a foreign one imported), owned by the caller."""
    kinds = (Env, VectorEnv) if batch else (Env,)
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
    importer = foreign_importer(env)
    if importer is not None and not isinstance(env, type):
        try:
            return import_with(importer, env, {}, options, wrappers, _name(named)), True
        except BaseException:
            env.close()  # built here and refused: nothing left open
            raise
    if not isinstance(env, kinds):
        refusal = _not_a_source(subject, f"a {type(env).__name__} from {_name(named)}()", batch)
        env_close = getattr(env, "close", None)
        if isinstance(env, (Env, VectorEnv)) and callable(env_close):
            # a VectorEnv where one env was wanted: refused, nothing left open (a close error goes beside)
            close_beside(refusal, env_close, f"the {type(env).__name__} {_name(named)}() built")
        raise refusal
    return _neutral(env, True, wrappers, options, named)


def _neutral(env: Any, built: bool, wrappers: Sequence[Any], options: Dict[str, Any], named: Any) -> Tuple[Any, bool]:
    """A neutral env with its ``wrappers`` (bridge wrappers, innermost first); importer options are
    refused here, nothing is imported."""
    try:
        if options:
            fix = "Drop them: they are the importers' options (from_gymnasium, from_gym), and this env is a bridge.Env"
            raise error(
                SpecError,
                f"the import options of {_name(named)}",
                "go with a gym or Gymnasium env",
                sorted(options),
                fix,
            )
        for wrapper in wrappers:
            wrap = load_wrapper(wrapper)
            env = _wrap(wrap, env)
    except BaseException:
        if built:
            env.close()
        raise
    return env, built


def _wrap(wrap: Any, env: Any) -> Any:
    """``wrap(env)``, which must give a bridge.Env."""
    try:
        wrapped = wrap(env)
    except BridgeError:
        raise
    except Exception as e:
        fix = "Check that it is a bridge.Wrapper (a neutral env takes no gym or Gymnasium wrapper)"
        raise error(
            ContractError, f"wrapper {_name(wrap)}", "wrap the env without raising", f"{type(e).__name__}: {e}", fix
        ) from e
    if not isinstance(wrapped, (Env, VectorEnv)):
        fix = "Pass a bridge.Wrapper subclass (a neutral env takes no gym or Gymnasium wrapper)"
        raise error(SpecError, f"wrapper {_name(wrap)}", "return a bridge.Env", type(wrapped).__name__, fix)
    return wrapped


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
        absent = _missing_dependency(e, named)
        if absent is not None:  # an env package not installed where the env is built (e.g. in a host)
            raise absent from e
        fix = "Fix the factory; its exception and traceback are chained as __cause__"
        raise error(
            ContractError,
            f"env factory {_name(named)}",
            "build the env without raising",
            f"{type(e).__name__}: {e}",
            fix,
        ) from e


def _missing_dependency(e: BaseException, named: Any) -> Optional[MissingDependencyError]:
    """The MissingDependencyError naming the package ``e`` did not find, this interpreter and the
    pip line that installs it (an env package's extra); None when ``e`` is no missing module."""
    missing = runtimes.missing_package(e) if isinstance(e, ImportError) else ""
    if not missing:
        return None
    return error(  # type: ignore[return-value]
        MissingDependencyError,
        f"the package {missing!r}",
        f"be installed in {sys.executable} for env {_name(named)}",
        f"{type(e).__name__}: {e}",
        runtimes.env_package_hint(missing),
    )


def _name(source: Any) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, Source):
        return source.name
    return getattr(source, "__qualname__", None) or type(source).__name__


def _not_a_source(subject: str, got: Any, batch: bool) -> SpecError:
    shown = got if isinstance(got, str) else type(got).__name__
    what = SOURCES + (", or a bridge.VectorEnv" if batch else "")
    fix = "Pass e.g. 'envbridge/GridWorld-v0', or subclass bridge.Env"
    return error(SpecError, subject, f"be {what}", shown, fix)  # type: ignore[return-value]

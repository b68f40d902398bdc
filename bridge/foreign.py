"""Envs of other frameworks: which importer takes a gym, Gymnasium or dm_env object
(:data:`FOREIGN`, read from the object's class, never from names), and the import itself with the
importer's options and wrappers (``module:Class`` names loaded here). Used by the one resolver
(:mod:`bridge.loading`)."""

from __future__ import annotations

import inspect
import sys
from typing import Any, Dict, Optional, Sequence, Tuple

from bridge import runtimes
from bridge.errors import SpecError, error
from bridge.user_modules import FORMS, load_attribute

__all__ = ["FOREIGN", "foreign_importer", "import_with", "load_wrapper"]

# framework (top-level module) -> (its env base class, the importer of its envs). Read from
# sys.modules only: an env object of a framework means that framework is imported already.
FOREIGN: Dict[str, Tuple[str, str]] = {
    "gymnasium": ("Env", "bridge.adapters.importers.gymnasium:from_gymnasium"),
    "gym": ("Env", "bridge.adapters.importers.gym:from_gym"),
    "dm_env": ("Environment", "bridge.adapters.dm_env.importer:from_dm_env"),
}


def foreign_importer(obj: Any) -> Optional[str]:
    """The importer (``"module:function"``) of ``obj``, an env instance or class of a framework in
    :data:`FOREIGN`; None for anything else."""
    for module, (base, importer) in FOREIGN.items():
        framework = sys.modules.get(module)
        cls = getattr(framework, base, None)
        if isinstance(cls, type) and (isinstance(obj, cls) or (isinstance(obj, type) and issubclass(obj, cls))):
            return importer
    return None


def import_with(
    importer: str, env_or_id: Any, kwargs: Dict[str, Any], options: Dict[str, Any], wrappers: Sequence[Any], shown: str
) -> Any:
    """The neutral env ``importer`` makes of ``env_or_id`` (an id with make ``kwargs``, or a foreign
    env), with the importer ``options`` and the ``wrappers`` it applies to the foreign env; ``shown``
    names the env in messages."""
    kind = importer.rpartition(":")[2]
    clash = sorted(set(kwargs) & (set(options) | ({"wrappers"} if wrappers else set())))
    if clash:  # else a raw "got multiple values for keyword argument" TypeError from the call below
        expectation = f"not repeat an import option of {kind}"
        fix = (
            "Pass each once, as an import option; a keyword of that name for the env itself goes in a factory of yours"
        )
        raise error(SpecError, f"the make keywords of {shown}", expectation, clash, fix)
    function = runtimes.load(importer)
    takes = {n for n, p in inspect.signature(function).parameters.items() if p.kind is p.KEYWORD_ONLY}
    extra = dict(options)
    if wrappers:
        extra["wrappers"] = [load_wrapper(w) for w in wrappers]
    unknown = sorted(set(extra) - takes)
    if unknown:
        expectation = f"be ones {kind} takes ({', '.join(sorted(takes)) or 'none'})"
        fix = "Drop them, or apply the wrapper inside a factory of yours"
        raise error(SpecError, f"the import options of {shown}", expectation, unknown, fix)
    return function(env_or_id, **extra, **kwargs)


def load_wrapper(wrapper: Any) -> Any:
    """A wrapper class (or function of the env) from ``module:Class``, ``file.py:Class`` or itself."""
    if callable(wrapper):
        return wrapper
    if not isinstance(wrapper, str) or ":" not in wrapper:
        fix = "Pass e.g. --wrapper minigrid.wrappers:ImgObsWrapper"
        raise error(SpecError, "wrapper", f"be a class or {FORMS}", repr(wrapper), fix)
    top = wrapper.split(":")[0].split(".")[0]
    found = load_attribute(wrapper, f"Check the spelling, or install it. {runtimes.env_package_hint(top)}")
    if not callable(found):
        fix = "Point at a wrapper class, or a function that takes the env and returns the wrapped env"
        raise error(SpecError, f"wrapper {wrapper}", "be a class or a function", type(found).__name__, fix)
    return found

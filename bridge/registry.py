"""A small registry: ``register(id, entry_point)`` and ``make(id, **kwargs)``."""

from __future__ import annotations

import difflib
import importlib
from typing import Any, Callable, Dict, Optional, Union

from bridge import runtimes
from bridge.env import Env, TimeLimit
from bridge.errors import ContractError, SpecError, message

__all__ = ["EnvSpec", "register", "make", "spec", "registry", "load_entry_point", "import_user_module", "EXAMPLE_IDS"]

EntryPoint = Union[str, Callable[..., Env]]


class EnvSpec:
    """How to build a registered env: entry point, default kwargs and an optional step cap."""

    def __init__(
        self, id: str, entry_point: EntryPoint, max_episode_steps: Optional[int] = None, kwargs: Optional[dict] = None
    ) -> None:
        self.id = id
        self.entry_point = entry_point
        self.max_episode_steps = max_episode_steps
        self.kwargs = dict(kwargs or {})

    def make(self, **kwargs: Any) -> Env:
        factory = load_entry_point(self.entry_point)
        env = factory(**{**self.kwargs, **kwargs})
        if not isinstance(env, Env):
            raise SpecError(
                message(
                    f"entry point of {self.id!r}",
                    "return a bridge.Env",
                    type(env).__name__,
                    "Return an instance of a bridge.Env subclass",
                )
            )
        env.unwrapped.spec = self
        if self.max_episode_steps is not None:
            env = TimeLimit(env, self.max_episode_steps)
        return env

    def __repr__(self) -> str:
        return f"EnvSpec({self.id!r}, {self.entry_point!r}, max_episode_steps={self.max_episode_steps})"


# the built-in examples: id -> (entry point, max_episode_steps); strings, so nothing is imported
EXAMPLE_IDS = {
    "envbridge/GridWorld-v0": ("bridge.examples.gridworld:GridWorld", 100),
    "envbridge/PointMass-v0": ("bridge.examples.pointmass:PointMass", 50),
    "envbridge/PixelGrid-v0": ("bridge.examples.pixelgrid:PixelGrid", 50),
    "envbridge/MultiModal-v0": ("bridge.examples.multimodal:MultiModal", 40),
    "envbridge/GoalReach-v0": ("bridge.examples.goalreach:GoalReach", 30),
    "envbridge/CartPole-v0": ("bridge.examples.cartpole:CartPole", 500),
}
registry: Dict[str, EnvSpec] = {
    env_id: EnvSpec(env_id, entry, max_episode_steps=steps) for env_id, (entry, steps) in EXAMPLE_IDS.items()
}


def load_entry_point(entry_point: EntryPoint) -> Callable[..., Any]:
    """Resolve ``"package.module:Attr"`` (or return a callable unchanged)."""
    if callable(entry_point):
        return entry_point
    if not isinstance(entry_point, str) or entry_point.count(":") != 1:
        raise SpecError(
            message("entry_point", "be a callable or 'module:attr'", repr(entry_point), "Pass e.g. 'mypkg.envs:MyEnv'")
        )
    module_name, attr = entry_point.split(":")
    if not module_name or not attr:
        raise SpecError(
            message("entry_point", "name a module and an attribute", repr(entry_point), "Pass e.g. 'mypkg.envs:MyEnv'")
        )
    module = import_user_module(module_name, "entry_point module")
    try:
        target = module
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError as e:
        raise SpecError(
            message(f"entry_point attribute of {module_name}", "exist", attr, "Check the name after the colon")
        ) from e
    return target


def import_user_module(name: str, subject: str, missing: Optional[str] = None) -> Any:
    """Import the user's module ``name``; what its import raises is named (the user's own
    exception chained as ``__cause__``), never a raw traceback. ``missing``: the fix when it is
    not found (default: check the spelling or install it)."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        package = runtimes.missing_package(e)
        if package in runtimes.ENV_EXTRAS:  # an env package the module imports (minigrid, ...): its pip line
            raise SpecError(
                message(subject, "be importable", f"{name!r} ({e})", runtimes.env_package_hint(package))
            ) from e
        if missing is None:
            raise SpecError(message(subject, "be importable", name, f"Check the spelling or install it ({e})")) from e
        raise SpecError(message(subject, "be importable", f"{name!r} ({e})", missing)) from e
    except Exception as e:
        fix = "Fix the module; its exception and traceback are chained as __cause__ (--verbose shows them)"
        raise ContractError(
            message(subject, "import without raising", f"{name!r}: {type(e).__name__}: {e}", fix)
        ) from e
    except SystemExit as e:  # an import that exits would end the caller (the CLI: exit 0, silently)
        fix = "Move the exit under if __name__ == '__main__': (importing a module must not end the program)"
        raise ContractError(message(subject, "import without exiting", f"{name!r}: sys.exit({e.code!r})", fix)) from e


def register(
    id: str, entry_point: EntryPoint, max_episode_steps: Optional[int] = None, kwargs: Optional[dict] = None
) -> EnvSpec:
    """Register an env under ``id`` (re-registering replaces the previous spec)."""
    if not isinstance(id, str) or not id:
        raise SpecError(message("env id", "be a non-empty str", id, "Pass e.g. 'myorg/MyEnv-v0'"))
    if max_episode_steps is not None and (
        isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) or max_episode_steps < 1
    ):
        raise SpecError(message("max_episode_steps", "be an int >= 1 or None", max_episode_steps, "Pass e.g. 100"))
    registry[id] = EnvSpec(id, entry_point, max_episode_steps, kwargs)
    return registry[id]


def spec(id: str) -> EnvSpec:
    """The :class:`EnvSpec` of ``id``; an unknown id suggests close matches."""
    if id in registry:
        return registry[id]
    raise SpecError(message("env id", "be registered", id, suggestion(id)))


def suggestion(id: str) -> str:
    """Close matches of an unknown ``id``, or the registered ids."""
    close = difflib.get_close_matches(id, list(registry), n=3, cutoff=0.5)
    return f"Did you mean {', '.join(repr(c) for c in close)}?" if close else f"Registered ids: {sorted(registry)}"


def make(id: str, **kwargs: Any) -> Env:
    """Build the env registered as ``id``, wrapped in TimeLimit when it has a step cap."""
    return spec(id).make(**kwargs)

"""The one runtime table: every runtime envbridge exports to, as plain strings (nothing imported).

The checker, conformance, the CLI, ``bridge.__getattr__`` and the install hints all read it; no
adapter registers itself on import. ``"module:attr"`` references load on first use (:func:`load`),
``probe`` says whether the runtime's framework is installed without importing it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, Dict, List, Optional, Tuple

from bridge.errors import SpecError, message

__all__ = ["Runtime", "RUNTIMES", "ERAS", "get", "load", "available", "probe", "era_of_interpreter", "install_hint"]


class Runtime:
    """One row of the table.

    Attributes:
        name: the target name users pass to ``check(targets=...)``, ``--view`` and ``--target``.
        package: the adapter package, e.g. ``"bridge.adapters.gymnasium"``.
        extra: the pip extra of envbridge that installs the framework (None: nothing to install).
        era: ``"modern"`` (Python 3.11 stack), ``"legacy"`` (Python 3.9 stack) or ``"any"``.
        probe: the top-level modules whose presence means the runtime can run here.
        profile: ``"module:function"`` of the check profile, ``profile(env, report, seed, options)``.
        view: ``"module:class"`` of the conformance view (built as ``View(make_env)``), or None.
        exports: convenience names reachable as ``bridge.<name>`` -> ``"module:attr"``.
    """

    def __init__(
        self,
        name: str,
        package: str,
        extra: Optional[str],
        era: str,
        probe: Tuple[str, ...],
        profile: str,
        view: Optional[str],
        exports: Optional[Dict[str, str]] = None,
    ) -> None:
        self.name, self.package, self.extra, self.era, self.probe = name, package, extra, era, probe
        self.profile, self.view, self.exports = profile, view, dict(exports or {})

    def __repr__(self) -> str:
        return f"Runtime({self.name!r}, era={self.era!r})"


_A = "bridge.adapters"
RUNTIMES: Dict[str, Runtime] = {
    r.name: r
    for r in (
        Runtime(
            "gymnasium",
            f"{_A}.gymnasium",
            "gymnasium",
            "modern",
            ("gymnasium",),
            f"{_A}.gymnasium.profile:gymnasium_profile",
            f"{_A}.gymnasium.view:GymnasiumView",
            {
                "to_gymnasium": f"{_A}.gymnasium.export:to_gymnasium",
                "to_gymnasium_vector": f"{_A}.gymnasium.vector:to_gymnasium_vector",
            },
        ),
        Runtime(
            "sb3",
            f"{_A}.sb3",
            "sb3",
            "modern",
            ("gymnasium", "stable_baselines3", "torch"),
            f"{_A}.sb3.profile:sb3_profile",
            f"{_A}.sb3.view:SB3View",
            {"to_sb3": f"{_A}.sb3.export:to_sb3", "make_vec_env": f"{_A}.sb3.export:make_vec_env"},
        ),
        Runtime(
            "rllib",
            f"{_A}.rllib",
            "rllib",
            "modern",
            ("gymnasium", "ray", "torch"),
            f"{_A}.rllib.profile:rllib_profile",
            f"{_A}.rllib.view:RLlibView",
            {"register_rllib": f"{_A}.rllib.export:register"},
        ),
        Runtime(
            "gym",
            f"{_A}.gym",
            "legacy",
            "legacy",
            ("gym",),
            f"{_A}.gym.profile:gym_profile",
            f"{_A}.gym.view:GymView",
            {"to_gym": f"{_A}.gym.export:to_gym"},
        ),
        Runtime(
            "dreamerv2",
            f"{_A}.dreamerv2",
            "legacy",
            "legacy",
            ("gym", "tensorflow", "dreamerv2"),
            f"{_A}.dreamerv2.profile:dreamerv2_profile",
            f"{_A}.dreamerv2.view:DreamerV2View",
            {"to_dreamerv2": f"{_A}.dreamerv2.export:to_dreamerv2"},
        ),
        Runtime(
            "matlab",
            f"{_A}.matlab",
            None,
            "any",
            (),
            f"{_A}.matlab.profile:matlab_profile",
            f"{_A}.matlab.view:MatlabView",
        ),
    )
}

# era -> (Python version, what installs it); the legacy stack has no wheels past Python 3.9
ERAS: Dict[str, Tuple[Tuple[int, int], str]] = {
    "modern": ((3, 11), "pip install 'envbridge[{extra}]'{pins}"),
    "legacy": (
        (3, 9),
        "pip install 'envbridge[legacy]'{pins} && pip install --no-deps dreamerv2==2.2.0",
    ),
}
# extra -> what its pip line pins besides (SB3's torch: the CPU wheel, not a multi-GB CUDA build)
_PINS = {"sb3": " torch==2.13.0", "rllib": " torch==2.13.0"}


def get(name: str) -> Runtime:
    """The row of ``name``; an unknown name is a SpecError listing the known ones."""
    if name not in RUNTIMES:
        raise SpecError(message("runtime", f"be one of {sorted(RUNTIMES)}", repr(name), "Pick a known runtime"))
    return RUNTIMES[name]


def load(reference: str) -> Any:
    """Import ``"module:attr"`` and return the attribute (the one lazy loader of the table)."""
    module, _, attr = reference.partition(":")
    return getattr(importlib.import_module(module), attr)


def probe(name: str) -> List[str]:
    """The probe modules of runtime ``name`` that are not installed here (empty: it can run)."""
    return [m for m in get(name).probe if importlib.util.find_spec(m) is None]


def available() -> List[str]:
    """The runtimes whose frameworks are installed in this interpreter, in table order."""
    return [name for name in RUNTIMES if not probe(name)]


def era_of_interpreter() -> str:
    """The era the running Python belongs to: "legacy" below 3.10, else "modern"."""
    return "legacy" if sys.version_info < (3, 10) else "modern"


def install_hint(name: str) -> str:
    """What to run so that runtime ``name`` works, in this interpreter's era (one sentence)."""
    runtime = get(name)
    if runtime.extra is None:
        return "Reinstall envbridge"
    version, command = ERAS[runtime.era]
    here = era_of_interpreter()
    if runtime.era != here:
        wanted = f"Python {version[0]}.{version[1]}"
        return (
            f"The {name} runtime belongs to the {runtime.era} era ({wanted}); this is Python "
            f"{sys.version_info[0]}.{sys.version_info[1]}. In a {wanted} environment run: "
            + command.format(extra=runtime.extra, pins=_PINS.get(runtime.extra, ""))
        )
    return "Run: " + command.format(extra=runtime.extra, pins=_PINS.get(runtime.extra, ""))

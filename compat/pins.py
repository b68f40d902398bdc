"""The era pins as package data, and the tox envs a user's project runs them in.

``constraints-<tox env>.txt`` beside this module are the pins this project's own tox envs install
under; they ship inside the wheel, so a user's tox or CI can pass them to ``pip install -c``
without a checkout (``envbridge pins legacy --path``). :data:`TOX_ENVS` says, per tox env, what
``envbridge init tox`` writes for a user's project; which views must agree in it comes from the
runtime table (each row's ``tox_envs``). A new era is one more row here plus its constraints file.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Dict, List, Optional, Tuple

from bridge import runtimes
from bridge.errors import SpecError, message

__all__ = ["ToxEnv", "TOX_ENVS", "eras", "path", "text", "check_copies", "pins_command"]

HERE = os.path.dirname(os.path.abspath(__file__))


class ToxEnv:
    """One tox env of a user's project: what it installs and which conformance views must agree.

    Attributes:
        name: the tox env name, also the name of its constraints file.
        python: ``"3.9"`` or ``"3.11"``.
        stack: one line for the tox.ini comment (what the env is for).
        extra: the envbridge extras it installs, comma-separated (None: the numpy-only core).
        deps: further requirements, each with the reason shown in the tox.ini.
        after: what is installed with ``--no-deps`` after everything else, with the reason.
        views: the conformance views that must agree there (a missing framework fails, never
            skips): the neutral env's, then those of the runtimes whose table row names this env.
    """

    def __init__(
        self,
        name: str,
        python: str,
        stack: str,
        extra: Optional[str],
        deps: Tuple[Tuple[str, str], ...] = (),
        after: Tuple[Tuple[str, str], ...] = (),
    ) -> None:
        self.name, self.python, self.stack, self.extra = name, python, stack, extra
        self.deps, self.after = deps, after
        self.views = ("neutral",) + tuple(r.name for r in runtimes.RUNTIMES.values() if name in r.tox_envs)

    def __repr__(self) -> str:
        return f"ToxEnv({self.name!r}, python={self.python!r})"


_TORCH = (("torch==2.13.0", "the CPU wheel; an unpinned torch pulls a multi-GB CUDA build"),)
TOX_ENVS: Dict[str, ToxEnv] = {
    e.name: e
    for e in (
        ToxEnv("core-py39", "3.9", "the numpy-only core on its oldest stack, numpy 1.19.5", None),
        ToxEnv("core-py311", "3.11", "the numpy-only core on numpy 2.x", None),
        ToxEnv("modern", "3.11", "Gymnasium 1.3, Stable-Baselines3 2.9 and dm_env", "sb3,dm", deps=_TORCH),
        ToxEnv("rllib", "3.11", "Ray RLlib 2.60 (its own gymnasium pin, 1.2.2)", "rllib", deps=_TORCH),
        ToxEnv(
            "legacy",
            "3.9",
            "gym 0.23.1, TensorFlow 2.6 and DreamerV2 2.2.0",
            "legacy",
            after=(("dreamerv2==2.2.0", "its own requirements pull a mujoco sdist that does not build"),),
        ),
    )
}
# every tox env a runtime row names has its row here (tests/core/test_pins_and_init.py checks both ways)


def eras() -> List[str]:
    """The names that have a constraints file here (what ``envbridge pins`` accepts)."""
    names = os.listdir(HERE)
    return sorted(n[len("constraints-") : -len(".txt")] for n in names if re.match(r"constraints-.+\.txt$", n))


def path(era: str) -> str:
    """The absolute path of the constraints file of tox env ``era``."""
    known = eras()
    if era not in known:
        fix = "Pick one of: " + ", ".join(known)
        raise SpecError(message("era", "name a constraints file of envbridge", repr(era), fix))
    return os.path.join(HERE, f"constraints-{era}.txt")


def text(era: str) -> str:
    """The content of the constraints file of tox env ``era``."""
    with open(path(era), encoding="utf-8") as f:
        return f.read()


def check_copies(folder: str) -> None:
    """Every ``<env>.txt`` in ``folder`` (a user's copies) must equal envbridge's pins of that env."""
    stale = [n for n in eras() if os.path.isfile(os.path.join(folder, f"{n}.txt")) and _read(folder, n) != text(n)]
    if stale:
        fix = "Refresh them: " + "; ".join(f"envbridge pins {n} > constraints/{n}.txt" for n in stale)
        got = ", ".join(f"{n}.txt" for n in stale) + " differ"
        raise SpecError(message(f"the constraints in {folder}", "equal the installed envbridge's pins", got, fix))


def _read(folder: str, era: str) -> str:
    with open(os.path.join(folder, f"{era}.txt"), encoding="utf-8") as f:
        return f.read()


def pins_command(args: argparse.Namespace) -> int:
    """``envbridge pins ERA [--path]``: print the constraints file, or where it is."""
    print(path(args.era) if args.path else text(args.era), end="\n" if args.path else "")
    return 0

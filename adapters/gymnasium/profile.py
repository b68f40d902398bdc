"""The "gymnasium" check profile: Gymnasium's own ``check_env`` on the export, as report entries.

Exceptions become errors and warnings become warnings; both keep the runtime's own words, with
an envbridge fix where we know one (:mod:`bridge.adapters._shared.profile`).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any, Dict, Set, Tuple

from bridge.adapters._shared.profile import clean_text, exported_or_reported, run_runtime_checker
from bridge.adapters.gymnasium.export import to_gymnasium
from bridge.adapters.importers.source import ForeignEnv

from bridge.checker.report import Report

T = "gymnasium"


def gymnasium_profile(env: Any, report: Report, seed: int, options: Dict[str, Any]) -> None:
    """Export ``env`` (with ``options``) and run ``gymnasium.utils.env_checker.check_env`` on it."""
    from gymnasium.utils.env_checker import check_env

    export = exported_or_reported(to_gymnasium, env, report, T, options)
    if export is None:
        return
    own, why = _own_warnings(env, check_env)
    left_out: Set[str] = set()

    def keep(w: Any) -> bool:  # the env's own declarations are not the export's to report
        text = clean_text(w.message)
        if text in own:
            left_out.add(text)
            return False
        return True

    # without a spec Gymnasium cannot rebuild the env for other render modes (and warns so); an
    # imported env's render modes are its own (its "human" would open a window), not the export's
    skip_render = export.spec is None or isinstance(env.unwrapped, ForeignEnv)
    run_runtime_checker(
        report,
        T,
        "gymnasium.utils.env_checker.check_env",
        lambda: check_env(export, skip_render_check=skip_render),
        keep=keep,
    )
    if left_out:
        name = env.unwrapped.spec.id
        report.note(
            T,
            why.format(name=name, n=len(left_out)),
            "Nothing to do: they are about the env as its authors declared it, not about the export",
            "runtime-checker",
        )
    export.reset(seed=seed)


# Gymnasium's check_env on the unbounded Box of a dm_env spec (specs.Array): dm_control declares it so
_UNBOUNDED = frozenset(
    (
        "A Box observation space minimum value is -infinity. This is probably too low.",
        "A Box observation space maximum value is infinity. This is probably too high.",
    )
)


def _own_warnings(env: Any, check_env: Any) -> Tuple[Set[str], str]:
    """The check_env warnings about an imported env's own declarations (which the user of the import
    cannot act on), and how the report says they were left out: for an env imported from Gymnasium,
    what check_env says of the original itself; for a dm_env one, the unbounded specs it declares."""
    original = env.unwrapped
    dm = sys.modules.get("bridge.adapters.dm_env.importer")  # imported already if this env is one of its
    if dm is not None and isinstance(original, dm.DmEnvSource):
        why = "{name} declares unbounded observation specs (dm_env's own): check_env's {n} warning(s) on them left out"
        return set(_UNBOUNDED), why
    if not isinstance(original, ForeignEnv) or original.api != "gymnasium":
        return set(), ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            check_env(original.env.unwrapped, skip_render_check=True)
        except Exception:  # its errors are the export's to report, as they are
            pass
    why = "Gymnasium's check_env gives {name} itself the same {n} warning(s) (its own declarations): left out here"
    return {clean_text(w.message) for w in caught}, why

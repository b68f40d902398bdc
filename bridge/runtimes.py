"""The one runtime table: every runtime envbridge exports to, as plain strings (nothing imported).

The checker, conformance, the CLI, ``bridge.__getattr__`` and the install hints all read it; no
adapter registers itself on import. ``"module:attr"`` references load on first use (:func:`load`),
``probe`` says whether the runtime's framework is installed without importing it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from bridge.errors import SpecError, message

__all__ = [
    "Runtime",
    "RUNTIMES",
    "ERAS",
    "ERA_VENVS",
    "get",
    "load",
    "available",
    "probe",
    "era_of_interpreter",
    "install_hint",
]


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
        exports: convenience names reachable as ``bridge.<name>`` -> ``"module:attr"`` (the exports, and
            the importer that brings the runtime's own envs in, e.g. ``from_gymnasium``).
        export, batch_export: the names (keys of ``exports``) of the scalar and the batched export.
        options, batch_options: the options (:data:`bridge.options.OPTIONS`) each of them honours.
        float32: the runtime computes in float32 (the default of ``float64_as_float32``).
        refusals: option name -> why this runtime cannot honour it (the fix its refusal gives).
        tox_envs: the tox envs of this project in which the runtime must run.
        train: ``"module:function(args) -> exit code"`` of ``envbridge train <name>``, or None.
        train_help, train_steps: that command's help line and its default ``--steps``.
        train_flags: that command's own flags, as ``(flags, argparse keywords)`` pairs of plain data
            (``"type": "int>=N"`` is a whole number of at least N; the shared ones, ``--env --steps
            --seed --logdir --import --config --verbose``, are the CLI's).
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
        *,
        export: Optional[str] = None,
        batch_export: Optional[str] = None,
        options: Tuple[str, ...] = (),
        batch_options: Tuple[str, ...] = (),
        float32: bool = False,
        refusals: Optional[Dict[str, str]] = None,
        tox_envs: Tuple[str, ...] = (),
        train: Optional[str] = None,
        train_help: str = "",
        train_steps: int = 1000,
        train_flags: Tuple[Tuple[Tuple[str, ...], Dict[str, Any]], ...] = (),
    ) -> None:
        self.name, self.package, self.extra, self.era, self.probe = name, package, extra, era, probe
        self.profile, self.view, self.exports = profile, view, dict(exports or {})
        self.export, self.batch_export = export, batch_export
        self.options, self.batch_options, self.float32 = tuple(options), tuple(batch_options), bool(float32)
        self.refusals = dict(refusals or {})
        self.tox_envs, self.train, self.train_flags = tuple(tox_envs), train, tuple(train_flags)
        self.train_help, self.train_steps = train_help, train_steps

    def __repr__(self) -> str:
        return f"Runtime({self.name!r}, era={self.era!r})"


_A = "bridge.adapters"
_GYMNASIUM_OPTIONS = (
    "check_actions",
    "strict",
    "float64_as_float32",
    "normalize_actions",
    "image_layout",
    "max_episode_steps",
)
_BATCH_OPTIONS = ("check_actions", "strict", "float64_as_float32", "normalize_actions", "image_layout")
_NO_FLOAT64 = "Drop float64_as_float32: {} computes in float32, so float64 observations are always presented as float32"
_HWC = "Drop image_layout: {} takes images as HWC, the neutral layout"
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
                "from_gymnasium": f"{_A}.importers.gymnasium:from_gymnasium",
            },
            export="to_gymnasium",
            batch_export="to_gymnasium_vector",
            options=_GYMNASIUM_OPTIONS,
            batch_options=_BATCH_OPTIONS + ("autoreset_mode",),
            refusals={"autoreset_mode": "Drop autoreset_mode: a single env has no autoreset (to_gymnasium_vector has)"},
            tox_envs=("modern", "rllib"),
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
            export="to_sb3",
            batch_export="make_vec_env",
            options=_GYMNASIUM_OPTIONS,
            batch_options=_BATCH_OPTIONS,
            float32=True,
            refusals={"autoreset_mode": "Drop autoreset_mode: SB3 resets on the ending step (same-step), always"},
            tox_envs=("modern",),
            train=f"{_A}.sb3.train:train_command",
            train_help="Stable-Baselines3 through to_sb3 / make_vec_env",
            train_steps=20_000,
            train_flags=(
                (("--no-progress",), {"action": "store_true", "help": "hide the progress bar"}),
                (("--algo",), {"default": "PPO", "choices": ["PPO", "A2C", "DQN", "SAC", "TD3"]}),
                (("--n-envs",), {"type": "int>=1", "default": 1, "help": "scalar envs in SB3's DummyVecEnv"}),
                (("--policy",), {"default": None, "choices": ["MlpPolicy", "CnnPolicy", "MultiInputPolicy"]}),
                (
                    ("--policy-kwargs",),
                    {
                        "default": None,
                        "metavar": "LITERAL|MODULE:ATTR",
                        "help": "SB3 policy_kwargs: a dict literal or a module's dict",
                    },
                ),
            ),
        ),
        Runtime(
            "rllib",
            f"{_A}.rllib",
            "rllib",
            "modern",
            ("gymnasium", "ray", "torch"),
            f"{_A}.rllib.profile:rllib_profile",
            f"{_A}.rllib.view:RLlibView",
            {
                "to_rllib": f"{_A}.rllib.export:to_rllib",
                "to_rllib_vector": f"{_A}.rllib.export:to_rllib_vector",
                "register_rllib": f"{_A}.rllib.export:register",
            },
            export="to_rllib",
            batch_export="to_rllib_vector",
            options=("check_actions", "strict", "normalize_actions", "max_episode_steps"),
            batch_options=("check_actions", "strict", "normalize_actions"),
            float32=True,
            refusals={
                "float64_as_float32": _NO_FLOAT64.format("RLlib"),
                "image_layout": _HWC.format("RLlib's CNN encoder"),
                "autoreset_mode": "Drop autoreset_mode: RLlib's env runners read next-step autoreset, always",
            },
            tox_envs=("rllib",),
            train=f"{_A}.rllib.train:train_command",
            train_help="Ray RLlib env runners, local or a cluster",
            train_steps=8_000,
            train_flags=(
                (("--no-progress",), {"action": "store_true", "help": "hide the progress bar"}),
                (("--algo",), {"default": "PPO", "choices": ["PPO", "DQN", "SAC"]}),
                (
                    ("--env-runners",),
                    {"type": "int>=0", "default": 2, "help": "env runner actors (0: the driver samples)"},
                ),
                (
                    ("--envs-per-runner",),
                    {"type": "int>=1", "default": 1, "help": "sub-envs each runner steps at once"},
                ),
                (("--address",), {"default": None, "help": "a running Ray cluster (default: start a local one)"}),
            ),
        ),
        Runtime(
            "gym",
            f"{_A}.gym",
            "legacy",
            "legacy",
            ("gym",),
            f"{_A}.gym.profile:gym_profile",
            f"{_A}.gym.view:GymView",
            {"to_gym": f"{_A}.gym.export:to_gym", "from_gym": f"{_A}.importers.gym:from_gym"},
            export="to_gym",
            options=("check_actions", "strict", "max_episode_steps"),
            refusals={
                "float64_as_float32": "Drop float64_as_float32: gym 0.23 keeps float64 observations as they are",
                "image_layout": _HWC.format("gym 0.23"),
                "normalize_actions": "Drop normalize_actions: gym 0.23 passes Box actions as the env declares them",
            },
            tox_envs=("legacy",),
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
            export="to_dreamerv2",
            options=(
                "check_actions",
                "strict",
                "float64_as_float32",
                "max_episode_steps",
                "size",
                "time_limit",
                "action_bounds",
                "parallel",
                "seed",
                "timeout",
            ),
            float32=True,
            refusals={
                "image_layout": _HWC.format("DreamerV2"),
                "normalize_actions": "Drop normalize_actions: DreamerV2's NormalizeAction always presents [-1, 1]",
            },
            tox_envs=("legacy",),
            train=f"{_A}.dreamerv2.train:train_command",
            train_help="DreamerV2 2.2.0 through to_dreamerv2 (legacy era)",
            train_steps=1_000,
            train_flags=((("--preset",), {"default": None, "help": "tiny (default, CPU-sized), small, or default"}),),
        ),
        Runtime(
            "dm_env",
            f"{_A}.dm_env",
            "dm",
            "modern",
            ("dm_env", "tree"),
            f"{_A}.dm_env.profile:dm_env_profile",
            f"{_A}.dm_env.view:DmEnvView",
            {"to_dm_env": f"{_A}.dm_env.export:to_dm_env", "from_dm_env": f"{_A}.dm_env.importer:from_dm_env"},
            export="to_dm_env",
            options=("check_actions", "strict", "max_episode_steps", "seed"),
            refusals={
                "float64_as_float32": "Drop float64_as_float32: dm_env specs keep every dtype as it is",
                "image_layout": _HWC.format("dm_env"),
                "normalize_actions": "Drop normalize_actions: dm_env passes actions as their specs declare them",
                "autoreset_mode": "Drop autoreset_mode: dm_env's step() after LAST resets, always",
            },
            tox_envs=("modern",),
        ),
        Runtime(
            "matlab",
            f"{_A}.matlab",
            None,
            "any",
            (),
            f"{_A}.matlab.profile:matlab_profile",
            f"{_A}.matlab.view:MatlabView",
            {"to_matlab": f"{_A}.matlab.export:to_matlab"},
            export="to_matlab",
            options=("check_actions", "strict", "max_episode_steps"),
            refusals={
                "float64_as_float32": "Drop float64_as_float32: MATLAB's values are double, kept as they are",
                "image_layout": _HWC.format("MATLAB's rlNumericSpec"),
                "normalize_actions": "Drop normalize_actions: MATLAB passes actions as their specs declare them",
            },
            tox_envs=("core-py39", "core-py311", "modern", "rllib", "legacy"),
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
# era -> the venv its set-up makes (README, docs/remote.md): an era name's interpreter when
# $ENVBRIDGE_PYTHON_<ERA> is unset (bridge.hosted.pythons), the folder `envbridge init tox` names
ERA_VENVS: Dict[str, str] = {"modern": ".venv", "legacy": ".venv-legacy"}
# env packages (top-level module -> the envbridge extra that installs it at the modern pins); a
# missing one is a MissingDependencyError naming the interpreter and this pip line (env_package_hint)
ENV_EXTRAS: Dict[str, str] = {"minigrid": "gymnasium-envs", "ale_py": "atari", "dm_control": "dm", "mujoco": "dm"}
# extra -> what its pip line pins besides (SB3's torch: the CPU wheel, not a multi-GB CUDA build)
# RLlib goes into a venv of its own (README set-up): ray's gymnasium pin would move the modern one's
_PINS = {"sb3": " torch==2.13.0", "rllib": " torch==2.13.0 in its own venv, .venv-rllib (ray pins gymnasium 1.2.2)"}


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
    return [m for m in get(name).probe if not _installed(m)]


def _installed(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    if spec is None:
        return False
    if spec.origin not in (None, "namespace"):
        return True
    # a namespace package: installed where it lies in site-packages (DreamerV2 ships no __init__),
    # not a bare folder of that name in the current directory (Ray's /tmp/ray, say)
    return any(
        part in ("site-packages", "dist-packages")
        for p in spec.submodule_search_locations or ()
        for part in p.split(os.sep)
    )


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


def env_package_hint(module: str) -> str:
    """What installs the env package ``module`` (top-level) into this interpreter, naming it: run
    where the env is built, e.g. in a host of :func:`bridge.remote`, that is the host's interpreter."""
    runtime = next((name for name, row in RUNTIMES.items() if module in row.probe), None)
    if runtime is not None:  # a framework (gymnasium, dm_env, ...): its runtime's own hint
        return install_hint(runtime)
    extra = ENV_EXTRAS.get(module)
    if extra is None:
        return f"Run: {sys.executable} -m pip install {module}"
    if era_of_interpreter() != "modern":
        wanted = "Python {}.{}".format(*ERAS["modern"][0])
        return (
            f"The package {module} belongs to the modern era ({wanted}); this is Python "
            f"{sys.version_info[0]}.{sys.version_info[1]}. Host the env in a {wanted} environment "
            f"(--host-python modern, or bridge.remote(..., python='modern')) where you run: "
            f"pip install 'envbridge[{extra}]'"
        )
    return f"Run: {sys.executable} -m pip install 'envbridge[{extra}]'"


def missing_package(e: ImportError) -> str:
    """The top-level module a ModuleNotFoundError (or one it was raised from) could not find, or ""."""
    while e is not None:
        if isinstance(e, ModuleNotFoundError) and e.name:
            return e.name.split(".")[0]
        e = e.__cause__ if isinstance(e.__cause__, ImportError) else None  # type: ignore[assignment]
    return ""

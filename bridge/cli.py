"""The ``envbridge`` command line: ``demo``, ``train <runtime>``, ``check``, ``conform``, ``pins``,
``init tox``.

The ``train`` sub-commands come from the runtime table (:mod:`bridge.runtimes`): every row with a
``train`` command gets one, with the shared flags (``--env --steps --seed --logdir --import
--config --verbose``) and the row's own (``train_flags``). Each command's work lives with the
adapter it needs and is imported only when run, so ``envbridge --help`` works with numpy alone.
A user error is one house message on stderr and exit code 2, never a traceback (``--verbose``
shows the chained cause's).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import traceback
from typing import Any, Callable, List, NoReturn, Optional

from bridge import runtimes
from bridge.errors import BridgeError, SpecError, error
from bridge.hosted.client import host_python, hosted_factory
from bridge.loading import SCHEMES, Source, env_source, import_modules, importable_cwd, load_env
from bridge.registry import register

# sub-command -> "module:function(args) -> exit code" (the train commands come from the table)
_COMMANDS = {
    "demo": "bridge.adapters.sb3.train:demo_command",
    "check": "bridge.cli:check_command",
    "conform": "bridge.cli:conform_command",
    "pins": "bridge.compat.pins:pins_command",
    "init tox": "bridge.compat.project:init_command",
}
ENV_HELP = (
    "a registered id, module:attr, path/to/file.py:attr, path/to/createEnv.m (a MATLAB function returning "
    "an rlFunctionEnv) or " + " or ".join(f"{s}:ID" for s in SCHEMES)
)


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors in the house form: one line, exit code 2."""

    def error(self, message: str) -> NoReturn:
        text = message.split(": ", 1)[1] if message.startswith("argument ") and ": " in message else message
        self.exit(2, f"{self.prog}: {text}\n")


def _whole(low: int, flag: str, example: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``low``, refused in the house form otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(
                f"{flag} must be a whole number >= {low}, got {text!r}. Pass e.g. {flag} {example}."
            )
        return value

    return parse


def _env_options() -> argparse.ArgumentParser:
    """The options of every command that names an env."""
    parent = _Parser(add_help=False)
    parent.add_argument(
        "--import",
        action="append",
        default=[],
        dest="imports",
        metavar="MODULE",
        help="import MODULE (or a .py file) first, for ids it registers (repeatable)",
    )
    parent.add_argument(
        "--wrapper",
        action="append",
        default=[],
        dest="wrappers",
        metavar="MODULE:CLASS",
        help="wrap the env in this class (a gym/Gymnasium wrapper for their envs, a bridge.Wrapper for a "
        "bridge.Env; repeatable, innermost first)",
    )
    parent.add_argument(
        "--drop-key",
        action="append",
        default=[],
        dest="drop_keys",
        metavar="KEY",
        help="leave this key out of a gym/Gymnasium env's Dict observation (repeatable; e.g. mission)",
    )
    parent.add_argument("--verbose", action="store_true", help="show everything the runtime prints, and tracebacks")
    parent.add_argument(
        "--host-python",
        metavar="PYTHON",
        help="run the env in this interpreter: a path, or an era name (modern, legacy: $ENVBRIDGE_PYTHON_<NAME>, "
        "else the era's venv .venv or .venv-legacy here or above); see docs/remote.md",
    )
    return parent


def env_of(args: argparse.Namespace) -> Any:
    """What the command resolves: ``--env`` alone, or a :class:`bridge.loading.Source` with the
    ``--wrapper`` and ``--drop-key`` options (one spelling for every command and the host)."""
    options = {"drop_keys": list(args.drop_keys)} if args.drop_keys else {}
    if not args.wrappers and not options:
        return args.env
    return Source(args.env, args.wrappers, options)


def host_remotely(args: argparse.Namespace, key: str) -> None:
    """``--host-python``: ``args.env`` becomes an id of this run whose entry point is ``bridge.remote``
    (the host applies ``--wrapper`` and ``--drop-key``); ``args.env_name`` keeps the name the user
    gave (a tape is labelled and checked under it)."""
    if key == "train rllib":
        fix = "Drop --host-python for RLlib (its env runners resolve the env in their own processes)"
        raise error(SpecError, "--host-python", "go with check, conform or a single-process train", key, fix)
    host_python(args.host_python)  # refused here, before anything starts ('' included: the API refuses it too)
    hosted = "remote/" + re.sub(r"[^\w:.-]+", "_", args.env)  # an id every runtime's registry accepts
    options = {"drop_keys": list(args.drop_keys)} if args.drop_keys else None
    register(hosted, hosted_factory(args.env, args.host_python, args.imports, args.wrappers, options))
    args.env_name, args.env, args.wrappers, args.drop_keys = args.env, hosted, [], []


def _train_parser(sub: Any, row: runtimes.Runtime, parents: List[argparse.ArgumentParser]) -> None:
    train = sub.add_parser(row.name, help=row.train_help, parents=parents)
    train.add_argument("--env", default="envbridge/GridWorld-v0", help=ENV_HELP)
    train.add_argument("--steps", type=_whole(1, "--steps", row.train_steps), default=row.train_steps)
    train.add_argument("--seed", type=_whole(0, "--seed", 0), default=0)
    train.add_argument("--logdir", default=f"runs/{row.name}", help="the run's folder (models, curves, logs)")
    train.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE|FILE.yaml",
        help="the runtime's settings over the defaults (repeatable, later wins)",
    )
    for flags, keywords in row.train_flags:
        keywords = dict(keywords)
        kind = keywords.get("type")
        if isinstance(kind, str) and kind.startswith("int>="):  # the table holds plain data, not functions
            keywords["type"] = _whole(int(kind[len("int>=") :]), flags[0], keywords.get("default") or 1)
        train.add_argument(*flags, **keywords)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="envbridge", description="Write an RL env once; run it on every RL runtime.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    env_options = _env_options()

    demo = sub.add_parser("demo", help="train SB3 PPO on GridWorld through the export and compare with random play")
    demo.add_argument("--steps", type=_whole(1, "--steps", 40_000), default=None, help="PPO timesteps")
    demo.add_argument("--seed", type=_whole(0, "--seed", 0), default=0)
    demo.add_argument("--logdir", default="runs/demo", help="folder for the learning curve PNG and the model")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    train = sub.add_parser("train", help="train an agent through an export")
    kinds = train.add_subparsers(dest="runtime", required=True, parser_class=_Parser)
    for row in runtimes.RUNTIMES.values():
        if row.train is not None:
            _train_parser(kinds, row, [env_options])

    chk = sub.add_parser(
        "check", help="check an env against the core contract and every available export", parents=[env_options]
    )
    chk.add_argument("env", help=ENV_HELP)
    chk.add_argument("--target", action="append", dest="targets", help="limit to these targets (repeatable)")
    chk.add_argument("--json", action="store_true", help="print the report as JSON")
    chk.add_argument("--seed", type=_whole(0, "--seed", 0), default=0)

    conform = sub.add_parser(
        "conform", help="record a tape, or replay one through every export here", parents=[env_options]
    )
    conform.add_argument("env", help=ENV_HELP)
    mode = conform.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", metavar="TAPE", help="write TAPE (.npz) and TAPE.json")
    mode.add_argument("--verify", metavar="TAPE", help="replay TAPE through every available view")
    conform.add_argument("--seed", type=_whole(0, "--seed", 0), default=0)
    conform.add_argument("--steps", type=_whole(1, "--steps", 200), default=200)
    conform.add_argument("--view", action="append", dest="views", help="limit to these views (repeatable)")
    conform.add_argument(
        "--any-env", action="store_true", help="--verify a tape recorded under another env id (the spaces still match)"
    )
    conform.add_argument(
        "--states",
        action="store_true",
        help="--record the env's snapshots too: a replay elsewhere (another era, machine, or engine such as "
        "Octave) then compares each step from the recorded state",
    )

    pins = sub.add_parser("pins", help="print an era's pip constraints (shipped in the wheel), or their path")
    pins.add_argument(
        "era", help="a tox env name: " + ", ".join(sorted({e for r in runtimes.RUNTIMES.values() for e in r.tox_envs}))
    )
    pins.add_argument("--path", action="store_true", help="print the file's path instead (for pip install -c)")
    init = sub.add_parser("init", help="set up your own env project")
    what = init.add_subparsers(dest="what", required=True, parser_class=_Parser)
    tox = what.add_parser("tox", help="write tox.ini (both eras), constraints/, .python-version, a cross-era test")
    tox.add_argument(
        "--env", action="append", dest="envs", required=True, metavar="MODULE:ATTR", help="your env (repeatable)"
    )
    tox.add_argument("--dir", default=".", help="your project's folder (default: here)")
    tox.add_argument("--force", action="store_true", help="overwrite files that exist")
    tox.add_argument("--no-rllib", action="store_true", help="leave the rllib tox env out of the matrix")
    tox.add_argument(
        "--env-era",
        choices=sorted(runtimes.ERAS),
        help="your env installs in this era only: the tox envs of the other Python build a host venv of this era "
        "and drive the env there (bridge.remote)",
    )
    return parser


def check_command(args: argparse.Namespace) -> int:
    from bridge.checker import check

    # an id or a factory, so the strong-determinism check can build a fresh instance
    source = env_of(args)
    report = check(env_source(source) if isinstance(source, str) else source, targets=args.targets, seed=args.seed)
    print(report.to_json() if args.json else report)
    return 0 if report.ok else 1


def conform_command(args: argparse.Namespace) -> int:
    from bridge.conformance import Tape, record, verify
    from bridge.conformance.machine import describe, differences

    name = getattr(args, "env_name", args.env)  # the user's name, also when hosted (--host-python)
    if args.record:
        folder = os.path.dirname(os.path.abspath(args.record))
        try:  # before recording: a path that cannot hold the tape is refused before any work
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            got = f"{args.record!r} ({type(e).__name__}: {e.strerror})"
            expectation = "name a file in a folder that exists or can be made"
            raise error(SpecError, "--record", expectation, got, "Pick another path") from e
        tape = record(lambda: load_env(env_of(args)), seed=args.seed, steps=args.steps, env_id=name, states=args.states)
        manifest = tape.save(args.record)
        print(
            f"recorded {len(tape.actions)} actions, {len(tape.entries)} entries of {args.env} "
            f"-> {args.record} (+ {manifest})"
        )
        return 0
    tape = Tape.load(args.verify)
    env_id = None if args.any_env else name  # the tape's label is checked unless the user opts out
    results = verify(
        lambda: load_env(env_of(args)), tape, args.views, snapshot_at=len(tape.actions) // 3, env_id=env_id
    )
    print(f"envbridge conform: {args.env}, tape {args.verify} ({len(tape.actions)} actions, seed {tape.seed})")
    probe = load_env(
        env_of(args)
    )  # the engine that runs its step (Python, or Octave for .m functions) is part of "where"
    try:
        elsewhere = differences(tape.platform, describe(probe))
    finally:
        probe.close()
    if elsewhere:  # the one rule: bit for bit on the platform of the recording, else within declared ulps
        print(f"  recorded elsewhere: {'; '.join(elsewhere)}")
        print(
            "  (the env here against the tape within its declared ulps; every export against the env here, bit for bit)"
        )
    for view, verdict in results.items():
        print(f"  {view:<10} {verdict.kind}" + (f"  {verdict.detail}" if verdict.detail else ""))
    # a view the user named must run; by default a documented refusal or a missing framework is fine
    asked = set(args.views or [])
    bad = [n for n, v in results.items() if v.failed or (n in asked and not v.agrees)]
    return 1 if bad else 0


def command_of(args: argparse.Namespace) -> str:
    """The sub-command's name, e.g. ``"train sb3"``."""
    if args.command == "train":
        return f"train {args.runtime}"
    return f"init {args.what}" if args.command == "init" else args.command


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    key = command_of(args)
    importable_cwd()  # `envbridge check mymod:MyEnv` finds mymod.py here, as `python -m` would
    level = logging.getLogger("bridge").level
    shown = _show_runtime_prints() if getattr(args, "verbose", False) else None
    try:
        import_modules(getattr(args, "imports", []))
        if getattr(args, "host_python", None) is not None:
            host_remotely(args, key)
        target = runtimes.get(args.runtime).train if args.command == "train" else _COMMANDS[key]
        return int(runtimes.load(target)(args) or 0)
    except BridgeError as e:
        print(f"envbridge {key}: {type(e).__name__}: {e}", file=sys.stderr)
        if getattr(args, "verbose", False) and e.__cause__ is not None:
            traceback.print_exception(type(e.__cause__), e.__cause__, e.__cause__.__traceback__, file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C, or a user module raising it: one line, the shell's code for SIGINT
        print(f"envbridge {key}: interrupted", file=sys.stderr)
        return 130
    finally:
        if shown is not None:
            logging.getLogger("bridge").removeHandler(shown)
            logging.getLogger("bridge").setLevel(level)


def _show_runtime_prints() -> logging.Handler:
    """--verbose: what envbridge keeps quiet for a runtime (logged under "bridge", at INFO) on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("bridge")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return handler


if __name__ == "__main__":
    sys.exit(main())

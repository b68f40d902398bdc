"""The ``envbridge`` command line: ``demo``, ``train``, ``check`` (and ``conform`` when built).

Each sub-command's work lives with the adapter it needs and is imported only when run, so
``envbridge --help`` works with numpy alone.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from bridge import runtimes
from bridge.errors import BridgeError
from bridge.loading import env_source, import_modules, importable_cwd, load_env

# sub-command -> "module:function(args) -> exit code"
_COMMANDS = {
    "demo": "bridge.adapters.sb3.train:demo_command",
    "train sb3": "bridge.adapters.sb3.train:train_command",
    "train dreamerv2": "bridge.adapters.dreamerv2.train:train_command",
    "train rllib": "bridge.adapters.rllib.train:train_command",
    "check": "bridge.cli:check_command",
    "conform": "bridge.cli:conform_command",
    "pins": "bridge.compat.pins:pins_command",
    "init tox": "bridge.compat.project:init_command",
}


ENV_HELP = "a registered id, module:attr or path/to/file.py:attr"


def _env_options() -> argparse.ArgumentParser:
    """The options of every command that names an env."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--import",
        action="append",
        default=[],
        dest="imports",
        metavar="MODULE",
        help="import MODULE (or a .py file) first, for ids it registers (repeatable)",
    )
    return parent


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="envbridge", description="Write an RL env once; run it on SB3, DreamerV2 and a MATLAB-style facade."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    env_options = _env_options()

    demo = sub.add_parser("demo", help="train SB3 PPO on GridWorld through the export and compare with random play")
    demo.add_argument("--steps", type=int, default=None, help="PPO timesteps (default: the demo's tuned budget)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--out", default="runs/demo", help="folder for the learning curve PNG and the model")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    train = sub.add_parser("train", help="train an agent on a registered env through an export")
    runtimes = train.add_subparsers(dest="runtime", required=True)
    sb3 = runtimes.add_parser("sb3", help="Stable-Baselines3 through to_gymnasium", parents=[env_options])
    sb3.add_argument("--algo", default="PPO", choices=["PPO", "A2C", "DQN", "SAC", "TD3"])
    sb3.add_argument("--env", default="envbridge/GridWorld-v0", help=ENV_HELP)
    sb3.add_argument("--steps", type=int, default=20_000)
    sb3.add_argument("--seed", type=int, default=0)
    sb3.add_argument("--n-envs", type=int, default=1)
    sb3.add_argument("--out", default="runs/train")
    sb3.add_argument("--no-progress", action="store_true")
    rllib = runtimes.add_parser("rllib", help="Ray RLlib env runners, local or a cluster", parents=[env_options])
    rllib.add_argument("--algo", default="PPO", choices=["PPO", "DQN", "SAC"])
    rllib.add_argument("--env", default="envbridge/GridWorld-v0", help=ENV_HELP)
    rllib.add_argument("--env-runners", type=int, default=2, help="RLlib env runner actors (0: sample in the driver)")
    rllib.add_argument("--envs-per-runner", type=int, default=1, help="sub-envs each runner steps at once")
    rllib.add_argument("--steps", type=int, default=8_000, help="env steps to sample in all")
    rllib.add_argument("--address", default=None, help="a running Ray cluster (default: start a local one)")
    rllib.add_argument("--seed", type=int, default=0)
    rllib.add_argument("--out", default="runs/rllib", help="folder for the learning curve PNG")
    rllib.add_argument("--no-progress", action="store_true")
    dv2 = runtimes.add_parser(
        "dreamerv2", help="DreamerV2 2.2.0 through to_dreamerv2 (legacy era)", parents=[env_options]
    )
    dv2.add_argument("--env", default="envbridge/GridWorld-v0", help=ENV_HELP)
    dv2.add_argument("--steps", type=int, default=1_000)
    dv2.add_argument("--logdir", default="runs/dreamerv2")
    dv2.add_argument("--preset", default=None, help="tiny (default, CPU-sized), small, or default (DreamerV2's own)")
    dv2.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE|FILE.yaml",
        help="DreamerV2 config keys over the preset: a pair or a YAML mapping (repeatable, later wins)",
    )
    dv2.add_argument("--verbose", action="store_true", help="show all DreamerV2/TensorFlow output (else: logdir)")

    chk = sub.add_parser(
        "check", help="check an env against the core contract and every available export", parents=[env_options]
    )
    chk.add_argument("env", help=ENV_HELP)
    chk.add_argument("--target", action="append", dest="targets", help="limit to these targets (repeatable)")
    chk.add_argument("--json", action="store_true", help="print the report as JSON")
    chk.add_argument("--seed", type=int, default=0)

    conform = sub.add_parser(
        "conform", help="record a tape, or replay one through every export available here", parents=[env_options]
    )
    conform.add_argument("env", help=ENV_HELP)
    mode = conform.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", metavar="TAPE", help="write TAPE (.npz) and TAPE.json")
    mode.add_argument("--verify", metavar="TAPE", help="replay TAPE through every available view")
    conform.add_argument("--seed", type=int, default=0)
    conform.add_argument("--steps", type=int, default=200)
    conform.add_argument("--view", action="append", dest="views", help="limit to these views (repeatable)")

    pins = sub.add_parser("pins", help="print an era's pip constraints (shipped in the wheel), or their path")
    pins.add_argument("era", help="a tox env name: core-py39, core-py311, modern, legacy")
    pins.add_argument("--path", action="store_true", help="print the file's path instead (for pip install -c)")
    init = sub.add_parser("init", help="set up your own env project")
    what = init.add_subparsers(dest="what", required=True)
    tox = what.add_parser("tox", help="write tox.ini (both Gym eras), constraints/, .python-version, a cross-era test")
    tox.add_argument(
        "--env",
        action="append",
        dest="envs",
        required=True,
        metavar="MODULE:ATTR",
        help="your env class or factory (repeatable)",
    )
    tox.add_argument("--dir", default=".", help="your project's folder (default: here)")
    tox.add_argument("--force", action="store_true", help="overwrite files that exist")
    return parser


def check_command(args: argparse.Namespace) -> int:
    from bridge.checker import check

    targets = args.targets  # None: every target installed here
    # an id or a factory, so the strong-determinism check can build a fresh instance
    report = check(env_source(args.env), targets=targets, seed=args.seed)
    print(report.to_json() if args.json else report)
    return 0 if report.ok else 1


def conform_command(args: argparse.Namespace) -> int:
    from bridge.conformance import Tape, record, verify

    if args.record:
        tape = record(lambda: load_env(args.env), seed=args.seed, steps=args.steps, env_id=args.env)
        manifest = tape.save(args.record)
        print(
            f"recorded {len(tape.actions)} actions, {len(tape.entries)} entries of {args.env} "
            f"-> {args.record} (+ {manifest})"
        )
        return 0
    tape = Tape.load(args.verify)
    results = verify(lambda: load_env(args.env), tape, args.views, snapshot_at=len(tape.actions) // 3)
    print(f"envbridge conform: {args.env}, tape {args.verify} ({len(tape.actions)} actions, seed {tape.seed})")
    for name, verdict in results.items():
        print(f"  {name:<10} {verdict.kind}" + (f"  {verdict.detail}" if verdict.detail else ""))
    # a view the user named must run; by default a documented refusal or a missing framework is fine
    asked = set(args.views or [])
    bad = [n for n, v in results.items() if v.failed or (n in asked and not v.agrees)]
    return 1 if bad else 0


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    key = {"train": f"train {getattr(args, 'runtime', '')}", "init": f"init {getattr(args, 'what', '')}"}.get(
        args.command, args.command
    )
    importable_cwd()  # `envbridge check mymod:MyEnv` finds mymod.py here, as `python -m` would
    try:
        import_modules(getattr(args, "imports", []))
        return int(runtimes.load(_COMMANDS[key])(args) or 0)
    except BridgeError as e:
        print(f"envbridge {key}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

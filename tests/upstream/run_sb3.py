"""Run SB3's own tests (its sdist, at the pinned version) against envbridge's exports.

``python tests/upstream/run_sb3.py [--path scalar|batched] [pytest args]`` fetches
``stable-baselines3==<VERSION>``'s sdist with pip (``--no-binary :all: --no-deps``) into a cache
folder (``$ENVBRIDGE_UPSTREAM_CACHE``, else the system temp dir), unpacks its ``tests/`` and runs the
chosen files with the :mod:`sb3_exports` plugin; deselections are those of :mod:`sb3_selection`.
Nothing of SB3 is copied into this repository. SB3's tests run with ``TMPDIR`` in a temporary folder
removed afterwards (their models' ``SB3-<date>`` logger folders go there, not to /tmp). Exits with
pytest's status.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from sb3_selection import BUDGET_KEYWORDS, DESELECTED, DESELECTED_BATCHED, FILES, VERSION  # noqa: E402


def sb3_tests(cache: str) -> str:
    """The folder of SB3's own tests, fetched and unpacked once per cache."""
    root = os.path.join(cache, f"stable_baselines3-{VERSION}")
    tests = os.path.join(root, "tests")
    if os.path.isdir(tests):
        return tests
    os.makedirs(cache, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-q", "-d", cache]
    subprocess.run(pip + [f"stable-baselines3=={VERSION}"], check=True)
    (archive,) = glob.glob(os.path.join(cache, f"stable_baselines3-{VERSION}.tar.gz"))
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(f"stable_baselines3-{VERSION}/tests/")]
        tar.extractall(cache, members=members)  # noqa: S202 - PyPI's sdist at a pinned version
    return tests


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", choices=("scalar", "batched"), default="scalar")
    args, rest = parser.parse_known_args(argv)
    cache = os.environ.get("ENVBRIDGE_UPSTREAM_CACHE") or os.path.join(tempfile.gettempdir(), "envbridge-upstream")
    tests = sb3_tests(cache)
    env = dict(
        os.environ, ENVBRIDGE_SB3_PATH=args.path, PYTHONPATH=os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")])
    )
    env.setdefault("OMP_NUM_THREADS", "1")
    command = [sys.executable, "-m", "pytest", "-p", "sb3_exports", "-p", "no:cacheprovider", "-q", "-rfE"]
    deselected = {**DESELECTED, **(DESELECTED_BATCHED if args.path == "batched" else {})}
    command += ["--rootdir", tests, "-k", BUDGET_KEYWORDS] + [f"--deselect={node}" for node in deselected]
    with tempfile.TemporaryDirectory(prefix="envbridge-sb3-tests-") as scratch:
        env["TMPDIR"] = scratch
        return subprocess.call(command + list(FILES) + rest, cwd=tests, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

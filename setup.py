"""Package discovery (three source folders form one ``bridge`` namespace) and the extras (the
legacy era's pins are written once, in compat/constraints-legacy.txt, and read from there)."""

import os

from setuptools import find_packages, setup

# package -> the folder that holds it; every sub-package under a folder is found, none listed by hand
ROOTS = {"bridge": "bridge", "bridge.adapters": "adapters", "bridge.compat": "compat"}

packages = [
    name
    for package, folder in ROOTS.items()
    for name in [package] + [f"{package}.{sub}" for sub in find_packages(folder)]
]


def _pins(name):
    """The requirements of a constraints file (comments and blank lines dropped)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "compat", name), encoding="utf-8") as f:
        return [line.split("#", 1)[0].strip() for line in f if line.split("#", 1)[0].strip()]


EXTRAS = {
    "gymnasium": ["gymnasium>=1.0,<2"],
    # the envs the importers' tests bring in (MiniGrid's, through from_gymnasium)
    "gymnasium-envs": ["gymnasium>=1.0,<2", "minigrid==3.2.0"],
    "sb3": ["gymnasium>=1.0,<2", "stable-baselines3>=2.9,<3", "torch>=2.3"],
    "rllib": ["ray[rllib]>=2.60,<3", "torch>=2.3"],
    # then: pip install --no-deps dreamerv2==2.2.0 (its own requirements pull a mujoco that does not build)
    "legacy": _pins("constraints-legacy.txt"),
    # ALE's Atari games through Gymnasium (ale-py ships the ROMs)
    "atari": ["gymnasium>=1.0,<2", "ale-py==0.11.2"],
    # dm_env out (to_dm_env) and in (from_dm_env); dm_control's suite is the real source it is tested on
    "dm": ["dm-env>=1.6,<2", "dm-tree", "dm-control==1.0.50", "mujoco==3.17.0"],
    "cli": ["tqdm", "rich", "matplotlib"],
    # TorchRL over to_gymnasium (GymWrapper, collectors); 0.14.1 is the release for torch 2.13
    "torchrl": ["torchrl==0.14.1", "tensordict==0.14.3", "torch>=2.3"],
    "test": ["pytest>=7", "hypothesis>=6", "pytest-timeout>=2"],
}

setup(packages=packages, package_dir=ROOTS, extras_require=EXTRAS)

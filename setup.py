"""Package discovery: three source folders form one ``bridge`` namespace (see pyproject.toml)."""

from setuptools import find_packages, setup

# package -> the folder that holds it; every sub-package under a folder is found, none listed by hand
ROOTS = {"bridge": "bridge", "bridge.adapters": "adapters", "bridge.compat": "compat"}

packages = [
    name
    for package, folder in ROOTS.items()
    for name in [package] + [f"{package}.{sub}" for sub in find_packages(folder)]
]

setup(packages=packages, package_dir=ROOTS)

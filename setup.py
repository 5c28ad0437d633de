"""The package list, which ``pyproject.toml`` cannot express: the code packages found in
the tree plus two data-only packages that map the repository's ``models/`` and
``configs/`` folders into the wheel (``pis_env.shipped`` finds them). pyproject.toml's
``[tool.setuptools]`` can either find packages or list them, not both."""

from setuptools import find_packages, setup

#: Data-only packages and the repository folders they are built from.
DATA_PACKAGES = {"pis_yedili_models": "models", "pis_yedili_configs": "configs"}

setup(
    packages=find_packages(include=["pis_env*", "agents*", "train*"]) + list(DATA_PACKAGES),
    package_dir=DATA_PACKAGES,
)

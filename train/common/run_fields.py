"""The keys every training run has, declared once: ``name``, ``run_dir``, ``seed`` and
``env_version`` (``train/sb3/config.py``, ``train/expert/iteration.py`` and
``train/rllib/config.py`` use them).

Why factories and not a base dataclass: a dataclass puts inherited fields first, and the
roots keep their own order of keys (``--help-config``, a run's ``config.yaml``). Each
factory holds what the roots share (the type's limits, the help's common words); the root
says only what differs (its default name, what its seed seeds, what its layout reaches).
"""

from __future__ import annotations

from typing import Any

from pis_env import LAYOUT_VERSIONS
from train.common.schema import MAX_SEED, param


def name(default: str) -> Any:
    """``name``: the run directory's prefix."""
    return param(default, "run name: the run directory is runs/<name>-<timestamp>")


def run_dir() -> Any:
    """``run_dir``: where the run writes, instead of ``runs/<name>-<timestamp>``."""
    return param(None, "explicit run directory (overrides name)")


def seed(of: str) -> Any:
    """``seed``: ``of`` says what it seeds; any 32-bit seed (``MAX_SEED``)."""
    return param(0, f"seed of {of}", ge=0, le=MAX_SEED)


def env_version(help: str) -> Any:
    """``env_version``: the observation layout the run's network reads, one of
    ``pis_env.LAYOUT_VERSIONS``; ``help`` says what follows it in this run."""
    return param(0, help, choices=LAYOUT_VERSIONS)

"""tests_rllib runs in its own virtualenv (.venv-rllib) and test tree: the same CI rule as
tests/ (a skip is a failure when CI=true, except ``@pytest.mark.platform_skip``) comes
from the same plugin, ``tests/ci_skips.py``.

The RLlib tests share one local Ray (``local_ray``): starting one costs 4-10 s on two
cores, most of what a tiny RLlib run takes. The two-node cluster test stops it (a process
joins one Ray at a time); the next test that asks for it starts it again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import ray
from shared_ray import ensure_local_ray

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # for ``tests.ci_skips`` when pytest is started from elsewhere
    sys.path.insert(0, _ROOT)

pytest_plugins = ["tests.ci_skips"]


@pytest.fixture
def local_ray() -> str:
    """The shared local Ray's address (:func:`ensure_local_ray`)."""
    return ensure_local_ray()


@pytest.fixture(scope="session", autouse=True)
def _no_ray_left_behind():
    yield
    if ray.is_initialized():
        ray.shutdown()

"""tests_rllib runs in its own virtualenv (.venv-rllib) and test tree: the same CI rule as
tests/ (a skip is a failure when CI=true, except ``@pytest.mark.platform_skip``) comes
from the same plugin, ``tests/ci_skips.py``."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:  # for ``tests.ci_skips`` when pytest is started from elsewhere
    sys.path.insert(0, _ROOT)

pytest_plugins = ["tests.ci_skips"]

"""Shared fixtures of the test suite, and the CI rule that a skip is a failure.

``tests.ci_skips`` (loaded here and by ``tests_rllib/conftest.py``) makes every skip a
failure when ``CI=true``, except the platform skips declared with
``@pytest.mark.platform_skip``.
"""

from __future__ import annotations

pytest_plugins = ["tests.ci_skips"]

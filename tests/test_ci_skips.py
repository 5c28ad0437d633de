"""The CI rule of ``tests/ci_skips.py``: with CI=true every skip fails, except the
platform skips declared with ``@pytest.mark.platform_skip``; without CI they are skips."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SKIPPING = '''
import sys

import pytest


def test_skip_in_body():
    pytest.skip("optional thing missing")


@pytest.mark.skipif(True, reason="plain skipif")
def test_plain_skipif():
    pass


@pytest.fixture
def needs_tool():
    pytest.skip("tool not installed")


def test_skip_in_fixture(needs_tool):
    pass


@pytest.mark.platform_skip(True, reason="not on this platform")
def test_platform_skip():
    pass


@pytest.mark.platform_skip(False, reason="runs here")
def test_platform_skip_not_taken():
    pass


@pytest.mark.xfail(reason="known bug", strict=True)
def test_xfail():
    assert False


def test_passes():
    pass
'''

MODULE_SKIP = '''
import pytest

pytest.importorskip("a_module_that_is_not_installed")


def test_never_runs():
    pass
'''


def _run(pytester: pytest.Pytester, monkeypatch, ci: str | None, source: str):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makepyfile(test_inner=source)
    return pytester.runpytest("-p", "tests.ci_skips", "-p", "no:cacheprovider", "-rA")


def test_under_ci_every_skip_but_a_platform_skip_fails(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, "true", SKIPPING)
    # a skip during setup (a skipif mark, a fixture) fails as an error at setup
    result.assert_outcomes(passed=2, failed=1, errors=2, skipped=1, xfailed=1)
    out = result.stdout.str()
    assert "FAILED test_inner.py::test_skip_in_body" in out
    assert "ERROR test_inner.py::test_plain_skipif" in out
    assert "ERROR test_inner.py::test_skip_in_fixture" in out
    # the platform skip is reported at the test, not inside the plugin
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] test_inner.py:*: platform: not on this platform"])
    assert "skipped under CI (CI=true)" in out and "optional thing missing" in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_under_ci_a_module_skipped_at_collection_fails(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, "true", MODULE_SKIP)
    result.assert_outcomes(errors=1)
    assert "a_module_that_is_not_installed" in result.stdout.str()
    assert result.ret != pytest.ExitCode.OK


@pytest.mark.parametrize("ci", [None, "false", ""])
def test_without_ci_skips_stay_skips(pytester, monkeypatch, ci):
    result = _run(pytester, monkeypatch, ci, SKIPPING)
    result.assert_outcomes(passed=2, skipped=4, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    result = _run(pytester, monkeypatch, ci, MODULE_SKIP)
    result.assert_outcomes(skipped=1)


def test_a_malformed_platform_skip_is_a_usage_error(pytester, monkeypatch):
    source = '''
import pytest

@pytest.mark.platform_skip(reason="no condition")
def test_bad():
    pass
'''
    result = _run(pytester, monkeypatch, None, source)
    assert "platform_skip takes one condition" in result.stdout.str()
    assert result.ret != pytest.ExitCode.OK

"""Under CI a skipped test is a failure; only platform skips are allowed.

A skip guard (``pytest.importorskip``, ``pytest.skip`` when a file or module is missing)
turns a regression into a line in the summary that nobody reads: a broken install of an
extra, a deleted config or a renamed module and its tests go quiet instead of red. So
when the environment variable ``CI`` is ``true`` (what CI services and ``.ci/run`` set),
every skipped test, and every module skipped at collection, is reported as failed.

The one exception is a test that cannot run on this platform, declared with the marker
this plugin provides instead of ``skipif``::

    @pytest.mark.platform_skip(sys.platform == "win32", reason="POSIX signals")
    def test_sigterm_...

It skips the test when the condition holds, everywhere, and such a skip stays a skip
under CI. A plain ``skipif`` or ``pytest.skip`` is never allowed under CI. xfail is not
a skip and is left alone.

Both test trees load this plugin (``tests/conftest.py`` and ``tests_rllib/conftest.py``,
which runs in its own virtualenv), so the same rule holds in each.
"""

from __future__ import annotations

import os

import pytest

_PLATFORM_SKIPPED = pytest.StashKey[bool]()


def ci_enabled() -> bool:
    """True when the ``CI`` environment variable says this is a CI run."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "platform_skip(condition, *, reason): skip where the platform cannot run the test "
        "(e.g. sys.platform == 'win32'); the only skip allowed when CI=true",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("platform_skip"):
        if len(mark.args) != 1 or "reason" not in mark.kwargs:
            raise pytest.UsageError(
                f"{item.nodeid}: platform_skip takes one condition and reason=..., "
                f"got args={mark.args!r} kwargs={mark.kwargs!r}"
            )
        if mark.args[0]:
            item.stash[_PLATFORM_SKIPPED] = True
            pytest.skip(f"platform: {mark.kwargs['reason']}")


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _as_failure(report, what: str) -> None:
    reason = _skip_reason(report)
    report.outcome = "failed"
    report.longrepr = (
        f"{what} was skipped under CI (CI=true), which counts as a failure: {reason}\n"
        "A skip here hides a missing dependency or a broken module. Only a test marked "
        "@pytest.mark.platform_skip(condition, reason=...) may skip under CI "
        "(see tests/ci_skips.py)."
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if not report.skipped or hasattr(report, "wasxfail"):
        return report
    if item.stash.get(_PLATFORM_SKIPPED, False):
        filename, line = item.reportinfo()[:2]  # point at the test, not at this plugin
        report.longrepr = (str(filename), (line or 0) + 1, _skip_reason(report))
    elif ci_enabled():
        _as_failure(report, "this test")
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    report = yield
    if report.skipped and ci_enabled():
        _as_failure(report, f"{collector.nodeid or 'a module'}")
    return report

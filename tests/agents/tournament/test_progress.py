"""A tournament's progress: tqdm's bar on a terminal, a line now and then in a log, nothing
when it is off (``agents.tournament.progress``)."""

from __future__ import annotations

import io
import sys

import pytest

from agents.tournament import progress as P


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Log(io.StringIO):
    """A log file that counts its flushes: each progress line must reach it at once."""

    flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(P.time, "perf_counter", lambda: now[0])
    return now


def test_a_terminal_gets_tqdms_bar_of_deals(monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    bar = P.progress_bar(7, progress=True)
    assert type(bar).__name__ == "tqdm" and not bar.disable
    assert (bar.total, bar.unit, bar.desc) == (7, "deal", "tournament")
    assert callable(bar.dynamic_ncols)  # tqdm's reading of the width, set by dynamic_ncols
    bar.update(7)
    bar.close()
    assert "tournament" in term.getvalue() and "7/7" in term.getvalue()


def test_off_is_silent_on_a_terminal_and_in_a_log(monkeypatch):
    for stream in (Terminal(), Log()):
        monkeypatch.setattr(sys, "stderr", stream)
        bar = P.progress_bar(3, progress=False)
        assert bar.disable
        bar.update(3)
        bar.close()
        assert stream.getvalue() == ""


def test_a_log_gets_a_line_every_so_often_and_one_at_the_end(monkeypatch, clock):
    log = Log()
    monkeypatch.setattr(sys, "stderr", log)
    bar = P.progress_bar(7, progress=True)
    assert isinstance(bar, P.LineProgress) and bar.every == P.PROGRESS_EVERY_S == 30.0
    clock[0] += 10.0
    bar.update(2)                       # before the first 30 s: no line
    clock[0] += 25.0
    bar.update(1)
    clock[0] += 5.0
    bar.update(4)                       # all done: the closing line says it
    clock[0] += 1.5
    bar.close()
    bar.close()
    assert log.getvalue().splitlines() == ["tournament: 3/7 deals (43%), 35.0 s",
                                           "tournament: 7/7 deals (100%), 41.5 s"]
    assert log.flushes >= 2


def test_a_line_of_nothing_to_play_is_complete(clock):
    log = Log()
    bar = P.LineProgress(0, desc="matches", every=0.0, file=log)
    bar.close()
    assert log.getvalue() == "matches: 0/0 deals (100%), 0.0 s\n"


def test_a_unit_is_counted_in_its_english_plural(clock):
    units = ("deal", "match", "pass", "dish", "box")
    assert [P.plural(u) for u in units] == ["deals", "matches", "passes", "dishes", "boxes"]
    log = Log()
    bar = P.LineProgress(2, desc="matches", every=0.0, file=log, unit="match")
    bar.update(1)
    assert log.getvalue() == "matches: 1/2 matches (50%), 0.0 s\n"


def test_a_stream_that_cannot_say_is_not_a_terminal():
    closed = io.StringIO()
    closed.close()
    assert P._isatty(Terminal()) is True
    assert P._isatty(io.StringIO()) is False
    assert P._isatty(closed) is False          # ValueError on a closed file
    assert P._isatty(object()) is False        # no isatty at all


def test_a_line_as_often_as_asked(clock):
    log = Log()
    bar = P.LineProgress(3, every=0.0, file=log)
    assert bar.every == 0.0
    for _ in range(3):
        clock[0] += 1.0
        bar.update()
    bar.close()
    assert log.getvalue().splitlines() == ["tournament: 1/3 deals (33%), 1.0 s",
                                           "tournament: 2/3 deals (67%), 2.0 s",
                                           "tournament: 3/3 deals (100%), 3.0 s"]


def test_a_match_tournament_counts_matches_not_deals(monkeypatch, clock):
    """In the match mode a step is a whole match of several deals: "2/2 deals" would say
    a quarter of the deals played."""
    log = Log()
    monkeypatch.setattr(sys, "stderr", log)
    bar = P.progress_bar(2, progress=True, unit="match")
    clock[0] += 3.0
    bar.update(2)
    bar.close()
    assert log.getvalue() == "tournament: 2/2 matches (100%), 3.0 s\n"
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert P.progress_bar(2, progress=True, unit="match").unit == "match"
    assert P.progress_bar(2, progress=True).unit == "deal"

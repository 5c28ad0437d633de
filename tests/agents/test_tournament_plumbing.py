"""The tournament's plumbing, in this process: the pool workers' signal handlers and
config, the ``--table`` entries' names, and files written and read as UTF-8 whatever the
locale says (a bot whose class name is not ASCII, under the C locale's ASCII)."""

from __future__ import annotations

import csv
import json
import locale
import signal
import sys

import pytest

from agents.random_agent import RandomAgent
from agents.tournament import run_tournament
from agents.tournament.compare import paired_difference, seat_wins
from agents.tournament.worker import WORKER_STATE, init_pool_worker, reset_worker_signals


@pytest.fixture
def restored_signals():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, handler in before.items():
        signal.signal(s, handler)


def test_a_pool_worker_ignores_ctrl_c_and_dies_quietly_on_sigterm(restored_signals):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: None)  # a caller's handler, inherited
    reset_worker_signals()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_pool_worker_starts_from_the_tournaments_config(restored_signals):
    WORKER_STATE.update(stale=True, cache={"old": 1})
    config = {"rules": {"num_players": 2}, "seed": 7, "seatings": [], "specs": {}}
    init_pool_worker(config)
    assert WORKER_STATE == {**config, "cache": {}, "env": None}
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_a_table_entry_names_one_agent_or_is_refused():
    with pytest.raises(ValueError) as err:
        run_tournament(["heuristic", "heuristic", "random"], num_players=2, deals=1,
                       workers=1, progress=False, tables=[["heuristic", "random"]])
    assert str(err.value) == ("table entry 'heuristic' is ambiguous: use one of "
                              "['heuristic#1', 'heuristic#2']")
    with pytest.raises(ValueError) as err:
        run_tournament(["heuristic", "random"], num_players=2, deals=1, workers=1,
                       progress=False, tables=[["heuristic", "greedy"]])
    assert str(err.value) == ("table entry 'greedy' is not one of the agents "
                              "['heuristic', 'random']")
    result = run_tournament(["heuristic", "heuristic", "random"], num_players=2, deals=1,
                            workers=1, progress=False, tables=[["heuristic#2", "random"]])
    assert result.tables == [["heuristic#2", "random"]]


class Şahin(RandomAgent):
    """A bot whose spec (``module:Class``) is not ASCII."""


def test_the_files_are_utf8_whatever_the_locale(ascii_locale, tmp_path):
    if not sys.flags.utf8_mode:  # the default encoding really is not UTF-8 here
        assert locale.getencoding().lower() not in ("utf-8", "utf8")
    result = run_tournament([Şahin, "random"], num_players=2, deals=2, seed=1, workers=1,
                            progress=False)
    label = f"{__name__}:Şahin"
    assert label in result.agents
    paths = result.save(tmp_path)
    for path in paths[:5]:  # every text file, read as UTF-8 (the JSON escapes it)
        if path.suffix != ".json":
            assert "Şahin" in path.read_text(encoding="utf-8"), path.name
    with open(tmp_path / "summary.csv", newline="", encoding="utf-8") as f:
        assert label in [row["label"] for row in csv.DictReader(f)]
    assert label in json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["stats"]
    # and read back under the same locale
    wins = seat_wins(str(tmp_path / "deals.csv"), label)
    assert len(wins) == 4
    assert paired_difference(str(tmp_path / "deals.csv"), str(tmp_path / "deals.csv"),
                             label)[0] == 0

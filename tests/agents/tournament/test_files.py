"""What a tournament writes and prints (``TournamentResult``: the report and its
columns' alignment, the CSV and JSON files as UTF-8 whatever the locale, the ranking, the
rules line), and how matches and agent instances are played, each
checked against the tournament's own statistics or an independent count."""

from __future__ import annotations

import csv
import json
import locale
import re
import sys

import numpy as np
import pytest

from agents.random_agent import RandomAgent
from agents.tournament import run_tournament
from agents.tournament.compare import paired_difference, seat_wins
from agents.tournament.worker import REASONS
from pis_env import Rules, raw_env


@pytest.fixture(scope="module")
def result():
    return run_tournament(["heuristic", "greedy", "random"], num_players=2, deals=5, seed=4,
                          workers=1, progress=False)


def test_the_report_has_every_statistic_in_its_column(result):
    lines = result.table().splitlines()
    assert lines[0] == ("Tournament: 3 agents, 2 players, 5 duplicate deals x 2 seat "
                        "rotations, 3 table(s), seed 4")
    assert lines[1] == "Rules: seed rules (defaults)" and lines[2] == ""
    header = lines[3]
    assert re.split(r"\s{2,}", header) == ["agent", "seat-deals", "win rate", "95% CI",
                                           "mean charge", "95% CI", "OpenSkill mu", "sigma",
                                           "ordinal"]
    for line, s in zip(lines[4:7], result.ranking(), strict=True):
        assert re.split(r"\s{2,}", line) == [
            s.label, str(s.games), f"{100 * s.win_rate:.1f}%",
            f"[{100 * s.win_low:.1f}, {100 * s.win_high:.1f}]", f"{s.mean_charge:.2f}",
            f"[{s.charge_low:.2f}, {s.charge_high:.2f}]", f"{s.rating_mu:.2f}",
            f"{s.rating_sigma:.2f}", f"{s.rating_ordinal:.2f}"]
        # the label is left-aligned, every figure right-aligned under its heading
        assert line.startswith(s.label)
        assert line.index(str(s.games)) + len(str(s.games)) == \
            header.index("seat-deals") + len("seat-deals")


def test_the_ranking_is_by_win_rate_then_mean_charge(result):
    order = result.ranking()
    keys = [(-s.win_rate, s.mean_charge) for s in order]
    assert keys == sorted(keys) and order[0].win_rate > order[-1].win_rate


def test_the_rules_line_names_only_what_differs_from_the_seed_rules():
    res = run_tournament(["random"], num_players=2, deals=1, seed=0, workers=1,
                         progress=False, rules=Rules(draw_rule="one", seven_penalty="double"))
    assert res.rules_text() == "draw_rule=one, seven_penalty=double"


def test_truncated_games_are_counted_in_the_tables_words():
    deals = run_tournament(["random"], num_players=2, deals=4, seed=1, workers=1,
                           progress=False, rules=Rules(max_turns=4))
    assert deals.truncated > 0
    assert f"Truncated deals left out: {deals.truncated}" in deals.table().splitlines()
    matches = run_tournament(["random"], num_players=2, deals=3, seed=1, workers=1,
                             progress=False, rules=Rules(max_turns=6, num_deals=2))
    lines = matches.table().splitlines()
    assert lines[0].endswith("3 duplicate matches of 2 deals x 2 seat rotations, "
                             "1 table(s), seed 1")
    assert f"Truncated matches left out: {matches.truncated}" in lines
    assert re.split(r"\s{2,}", lines[4])[:5] == ["agent", "seat-matches", "win rate",
                                                  "95% CI", "mean total"]


def test_the_files_are_written_into_new_folders_in_their_formats(result, tmp_path):
    out = tmp_path / "a" / "b"
    paths = result.save(out)
    assert [p.name for p in paths] == ["summary.csv", "head_to_head.csv", "deals.csv",
                                       "results.json", "table.txt", "tournament.png"]
    assert all(p.parent == out and p.exists() for p in paths)
    assert (out / "table.txt").read_text(encoding="utf-8") == result.table() + "\n"
    text = (out / "results.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
    for name, write in (("summary.csv", result.to_csv), ("h2h.csv", result.head_to_head_csv),
                        ("deals.csv", result.deals_csv), ("r.json", result.to_json)):
        deep = tmp_path / name / "x" / name
        write(deep)
        assert deep.exists()


def test_deals_csv_has_a_row_per_seat_of_every_game_with_its_end(result, tmp_path):
    path = tmp_path / "deals.csv"
    result.deals_csv(path)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["table", "deal", "rotation", "seat", "agent", "charge", "winner",
                       "end_reason", "decisions"]
    assert len(rows) == 1 + 3 * 5 * 2 * 2
    for table, deal, rotation, seat, agent, charge, winner, reason, decisions in rows[1:]:
        tr = result.table_results[int(table)]
        d, r, s = int(deal), int(rotation), int(seat)
        assert agent == tr.seating[r][s] and int(charge) == tr.charges[d, r, s]
        assert int(winner) == tr.winners[d, r, s]
        assert reason == REASONS[tr.reasons[d, r]] and reason in ("going_out",
                                                                  "empty_stock")
        assert int(decisions) == tr.decisions[d, r]


# ---------------------------------------------------------------------- matches
def test_a_match_counts_every_move_of_every_deal(tmp_path):
    from agents.tournament import record_games

    res = run_tournament(["random", "greedy"], num_players=2, deals=3, seed=6, workers=1,
                         progress=False, rules=Rules(num_deals=3))
    paths = record_games(res, 6, tmp_path)
    decisions = res.table_results[0].decisions
    for path, (d, r) in zip(paths, [(d, r) for d in range(3) for r in range(2)], strict=True):
        env = raw_env.from_history(path.read_text())
        moves = sum(len(list(log)) for log in env.game.histories)
        assert decisions[d, r] == moves > 0


def test_matches_replay_from_their_seeds_reshuffles_included():
    """The env's seed is the match's: two runs of one seed are one result, although random
    play empties the stock and reshuffles the pile."""
    rules = Rules(num_deals=2, empty_stock="reshuffle")
    runs = [run_tournament(["random", "random"], num_players=2, deals=8, seed=3, workers=1,
                           progress=False, rules=rules) for _ in range(2)]
    for a, b in zip(runs[0].table_results, runs[1].table_results, strict=True):
        np.testing.assert_array_equal(a.charges, b.charges)
        np.testing.assert_array_equal(a.decisions, b.decisions)


def test_a_bot_failing_in_a_match_is_named_with_its_deal():
    class FailsInTheSecondDeal:
        def __init__(self, num_players=2, seed=None, num_deals=1):
            self.deal = 0

        def reset(self):
            self.deal += 1

        def act(self, observation):
            if self.deal >= 1:  # reset between the deals of a match
                raise KeyError("tired")
            return int(np.flatnonzero(observation["action_mask"])[0])

    with pytest.raises(RuntimeError, match=r"failed at .*, deal 1, .*KeyError: 'tired'"):
        run_tournament([FailsInTheSecondDeal, "random"], num_players=2, deals=1, seed=0,
                       workers=1, progress=False, rules=Rules(num_deals=2))


# ---------------------------------------------------------------------- instances
class Counter:
    """A bot whose instance keeps a list: copies seated at one table must not share it."""

    def __init__(self):
        self.seen: list[int] = []

    def reset(self, seed=None):
        pass

    def act(self, observation):
        self.seen.append(1)
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_an_instance_is_copied_whole_for_every_seat():
    bot = Counter()
    res = run_tournament([bot, bot], num_players=2, deals=1, seed=0, workers=1,
                         progress=False)
    assert bot.seen == []  # the instance given is never played, only its copies
    assert res.table_results[0].decisions.sum() > 0


def test_the_head_to_head_block_of_the_report(result):
    lines = result.table().splitlines()
    at = lines.index("Head-to-head: row's deal win rate against column [95% Wilson interval]")
    assert lines[at - 1] == ""
    order = [s.label for s in result.ranking()]
    header, rows = lines[at + 1], lines[at + 2:at + 2 + len(order)]
    assert header.split() == order and header.startswith(" ")
    for label, row in zip(order, rows, strict=True):
        assert row.startswith(label)
        cells = re.findall(r"-|\d+\.\d% \[\d+\.\d, \d+\.\d\]", row[len(label):])
        want = []
        for other in order:
            h = result.head_to_head[label].get(other)
            want.append("-" if other == label or h is None or not h.games else
                        f"{100 * h.rate:.1f}% [{100 * h.low:.1f}, {100 * h.high:.1f}]")
        assert cells == want
        # every cell right-aligned under its column's label
        for other, cell in zip(order, want, strict=True):
            assert row.index(cell, len(label)) + len(cell) <= header.index(other) + len(other)
    three = run_tournament(["random", "greedy"], num_players=3, deals=1, seed=0, workers=1,
                           progress=False)
    assert ("Head-to-head: row's share of deals charged less against column [95% Wilson "
            "interval]") in three.table().splitlines()
    match = run_tournament(["random", "greedy"], num_players=3, deals=1, seed=0, workers=1,
                           progress=False, rules=Rules(num_players=3, num_deals=2))
    assert ("Head-to-head: row's share of matches charged less against column [95% Wilson "
            "interval]") in match.table().splitlines()
    alone = run_tournament(["random"], num_players=2, deals=1, seed=0, workers=1,
                           progress=False)
    assert not any(line.startswith("Head-to-head") for line in alone.table().splitlines())


def test_agents_that_never_met_show_a_dash_in_the_head_to_head():
    """Tables of self-play: the two agents never share a table, so no pair was compared,
    and every cell of the head-to-head block is ``-``."""
    res = run_tournament(["heuristic", "random"], num_players=2, deals=2, seed=0, workers=1,
                         progress=False, tables=[["heuristic", "heuristic"],
                                                 ["random", "random"]])
    assert res.head_to_head == {}
    assert np.isnan(res.h2h_matrix()).all() and res.h2h_matrix().shape == (2, 2)
    lines = res.table().splitlines()
    block = lines[lines.index("Head-to-head: row's deal win rate against column "
                              "[95% Wilson interval]") + 1:]
    assert [re.split(r"\s+", line.strip()) for line in block] == [
        ["heuristic", "random"], ["heuristic", "-", "-"], ["random", "-", "-"]]


def _block(lines, first):
    """The lines from the first that starts with ``first`` to the next blank one."""
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_the_tables_numbers_are_right_aligned_under_their_headers(two):
    """Every column but the first (the agent) is right-aligned: its header and its
    numbers end at the same character; the first column is left-aligned."""
    lines = two.table().splitlines()
    summary = _block(lines, "agent ")
    header = summary[0]
    end = header.index("seat-deals") + len("seat-deals")
    for row in summary[1:]:
        assert row[end - 1] != " " and row[end] == " ", row
        assert row.split()[1] == "6"
        assert row.startswith(("heuristic ", "greedy "))
    at = next(i for i, line in enumerate(lines) if line.startswith("Head-to-head"))
    h2h = _block(lines[at + 1:], "")
    head = h2h[0]
    ends = [head.index(name) + len(name) for name in ("heuristic", "greedy")]
    for row in h2h[1:]:
        for e in ends:
            assert row[e - 1] != " ", row
        assert row.startswith(("heuristic ", "greedy "))


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

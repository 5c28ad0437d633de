"""The tournament's statistics (``agents.tournament.results.summarize``) against a second
count written here from their definitions: plain loops over every seat of every game,
no arrays summed along axes, the Wilson interval from its formula and the charge's
bootstrap interval over the per-deck means counted here. The tables are random, with
shared wins, truncated games, and one agent in two seats of a table (the head-to-head
then skips the agent's pairs with itself)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from agents.tournament.results import TournamentResult, rating_games, summarize
from agents.tournament.stats import bootstrap_mean_ci, openskill_ratings
from agents.tournament.worker import REASONS, TRUNCATED, TableResult

Z = 1.959963984540054  # the 97.5% point of the standard normal


def _wilson(s: float, n: int) -> tuple[float, float]:
    p = s / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _tables(seed: int, deals: int):
    """Three random tables: 2 players, 3 players with ``a`` in two seats, 2 players."""
    rng = np.random.default_rng(seed)
    lineups = [["a", "b"], ["a", "a", "c"], ["b", "c"]]
    tables = []
    for lineup in lineups:
        n = len(lineup)
        seating = [lineup[r:] + lineup[:r] for r in range(n)]
        charges = rng.integers(0, 4, size=(deals, n, n)).astype(np.int32) * 10
        winners = rng.random((deals, n, n)) < 0.4
        reasons = rng.choice([0, 1, TRUNCATED], size=(deals, n), p=[0.6, 0.25, 0.15])
        decisions = rng.integers(1, 60, size=(deals, n)).astype(np.int32)
        tables.append(TableResult(lineup, seating, charges, winners,
                                  reasons.astype(np.uint8), decisions))
    return tables


def _reference(labels, tables, deals):
    """Every statistic of every agent and pair, counted seat by seat."""
    per = {a: {"games": 0, "wins": 0.0, "outright": 0,
               "charges": [[] for _ in range(deals)]} for a in labels}
    pairs: dict[tuple[str, str], list[float]] = {}
    truncated = 0
    for tr in tables:
        n = tr.charges.shape[2]
        for d in range(deals):
            for r, seats in enumerate(tr.seating):
                if tr.reasons[d, r] == TRUNCATED:
                    truncated += 1
                    continue
                won = [s for s in range(n) if tr.winners[d, r, s]]
                for s, a in enumerate(seats):
                    per[a]["games"] += 1
                    per[a]["charges"][d].append(int(tr.charges[d, r, s]))
                    if s in won:
                        per[a]["wins"] += 1 / len(won)
                        per[a]["outright"] += len(won) == 1
                for sa in range(n):
                    for sb in range(n):
                        a, b = seats[sa], seats[sb]
                        if sa == sb or a == b:
                            continue
                        ca, cb = int(tr.charges[d, r, sa]), int(tr.charges[d, r, sb])
                        p = pairs.setdefault((a, b), [0, 0.0, 0])
                        p[0] += 1
                        p[1] += 1.0 if ca < cb else 0.5 if ca == cb else 0.0
                        p[2] += ca - cb
    return per, pairs, truncated


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_agent_statistic_is_the_count_of_its_seats(seed):
    deals = 7
    labels = ["a", "b", "c"]
    tables = _tables(seed, deals)
    stats, _, ratings, truncated = summarize(labels, {a: f"spec-{a}" for a in labels},
                                             tables, deals)
    per, _, ref_truncated = _reference(labels, tables, deals)
    assert truncated == ref_truncated > 0
    assert list(stats) == labels
    for a in labels:
        s, ref = stats[a], per[a]
        assert (s.label, s.spec) == (a, f"spec-{a}")
        assert s.games == ref["games"] > 0
        assert s.wins == pytest.approx(ref["wins"])
        assert s.outright_wins == ref["outright"]
        assert s.win_rate == pytest.approx(ref["wins"] / ref["games"])
        assert (s.win_low, s.win_high) == pytest.approx(_wilson(ref["wins"], ref["games"]))
        means = [sum(c) / len(c) for c in ref["charges"] if c]  # one value a deck
        mean = sum(means) / len(means)
        assert s.mean_charge == pytest.approx(mean)
        # the bootstrap over decks (tests/agents/tournament/test_stats.py checks it by hand): within
        # the per-deck means, so never below zero
        assert (s.charge_low, s.charge_high) == pytest.approx(bootstrap_mean_ci(means)[1:])
        assert 0 <= min(means) <= s.charge_low <= s.charge_high <= max(means)
        rating = ratings[a]
        assert (s.rating_mu, s.rating_sigma, s.rating_ordinal) == (
            rating.mu, rating.sigma, rating.mu - 3 * rating.sigma)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_head_to_head_is_the_count_of_its_seat_pairs(seed):
    deals = 7
    labels = ["b", "c", "a"]  # not in sorted order: the output keeps this one
    tables = _tables(seed, deals)
    _, h2h, _, _ = summarize(labels, {a: a for a in labels}, tables, deals)
    _, pairs, _ = _reference(labels, tables, deals)
    assert {(a, b) for a in h2h for b in h2h[a]} == set(pairs)
    assert "a" not in h2h["a"]  # the agent in two seats is never its own opponent
    for a, row in h2h.items():
        assert list(row) == [b for b in labels if b in row]  # in the order given
        for b, h in row.items():
            games, score, diff = pairs[(a, b)]
            assert (h.agent, h.opponent, h.games) == (a, b, games)
            assert h.score == pytest.approx(score)
            assert h.rate == pytest.approx(score / games)
            assert (h.low, h.high) == pytest.approx(_wilson(score, games))
            assert h.mean_charge_diff == pytest.approx(diff / games)
    assert list(h2h) == [a for a in labels if a in h2h]


def test_the_ratings_rank_every_untruncated_game_by_mean_charge():
    """A game's ranking: its agents in seat order, ranked by their mean charge at the
    table (an agent in two seats by its mean), deal by deal, then table, then rotation;
    a game with one agent only is no ranking."""
    deals = 4
    tables = _tables(5, deals)
    solo = TableResult(["c"], [["c", "c"]], np.array([[[10, 0]]] * deals, dtype=np.int32),
                       np.zeros((deals, 1, 2), bool), np.zeros((deals, 1), np.uint8),
                       np.ones((deals, 1), np.int32))
    tables.append(solo)
    expected = []
    for d in range(deals):
        for tr in tables:
            for r, seats in enumerate(tr.seating):
                if tr.reasons[d, r] == TRUNCATED:
                    continue
                names = list(dict.fromkeys(seats))
                if len(names) < 2:
                    continue
                means = [np.mean([tr.charges[d, r, s] for s, x in enumerate(seats) if x == a])
                         for a in names]
                expected.append((names, [sum(m < x for m in means) for x in means]))
    got = [(list(names), list(ranks)) for names, ranks in rating_games(tables)]
    assert got == expected and len(got) > 10
    assert list(rating_games([])) == []
    labels = ["a", "b", "c"]
    _, _, ratings, _ = summarize(labels, {a: a for a in labels}, tables, deals)
    assert ratings == openskill_ratings(expected, players=labels)


def test_an_agent_with_one_game_has_no_interval_and_its_json_says_null():
    deals = 1
    tr = TableResult(["a", "b"], [["a", "b"]], np.array([[[0, 30]]], dtype=np.int32),
                     np.array([[[True, False]]]), np.zeros((1, 1), np.uint8),
                     np.array([[9]], np.int32))
    stats, h2h, ratings, truncated = summarize(["a", "b"], {"a": "a", "b": "b"}, [tr], deals)
    assert stats["a"].mean_charge == 0 and math.isnan(stats["a"].charge_low)
    result = TournamentResult(
        agents=["a", "b"], specs={"a": "a", "b": "b"}, num_players=2, deals=deals, seed=3,
        rules={"num_players": 2}, tables=[["a", "b"]], stats=stats, head_to_head=h2h,
        ratings=ratings, table_results=[tr], truncated=truncated, mean_decisions=9.0,
        elapsed_s=1.5, workers=2)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert list(data) == ["agents", "specs", "num_players", "deals", "seed", "rules",
                          "tables", "truncated", "mean_decisions", "elapsed_s", "workers",
                          "stats", "head_to_head"]
    assert (data["agents"], data["specs"], data["num_players"], data["deals"],
            data["seed"], data["rules"], data["tables"], data["truncated"],
            data["mean_decisions"], data["elapsed_s"], data["workers"]) == (
        ["a", "b"], {"a": "a", "b": "b"}, 2, 1, 3, {"num_players": 2}, [["a", "b"]], 0,
        9.0, 1.5, 2)
    assert data["stats"]["a"] == {
        "label": "a", "spec": "a", "games": 1, "wins": 1.0, "outright_wins": 1,
        "win_rate": 1.0, "win_low": pytest.approx(_wilson(1, 1)[0]), "win_high": 1.0,
        "mean_charge": 0.0, "charge_low": None, "charge_high": None,
        "rating_mu": ratings["a"].mu, "rating_sigma": ratings["a"].sigma,
        "rating_ordinal": pytest.approx(ratings["a"].ordinal)}
    assert data["head_to_head"] == {
        "a": {"b": {"agent": "a", "opponent": "b", "games": 1, "score": 1.0, "rate": 1.0,
                    "low": pytest.approx(_wilson(1, 1)[0]), "high": 1.0,
                    "mean_charge_diff": -30.0}},
        "b": {"a": {"agent": "b", "opponent": "a", "games": 1, "score": 0.0, "rate": 0.0,
                    "low": 0.0, "high": pytest.approx(_wilson(0, 1)[1]),
                    "mean_charge_diff": 30.0}}}
    assert REASONS[tr.reasons[0, 0]] == "going_out"

"""``benchmarks.oracle_search``: the search whose worlds hold the opponents' true hands.

Its figure only means something if (1) its worlds really are the table's hidden hands,
seat for seat, with only the stock reshuffled, and (2) it plays a tournament's own decks,
seats and seeds, so that its deals.csv pairs with a tournament's deal by deal."""

from __future__ import annotations

import csv

import pytest

from agents.search import SearchAgent
from agents.tournament import run_tournament
from benchmarks import oracle_search
from benchmarks.oracle_search import HandsOracleSearch, play


def test_the_worlds_are_the_hidden_hands_seat_for_seat(monkeypatch):
    """At a 4-player table every world the oracle searches holds each opponent's hand
    from the engine, in the observation's seat order (the k-th opponent is the seat k
    places on), and a stock that is the real stock reshuffled. The reference is the
    engine read here, not the oracle's own reading."""
    seen = []
    original = HandsOracleSearch._worlds

    def recording(self, decoded, unseen, count, rng):
        hands, stocks, kinds = original(self, decoded, unseen, count, rng)
        game = self.game
        n = game.num_players
        truth = [game.hands[(self.seat + k) % n] for k in range(1, n)]
        seen.append((hands.tolist(), truth, sorted(game.stock), stocks, kinds,
                     list(decoded["hand_sizes"]), list(decoded["hand"])))
        return hands, stocks, kinds

    monkeypatch.setattr(HandsOracleSearch, "_worlds", recording)
    rows = list(play(1, 5, 4, "heuristic", {"rollouts": 64}))
    assert len(rows) == 16 and len(seen) > 10
    for hands, truth, stock, stocks, kinds, sizes, mine in seen:
        assert kinds is None
        assert all(row == truth for row in hands)
        assert [h.bit_count() for h in truth] == sizes[1:]
        assert all(sorted(s) == stock for s in stocks.tolist())
        assert not any(int(h) >> int(c) & 1 for h in truth for c in mine)
    assert any(len({tuple(s) for s in stocks.tolist()}) > 1
               for _, _, _, stocks, *_ in seen if stocks.shape[1] > 2)


def test_hand_sizes_that_disagree_with_the_observation_are_refused(monkeypatch):
    """A seat order that is not the observation's shows up as hand sizes that differ
    from the ones the seat is shown, and the oracle stops rather than search the
    wrong hands."""
    monkeypatch.setattr(HandsOracleSearch, "__init__",
                        lambda self, *a, seat, **k: (SearchAgent.__init__(self, *a, **k),
                                                     setattr(self, "seat", seat + 1),
                                                     setattr(self, "game", None))[0])
    with pytest.raises(RuntimeError, match="do not match"):
        list(play(3, 5, 4, "heuristic", {"rollouts": 16}))


def test_its_decks_and_seeds_are_the_tournaments(monkeypatch, tmp_path):
    """With the true hands taken away (the bot's own worlds), the benchmark plays the
    tournament deal for deal: the same rows as ``run_tournament``'s deals.csv."""
    monkeypatch.setattr(HandsOracleSearch, "_worlds", SearchAgent._worlds)
    rows = list(play(2, 7, 2, "heuristic", {"rollouts": 32}))
    result = run_tournament(["search?rollouts=32", "heuristic"], num_players=2, deals=2,
                            seed=7, workers=1, progress=False)
    result.deals_csv(tmp_path / "deals.csv")
    with open(tmp_path / "deals.csv", newline="", encoding="utf-8") as f:
        ref = list(csv.DictReader(f))
    assert len(ref) == len(rows) == 8
    for got, want in zip(rows, ref):
        for key in oracle_search.COLUMNS:
            if key != "agent":
                assert str(got[key]) == want[key], key
        assert want["agent"].startswith(got["agent"])


def test_main_writes_a_deals_file_compare_reads(tmp_path, capsys):
    from agents.tournament.compare import seat_wins

    assert oracle_search.main(["--decks", "1", "--search", "search?rollouts=16",
                               "--out", str(tmp_path)]) == 0
    assert "oracle search?rollouts=16 vs heuristic" in capsys.readouterr().out
    assert len(seat_wins(str(tmp_path / "deals.csv"), "search")) == 2
    with pytest.raises(SystemExit):
        oracle_search.main(["--decks", "0"])
    with pytest.raises(SystemExit):
        oracle_search.main(["--search", "heuristic"])

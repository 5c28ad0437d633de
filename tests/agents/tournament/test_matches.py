"""The tournament's match mode (``--option num_deals=k``): every game a whole match of
stacked decks under every seat rotation, won by the lowest total, a tie on totals shared.

The references: each deal of a match played by itself at a one-deal table from the same
deck and dealer (the deterministic bots play a deal the same wherever it falls in a
match), the totals and winners added up here; and a match whose second deck is its first
(the dealer moves one seat, so two copies of one deterministic bot play the mirror
deal: equal totals), a tie known without playing it."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import agents
from agents.tournament import main, run_tournament
from agents.tournament import worker as worker_module
from agents.tournament.compare import paired_difference
from agents.tournament.deals import deal_setup
from agents.tournament.matches import build_seat, match_setup
from pis_env import raw_env


def _deal_alone(lineup: list[str], deck: list[int], dealer: int) -> list[int]:
    """The charges of one deal played at a one-deal table by fresh bots."""
    env = raw_env(num_players=len(lineup))
    bots = [agents.make(name, num_players=len(lineup)) for name in lineup]
    env.reset(seed=0, options={"deck": deck, "dealer": dealer})
    while not env.game.deal_over:
        s = env.game.current
        env.step(bots[s].act(env.observe(env.possible_agents[s])))
    return list(env.game.charges)


def test_match_totals_and_winners_are_the_sum_of_their_deals():
    result = run_tournament(["heuristic", "greedy"], num_players=2, deals=3, seed=7,
                            rules={"num_deals": 3}, workers=1, progress=False)
    assert result.num_deals == 3 and result.deals == 3
    tr = result.table_results[0]
    wins = {"heuristic": 0.0, "greedy": 0.0}
    totals_of = {"heuristic": [], "greedy": []}
    for m in range(3):
        decks, dealer = match_setup(7, m, 2, 3)
        assert (decks[0], dealer) == deal_setup(7, m, 2)  # deal 0 is the one-deal tournament's
        for r, seating in enumerate(tr.seating):
            totals = np.sum([_deal_alone(seating, decks[k], (dealer + k) % 2)
                             for k in range(3)], axis=0)
            np.testing.assert_array_equal(tr.charges[m, r], totals)
            low = totals.min()
            for s, label in enumerate(seating):
                totals_of[label].append(int(totals[s]))
                if totals[s] == low:
                    wins[label] += 1.0 / int((totals == low).sum())
    for label, stats in result.stats.items():
        assert stats.games == 6
        assert stats.win_rate == pytest.approx(wins[label] / 6)
        assert stats.mean_charge == pytest.approx(np.mean(totals_of[label]))
    assert "3 duplicate matches of 3 deals" in result.table()
    assert "seat-matches" in result.table() and "mean total" in result.table()


def _mirror_setup(seed: int, match: int, num_players: int, num_deals: int):
    """Match 0 deals one deck twice (a tie on totals); the others as scheduled."""
    decks, dealer = match_setup(seed, match, num_players, num_deals)
    if match == 0:
        decks = [decks[0], decks[0]]
    return decks, dealer


def test_a_tie_on_totals_shares_the_match_win(monkeypatch, tmp_path):
    monkeypatch.setattr(worker_module, "match_setup", _mirror_setup)
    result = run_tournament(["heuristic", "heuristic", "greedy"], num_players=2, deals=2,
                            seed=3, rules={"num_deals": 2}, workers=1, progress=False,
                            tables=[["heuristic#1", "heuristic#2"], ["heuristic#1", "greedy"]])
    twins = result.table_results[0]
    for r in range(2):
        a, b = twins.charges[0, r]
        assert a == b > 0 and twins.winners[0, r].all()  # the mirror match: a tie
    assert not twins.winners[1].all()  # match 1 is an ordinary one (no tie here)
    h2h = result.head_to_head["heuristic#1"]["heuristic#2"]
    won = sum(twins.charges[1, r, s] < twins.charges[1, r, 1 - s]
              for r in range(2) for s in range(2)
              if twins.seating[r][s] == "heuristic#1")
    assert h2h.score == pytest.approx(2 * 0.5 + won)  # the tie counts a half, twice
    # the deals.csv of the mode marks both tied seats, and compare counts each a half
    result.deals_csv(tmp_path / "a" / "deals.csv")
    with open(tmp_path / "a" / "deals.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["table"] == "0" and r["deal"] == "0"]
    assert {r["winner"] for r in rows} == {"1"}
    diff, *_ , count = paired_difference(tmp_path / "a" / "deals.csv",
                                         tmp_path / "a" / "deals.csv", prefix="heuristic#2")
    assert diff == 0 and count == 4


def test_compare_pairs_matches_counting_a_tie_as_a_half(tmp_path, capsys):
    head = "table,deal,rotation,seat,agent,charge,winner,end_reason,decisions\n"
    (tmp_path / "a.csv").write_text(head + "0,0,0,0,search,40,1,going_out,90\n"
                                    "0,0,0,1,heuristic,40,1,going_out,90\n"
                                    "0,1,0,0,search,10,1,going_out,90\n"
                                    "0,1,0,1,heuristic,50,0,going_out,90\n")
    (tmp_path / "b.csv").write_text(head + "0,0,0,0,search?match_aware=false,60,0,x,9\n"
                                    "0,0,0,1,heuristic,40,1,x,9\n"
                                    "0,1,0,0,search?match_aware=false,20,1,x,9\n"
                                    "0,1,0,1,heuristic,30,0,x,9\n")
    # match 0: a tie in A (a half) against a loss in B; match 1: a win in both
    diff, low, high, count = paired_difference(tmp_path / "a.csv", tmp_path / "b.csv")
    assert (diff, count) == (0.25, 2)
    assert main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 0
    assert "+25.0 points" in capsys.readouterr().out


def test_the_cli_plays_matches(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["--agents", "greedy,random", "--players", "2", "--deals", "2",
                 "--option", "num_deals=4", "--workers", "1", "--no-progress",
                 "--out", str(out), "--record", "1", "--no-save"]) == 0
    text = capsys.readouterr().out
    assert "2 duplicate matches of 4 deals x 2 seat rotations" in text
    import json

    history = json.loads((out / "histories" / "table0-deal0-rotation0.json").read_text())
    assert len(history["deals"]) == 4


def test_a_bot_that_cannot_play_the_match_is_refused():
    class OneDeal(agents.Agent):
        def __init__(self, num_players=2, seed=None):
            super().__init__(num_players=num_players, seed=seed)

        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[0])

    with pytest.raises(ValueError, match=r"cannot play 4-deal matches .*num_deals="):
        build_seat(OneDeal, 2, 0, 4)
    with pytest.raises(ValueError, match=r"built for num_deals=1.*build it with num_deals=4"):
        build_seat(agents.make("greedy"), 2, 0, 4)
    with pytest.raises(ValueError, match=r"asks for num_deals=2.*plays 4-deal matches"):
        build_seat("greedy?num_deals=2", 2, 0, 4)
    assert build_seat("greedy", 2, 0, 4).num_deals == 4


class _Counting(agents.Agent):
    """Plays its first legal move and counts the plain ``reset()`` calls (new deals)."""

    resets: list[int] = []

    def reset(self, seed=None):
        super().reset(seed)
        if seed is None:
            _Counting.resets.append(self.num_deals)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_bots_are_built_for_the_match_and_told_of_each_new_deal():
    _Counting.resets = []
    run_tournament([_Counting, "greedy"], num_players=2, deals=2, rules={"num_deals": 3},
                   workers=1, progress=False)
    assert _Counting.resets == [3] * (2 * 2 * 2)  # 2 matches x 2 rotations x 2 new deals


def test_the_cli_refuses_a_bot_that_cannot_play_the_match(tmp_path, capsys):
    assert main(["--agents", "random?num_deals=2,greedy", "--players", "2", "--deals", "1",
                 "--option", "num_deals=4", "--workers", "1", "--no-save"]) == 2
    err = capsys.readouterr().err
    assert "num_deals=2, but the table plays 4-deal matches" in err and "drop it" in err


class _FourDeals(agents.Agent):
    """A bot whose default is a four-deal match, as a network trained on matches is."""

    def __init__(self, num_players=2, num_deals=4, seed=None):
        super().__init__(num_players=num_players, num_deals=num_deals, seed=seed)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_a_match_only_bot_at_a_one_deal_table_is_refused_before_any_game(monkeypatch,
                                                                         capsys):
    """A network trained on 4-deal matches is built for its file's 4 deals unless told:
    at a one-deal tournament it is refused up front in the words a 3-deal table gives
    ("seat it at a 4-deal table"), not at its first observation mid-run."""
    def no_games(task):
        raise AssertionError("a game was played")

    monkeypatch.setattr(worker_module, "play_chunk", no_games)
    monkeypatch.setattr("agents.tournament.driver.play_chunk", no_games)
    words = {}
    for deals in (3, 1):
        assert main(["--agents", "ppo:ppo_2p_match,heuristic", "--deals", "5", "--option",
                     f"num_deals={deals}", "--workers", "1", "--no-save"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("python -m agents.tournament: error: agent spec "
                              "'ppo:ppo_2p_match': ppo_2p_match was trained for 4-deal "
                              "matches"), err
        words[deals] = err.partition("observation size 184); ")[2]
    assert words[1] == words[3].replace("3 deal(s) (observation size 183)",
                                        "1 deal(s) (observation size 178)")
    assert "seat it at a 4-deal table (num_deals=4)" in words[1]

    with pytest.raises(ValueError, match=r"^agent spec 'random\?num_deals=4' asks for "
                       r"num_deals=4, but the table plays single deals \(num_deals=1\)"):
        build_seat("random?num_deals=4", 2, 0, 1)
    four = _FourDeals()
    with pytest.raises(ValueError) as err:
        build_seat(four, 2, 0, 1)
    assert str(err.value) == (f"{four!r} was built for num_deals=4, but the table plays "
                              "single deals (num_deals=1): build it with num_deals=1")
    assert build_seat(_FourDeals, 2, 0, 1).num_deals == 1  # a class that can: told so
    assert build_seat(f"{__name__}:_FourDeals", 2, 0, 1).num_deals == 1
    assert build_seat("ppo:ppo_2p", 2, 0, 1).num_deals == 1
    with pytest.raises(ValueError) as err:  # matches only, and no num_deals to ask for one
        build_seat(_OnlyFour, 2, 0, 1)
    assert str(err.value).startswith("_OnlyFour builds a bot for num_deals=4, but the table "
                                     "plays single deals (num_deals=1): ")
    spec = f"{__name__}:_OnlyFour"
    with pytest.raises(ValueError) as err:
        build_seat(spec, 2, 0, 1)
    assert str(err.value) == (f"agent spec {spec!r} builds a bot for num_deals=4, but the "
                              "table plays single deals (num_deals=1): unknown option "
                              f"'num_deals' for {spec} (did you mean num_players?): "
                              f"{spec}'s options: num_players, seed")


class _OnlyFour(agents.Agent):
    """A bot of four-deal matches that takes no ``num_deals``."""

    def __init__(self, num_players=2, seed=None):
        super().__init__(num_players=num_players, num_deals=4, seed=seed)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])

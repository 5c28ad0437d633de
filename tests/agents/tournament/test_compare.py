"""``python -m agents.tournament compare``: two tournaments' deals.csv paired deal by deal."""

from __future__ import annotations

import math

from agents.tournament.cli import main

HEAD = "table,deal,rotation,seat,agent,charge,winner,end_reason,decisions\n"


def _deals(path, wins):
    rows = [f"0,{d},0,0,ppo:a.zip,0,{w},going_out,5\n0,{d},0,1,heuristic,9,{1 - w},going_out,5\n"
            for d, w in enumerate(wins)]
    path.write_text(HEAD + "".join(rows))
    return str(path)


def test_compare_prints_the_paired_difference(tmp_path, capsys):
    a = _deals(tmp_path / "a.csv", [1, 1, 1, 0])
    b = _deals(tmp_path / "b.csv", [1, 0, 0, 0])
    assert main(["compare", a, b, "--prefix", "ppo"]) == 0
    # differences 0, 1, 1, 0: mean 0.5, sample sd 1/sqrt(3), n = 4
    half = 1.959964 * (1 / math.sqrt(3)) / 2
    out = capsys.readouterr().out
    assert out.strip() == (f"win rate A - B: +50.0 points [95% CI {100 * (0.5 - half):+.1f}, "
                           f"{100 * (0.5 + half):+.1f}] over 4 paired seat-deals")


def test_compare_refuses_files_with_nothing_in_common(tmp_path, capsys):
    a = _deals(tmp_path / "a.csv", [1, 0])
    assert main(["compare", a, a, "--prefix", "search"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m agents.tournament compare: error: no (deal, rotation)")
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    assert main(["compare", a, str(tmp_path / "x.csv"), "--prefix", "ppo"]) == 2
    assert capsys.readouterr().err == (
        f"python -m agents.tournament compare: error: {tmp_path / 'x.csv'}: not a tournament "
        "deals.csv (no column agent, deal, rotation, winner)\n")


def test_a_win_is_shared_within_its_own_table_and_a_game_without_winner_counts_0(tmp_path):
    from agents.tournament.compare import seat_wins

    rows = [  # deal 0: ppo wins alone at table 0 while two seats share table 1's win
        "0,0,0,0,ppo:a.zip,0,1,going_out,5", "0,0,0,1,heuristic,9,0,going_out,5",
        "1,0,0,0,greedy,0,1,going_out,5", "1,0,0,1,random,0,1,going_out,5",
        # deal 1: nobody won (a truncated deal)
        "0,1,0,0,ppo:a.zip,3,0,truncated,5", "0,1,0,1,heuristic,4,0,truncated,5",
        # deal 2: ppo shares the win at its own table
        "0,2,0,0,ppo:a.zip,0,1,going_out,5", "0,2,0,1,heuristic,0,1,going_out,5"]
    path = tmp_path / "d.csv"
    path.write_text(HEAD + "\n".join(rows) + "\n")
    assert seat_wins(str(path), "ppo") == {("0", "0"): 1.0, ("1", "0"): 0.0,
                                           ("2", "0"): 0.5}


def test_only_the_seat_deals_of_both_files_are_paired(tmp_path, capsys):
    from agents.tournament.compare import paired_difference

    a = _deals(tmp_path / "a.csv", [1, 1, 1, 1, 1])
    b = _deals(tmp_path / "b.csv", [0, 0, 0, 1])
    mean, low, high, n = paired_difference(a, b, "ppo")
    assert n == 4 and mean == 0.75
    # differences 1, 1, 1, 0: mean 0.75, sample sd 0.5, n = 4
    half = 1.959964 * 0.5 / 2
    assert math.isclose(low, 0.75 - half, rel_tol=1e-5)
    assert math.isclose(high, 0.75 + half, rel_tol=1e-5)
    assert main(["compare", a, b, "--prefix", "ppo"]) == 0
    assert capsys.readouterr().out.strip() == (
        f"win rate A - B: +75.0 points [95% CI {100 * (0.75 - half):+.1f}, "
        f"{100 * (0.75 + half):+.1f}] over 4 paired seat-deals")

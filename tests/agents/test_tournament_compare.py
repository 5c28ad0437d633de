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
    assert "not a tournament deals.csv" in capsys.readouterr().err

"""``pis-bench`` (``agents.bench.cli``): the same seed and decks give the same card, and
bad input is one line that says what fits, before anything is played.

Why: the card exists to be compared across days; and a card can take a quarter of an
hour, so a typo must cost nothing.
"""

from __future__ import annotations

import json

import pytest

import agents
import agents.bench.cli as cli
from agents.bench.cli import main

PROG = "python -m agents.bench"


class TwoSeatsOnly:
    """A bot that sits only at two-player tables (as a network trained for two does)."""

    def __init__(self, num_players: int = 2, seed: int | None = None, **kwargs):
        if num_players != 2:
            raise ValueError(f"built for 2 players, not {num_players}")
        self.num_players = num_players

    def act(self, observation):  # pragma: no cover - never seated here
        raise AssertionError

    def reset(self, seed=None):  # pragma: no cover
        pass


def _figures(path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["elapsed_s"], data["date"]
    return data


def test_the_same_seed_and_decks_give_the_same_figures(tmp_path):
    argv = ["greedy", "--players", "2", "--decks", "2", "--matches", "1", "--seed", "5",
            "--field", "random,heuristic", "--workers", "1", "--no-progress"]
    assert main([*argv, "--json", str(tmp_path / "a.json")]) == 0
    assert main([*argv, "--json", str(tmp_path / "b.json")]) == 0
    a, b = _figures(tmp_path / "a.json"), _figures(tmp_path / "b.json")
    assert a == b
    assert a["sizes"]["2"]["deals"]["refs"]["random"]["games"] == 4   # 2 decks x 2 seats
    assert a["sizes"]["2"]["matches"]["refs"]["heuristic"]["games"] == 2
    assert a["sizes"]["2"]["rating"]["rating"] is not None or \
        a["sizes"]["2"]["rating"]["unbounded"] in ("above", "below")


BAD = [
    # the registry's names as agents.make lists them (other helpers add bots to it)
    (["nosuch"], "bot 'nosuch': unknown agent 'nosuch'; known agents: "
     f"{', '.join(sorted(agents.REGISTRY))} (or 'module:Class' for a class of yours; "
     "agents.register(name, factory) adds a name)"),
    (["tests.agents.bench.test_cli:TwoSeatsOnly", "--players", "2,3"],
     "bot 'tests.agents.bench.test_cli:TwoSeatsOnly' cannot sit at 3 players (built for 2 "
     "players, not 3); it sits at 2 (--players 2)"),
    (["heuristic", "--decks", "0"],
     "--decks 0: a card needs at least 1 deck (--quick plays 100, the default 1000)"),
    (["heuristic", "--players", "2,8"],
     "--players 2,8: table sizes run from 2 to 7 (e.g. --players 2,3,4)"),
    (["heuristic", "--players", "four"],
     "--players expects table sizes like 2,3,4 (each 2 to 7), got 'four'"),
    (["heuristic", "--matches", "-1"], "--matches -1: give 0 (no matches) or more"),
    (["heuristic", "--field", "random,nobody"],
     "--field random,nobody: the reference field is random,greedy,heuristic,held_out,"
     "held_out_tight,attacker,rank_switcher,counter"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[b[0][-1] for b in BAD])
def test_bad_input_is_one_line_that_says_what_fits_before_anything_is_played(
        argv, message, capsys, monkeypatch):
    def played(*args, **kwargs):
        raise AssertionError("a card was played")

    monkeypatch.setattr(cli, "make_card", played)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"{PROG}: error: {message}\n"


def test_an_output_folder_that_does_not_exist_is_refused_before_play(tmp_path, capsys):
    target = tmp_path / "no" / "card.json"
    assert main(["heuristic", "--json", str(target)]) == 2
    assert capsys.readouterr().err == (f"{PROG}: error: --json {target}: no folder "
                                       f"{target.parent}\n")



def test_the_calibration_refuses_a_size_outside_the_card_before_playing(tmp_path, capsys):
    from agents.bench.calibrate import main as calibrate

    out = tmp_path / "ratings.json"
    assert calibrate(["--players", "2,8", "--out", str(out)]) == 2
    assert capsys.readouterr().err == ("python -m agents.bench.calibrate: error: --players 2,8: "
                                       "table sizes run from 2 to 7\n")
    assert not out.exists()

"""``python -m agents.tournament`` (``pis-tournament``) in process: what each option hands
to ``run_tournament``, every line it prints, and its exit codes."""

from __future__ import annotations

import re
import sys

import pytest

from agents.tournament import cli

PROG = "python -m agents.tournament"


class Called(Exception):
    """Raised by the stand-in ``run_tournament`` once it has recorded its arguments."""


@pytest.fixture
def calls(monkeypatch):
    seen: list[tuple[list[str], dict]] = []

    def run_tournament(agents, **kwargs):
        seen.append((agents, kwargs))
        raise Called

    monkeypatch.setattr(cli, "run_tournament", run_tournament)
    return seen


def test_every_option_reaches_the_tournament(calls):
    with pytest.raises(Called):
        cli.main(["--agents", "random,greedy,", "--table", "a,b", "--table", "c,,d",
                  "--deals", "7", "--seed", "5", "--workers", "3", "--no-progress",
                  "--backend", "ray", "--address", "ray://head:10001", "--no-save",
                  "--players", "3", "--option", "seven_penalty=double"])
    agents, kwargs = calls[-1]
    rules = kwargs.pop("rules")
    assert agents == ["random", "greedy"]
    assert kwargs == {"num_players": None, "deals": 7, "seed": 5, "workers": 3,
                      "progress": False, "tables": [["a", "b"], ["c", "d"]],
                      "backend": "ray", "address": "ray://head:10001"}
    assert rules.num_players == 3 and rules.seven_penalty == "double"
    with pytest.raises(Called):
        cli.main(["--agents", "random", "--no-save"])
    agents, kwargs = calls[-1]
    assert agents == ["random"] and kwargs["progress"] is True
    assert kwargs["tables"] is None and kwargs["workers"] is None
    assert (kwargs["deals"], kwargs["seed"], kwargs["backend"], kwargs["address"]) == \
        (1000, 0, "local", None)


def test_a_rules_file_takes_the_options_on_top(calls, tmp_path):
    rules = tmp_path / "r.yaml"
    rules.write_text("draw_rule: one\nseven_penalty: add\n", encoding="utf-8")
    with pytest.raises(Called):
        cli.main(["--table", "random,greedy", "--rules", str(rules), "--option",
                  "seven_penalty=double", "--no-save"])
    agents, kwargs = calls[-1]
    assert agents == [] and kwargs["tables"] == [["random", "greedy"]]
    assert kwargs["rules"].draw_rule == "one" and kwargs["rules"].seven_penalty == "double"


def test_without_agents_or_tables_it_says_what_to_give(calls, capsys):
    assert cli.main(["--no-save"]) == 2
    assert capsys.readouterr().err == \
        f"{PROG}: error: give --agents A,B,... (or --table lineups)\n"
    assert not calls


def test_the_arguments_default_to_the_command_line(calls, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["pis-tournament", "--agents", "mc,random", "--no-save"])
    with pytest.raises(Called):
        cli.main()
    assert calls[-1][0] == ["mc", "random"]
    monkeypatch.setattr(sys, "argv", ["pis-tournament", "--no-save"])
    assert cli.main() == 2
    assert capsys.readouterr().err.startswith("pis-tournament: error: give --agents")


def test_an_interrupt_is_exit_130_with_one_word(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_tournament", interrupted)
    assert cli.main(["--agents", "random", "--no-save"]) == 130
    assert capsys.readouterr().err == "\ninterrupted\n"


def test_a_run_prints_its_games_and_the_files_it_wrote(tmp_path, capsys):
    out = tmp_path / "t"
    assert cli.main(["--agents", "random,greedy,heuristic", "--players", "2", "--deals", "2",
                     "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    games = re.fullmatch(r"(\d+) games in [\d.]+ s on 1 worker\(s\)", lines[-2])
    assert games and int(games.group(1)) == 2 * 3 * 2  # deals x tables x seats
    assert lines[-3] == ""
    assert lines[-1].startswith("wrote ")
    written = lines[-1][len("wrote "):].split(", ")
    assert sorted(written) == sorted(str(p) for p in out.iterdir())


def test_a_failed_save_is_exit_1_naming_the_folder(tmp_path, monkeypatch, capsys):
    from agents.tournament.results import TournamentResult

    def full(self, out):
        raise OSError("disk full")

    monkeypatch.setattr(TournamentResult, "save", full)
    out = tmp_path / "t"
    assert cli.main(["--agents", "random,random", "--deals", "1", "--workers", "1",
                     "--no-progress", "--out", str(out)]) == 1
    assert capsys.readouterr().err == \
        f"{PROG}: error: cannot write the results to {out}: disk full\n"


def test_recorded_games_are_counted_and_a_failed_record_is_exit_2(tmp_path, monkeypatch,
                                                                    capsys):
    out = tmp_path / "t"
    argv = ["--agents", "random,random", "--deals", "1", "--workers", "1", "--no-progress",
            "--no-save", "--out", str(out), "--record", "2"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        f"recorded 2 game(s) in {out / 'histories'}"
    assert len(list((out / "histories").glob("table*-deal*-rotation*.json"))) == 2

    def broken(*args):
        raise RuntimeError("no replay")

    monkeypatch.setattr(cli, "record_games", broken)
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"{PROG}: error: --record: no replay\n"


def test_the_results_go_to_runs_tournament_unless_told():
    assert cli.build_parser().parse_args([]).out == "runs/tournament"

"""``python -m agents.tournament --record N``: the first N games as replayable histories."""

from __future__ import annotations

import json

import pytest

from agents.tournament import main, record_games, run_tournament
from pis_env import raw_env


def test_record_saves_replayable_histories_of_the_tournament_games(tmp_path, capsys):
    argv = ["--agents", "heuristic,random", "--deals", "2", "--seed", "4", "--workers", "1",
            "--no-progress", "--out", str(tmp_path), "--record", "3"]
    assert main(argv) == 0
    assert "recorded 3 game(s)" in capsys.readouterr().out
    folder = tmp_path / "histories"
    index = json.loads((folder / "index.json").read_text())
    assert [(g["deal"], g["rotation"]) for g in index] == [(0, 0), (0, 1), (1, 0)]
    assert index[0]["seats"] == index[1]["seats"][::-1]  # the seats swap each rotation
    for game in index:
        env = raw_env.from_history((folder / game["file"]).read_text())
        assert env.game.deal_over and env.game.charges == game["charges"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [g["file"] for g in index] + ["index.json"])


def test_recorded_games_are_the_tournament_games(tmp_path):
    result = run_tournament(["greedy", "random"], deals=3, seed=9, workers=1, progress=False)
    paths = record_games(result, 100, tmp_path)  # more than were played: all of them
    assert len(paths) == 3 * 2
    for path, (d, r) in zip(paths, [(d, r) for d in range(3) for r in range(2)]):
        env = raw_env.from_history(path.read_text())
        assert env.game.charges == result.table_results[0].charges[d, r].tolist()
    result.table_results[0].charges[0, 0] += 1  # a tournament record that does not replay
    with pytest.raises(RuntimeError, match="played differently"):
        record_games(result, 1, tmp_path / "again")


def test_a_negative_record_count_is_refused(tmp_path, capsys):
    assert main(["--agents", "random,greedy", "--record", "-1", "--out", str(tmp_path)]) == 2
    assert "--record must be >= 0" in capsys.readouterr().err

"""The student's labelling command (train/student/labels.py): chunk files, resume, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.panel import EVALUATION_SET, MODEL_SET
from train.expert import iteration as EI
from train.student import labels as SL


def small(tmp_path, *extra: str) -> list[str]:
    return ["--config", str(SL.DEFAULT_CONFIG), f"out_dir={tmp_path / 'labels'}", "games=2",
            "labeller.rollouts=16", "workers=1", *extra]


def test_the_command_writes_a_chunk_per_game_range_and_resumes(tmp_path, monkeypatch,
                                                               capsys):
    monkeypatch.setattr(EI, "GAME_CHUNK", 1)
    assert SL.main(small(tmp_path)) == 0
    out = capsys.readouterr().out
    files = sorted(p.name for p in (tmp_path / "labels").glob("*.npz"))
    assert files == ["games_0000000-0000001.npz", "games_0000001-0000002.npz"]
    assert "labels so far" in out and "labels/s" in out
    with np.load(tmp_path / "labels" / files[0]) as data:
        assert data["belief"].shape == (len(data["action"]), 52)
        np.testing.assert_array_equal(data["action"], data["search"])  # the search's moves
    recorded = json.loads((tmp_path / "labels" / "job.json").read_text())
    assert recorded["labeller"]["determinize"] == "particles" and recorded["seed"] == 61

    def nothing_left(unit):
        raise AssertionError(f"chunk {unit[1:]} labelled again")

    monkeypatch.setattr(EI, "_label_chunk", nothing_left)
    assert SL.main(small(tmp_path)) == 0
    assert "2 of 2 chunks" in capsys.readouterr().out
    assert SL.main(small(tmp_path, "labeller.rollouts=32")) == 2  # another job: refused
    assert "labeller" in capsys.readouterr().err


def test_at_a_table_without_a_network_a_bot_plays_the_labelled_seat(tmp_path, monkeypatch):
    """policy=heuristic at 3 players: every labelled position is one the heuristic
    reached, its move is the one a fresh heuristic makes there, and the search labels it
    with a belief over both opponents' hands."""
    from agents.heuristic import HeuristicAgent

    monkeypatch.setattr(EI, "GAME_CHUNK", 3)
    assert SL.main(small(tmp_path, "num_players=3", "policy=heuristic", "games=3",
                         "opponents={greedy: 1, self: 1}")) == 0
    (chunk,) = (tmp_path / "labels").glob("*.npz")
    with np.load(chunk) as data:
        assert sorted(set(data["seat"].tolist())) == [0, 1, 2]  # seat g % 3 of game g
        assert data["belief"].shape == (len(data["action"]), 2 * 52)
        np.testing.assert_array_equal(data["own"], data["behaviour"])
        bot = HeuristicAgent(3)
        moves = [bot.act({"observation": o, "action_mask": m})
                 for o, m in zip(data["obs"], data["mask"])]
        np.testing.assert_array_equal(moves, data["behaviour"])
        assert (data["mask"].sum(axis=1) > 1).all() and len(moves) >= 10


def test_the_default_mix_is_the_model_set_and_the_labeller_the_default_search():
    cfg = SL.load_config(SL.DEFAULT_CONFIG)
    assert set(cfg.opponents) - {"self"} <= set(MODEL_SET)
    assert (cfg.labeller.rollouts, cfg.labeller.determinize) == (4096, "particles")
    assert cfg.games * 12 >= 280_000  # about 13 labels a game: the 300,000 of issue 61


def test_the_three_player_labels_seat_the_heuristic_among_bots_of_the_model_set():
    from agents import make_for_table
    from pis_env.shipped import shipped_dir

    cfg = SL.load_config(shipped_dir("config") / "student_3p.yaml")
    assert (cfg.num_players, cfg.policy, cfg.sample) == (3, "heuristic", False)
    assert set(cfg.opponents) <= set(MODEL_SET) and sum(cfg.opponents.values()) == \
        pytest.approx(1.0)
    for name in cfg.opponents:
        assert make_for_table(name, cfg.rules).num_players == 3
    assert (cfg.labeller.rollouts, cfg.labeller.determinize) == (4096, "particles")


@pytest.mark.parametrize("override, words", [
    (f"opponents={{{EVALUATION_SET[0]}: 1}}", ["evaluation set", EVALUATION_SET[0]]),
    ("opponents={heuristik: 1}", ["unknown bot", "heuristik"]),
    ("games=0", ["games", ">= 1"]),
    ("policy=nowhere.zip", ["policy", "no such policy file, nor a bot", "nowhere.zip"]),
    ("rules.draw_rule=never", ["rules"]),
])
def test_bad_values_are_one_line_errors(tmp_path, capsys, override, words):
    assert SL.main([f"out_dir={tmp_path / 'x'}", override]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(w in err for w in words), err
    assert not (tmp_path / "x").exists()

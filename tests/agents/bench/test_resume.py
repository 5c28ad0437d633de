"""A card played in pieces: a killed ``pis-bench`` goes on from its finished stages and
gives the card an uninterrupted run gives."""

import json

import pytest

import agents.bench.card as card_module
from agents.bench import cli
from agents.bench.card import make_card

FIELD = ["random", "greedy"]
REAL_PLAY = card_module.play_field
SETTINGS = dict(sizes=(2, 3), decks=3, matches=1, seed=5, progress=False, field=FIELD,
                workers=1)


def _figures(card):
    return {k: v for k, v in card.items() if k not in ("elapsed_s", "date")}


def _interrupt_after(monkeypatch, stages):
    """play_field that raises once ``stages`` stages have been played; returns the
    (size, deals) of each stage played."""
    real, played = REAL_PLAY, []

    def play(bots, field, n, count, seed, workers, progress, num_deals=1, **kw):
        if len(played) == stages:
            raise KeyboardInterrupt
        played.append((n, num_deals))
        return real(bots, field, n, count, seed, workers, progress, num_deals=num_deals, **kw)

    monkeypatch.setattr(card_module, "play_field", play)
    return played


def test_a_killed_card_plays_only_its_missing_stages_and_gives_the_same_figures(
        tmp_path, monkeypatch):
    whole = make_card("heuristic", **SETTINGS)
    partial = tmp_path / "card.json.partial"
    played = _interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **SETTINGS)
    assert played == [(2, 1), (3, 1)]
    assert json.loads(partial.read_text())["stages"] == ["2x1", "3x1"]
    played = _interrupt_after(monkeypatch, 99)
    resumed = make_card("heuristic", checkpoint=partial, **SETTINGS)
    assert played == [(2, 4), (3, 4)]
    assert _figures(resumed) == _figures(whole)


def test_a_partial_card_of_other_settings_is_refused_before_any_play(tmp_path, monkeypatch):
    partial = tmp_path / "card.json.partial"
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **SETTINGS)
    played = _interrupt_after(monkeypatch, 99)
    with pytest.raises(ValueError, match=r"another run \(its seed 5\)"):
        make_card("heuristic", checkpoint=partial, **{**SETTINGS, "seed": 6})
    partial.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable partial card"):
        make_card("heuristic", checkpoint=partial, **SETTINGS)
    assert played == []


def test_the_command_resumes_from_json_partial_and_removes_it_when_done(
        tmp_path, monkeypatch, capsys):
    out = tmp_path / "card.json"
    argv = ["heuristic", "--players", "2", "--decks", "3", "--matches", "1", "--seed", "5",
            "--field", ",".join(FIELD), "--workers", "1", "--no-progress", "--json", str(out)]
    _interrupt_after(monkeypatch, 1)
    assert cli.main(argv) == 130
    assert (tmp_path / "card.json.partial").exists() and not out.exists()
    played = _interrupt_after(monkeypatch, 99)
    assert cli.main(argv) == 0
    assert played == [(2, 4)]
    assert out.exists() and not (tmp_path / "card.json.partial").exists()
    assert json.loads(out.read_text())["sizes"]["2"]["matches"]["refs"]["random"]["games"] == 2
    capsys.readouterr()

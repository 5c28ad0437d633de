"""A card played in pieces: a killed ``pis-bench`` goes on from its finished stages and
tables and gives the card an uninterrupted run gives."""

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


def _kill_after_tables(monkeypatch, tables):
    """play_field whose run is killed once ``tables`` tables are finished (and kept);
    returns the (size, deals, members) each call was asked to play."""
    real, asked, kept = REAL_PLAY, [], []

    def play(bots, field, n, count, seed, workers, progress, num_deals=1, pairs=None,
             on_table=None, **kw):
        asked.append((n, num_deals, [m for _, m in pairs]))

        def keep(bot, member, played):
            on_table(bot, member, played)
            kept.append(member)
            if len(kept) == tables:
                raise KeyboardInterrupt

        return real(bots, field, n, count, seed, workers, progress, num_deals=num_deals,
                    pairs=pairs, on_table=keep, **kw)

    monkeypatch.setattr(card_module, "play_field", play)
    return asked


def test_a_card_killed_within_a_stage_plays_only_its_missing_tables(tmp_path, monkeypatch):
    field = ["random", "greedy", "held_out"]
    settings = {**SETTINGS, "field": field, "decks": 4}
    whole = make_card("heuristic", **settings)
    partial = tmp_path / "card.json.partial"
    asked = _kill_after_tables(monkeypatch, 4)  # the 2-player stage and one table more
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **settings)
    assert asked == [(2, 1, field), (3, 1, field)]
    saved = json.loads(partial.read_text())
    assert saved["stages"] == ["2x1"] and list(saved["tables"]) == ["3x1"]
    assert list(saved["tables"]["3x1"]) == ["random"]
    asked = _kill_after_tables(monkeypatch, 99)
    resumed = make_card("heuristic", checkpoint=partial, **settings)
    assert asked == [(3, 1, ["greedy", "held_out"]), (2, 4, field), (3, 4, field)]
    assert _figures(resumed) == _figures(whole)
    assert json.loads(partial.read_text())["tables"] == {}


def _killed(partial, **settings) -> dict:
    """Plays the card until the patched play_field kills it; returns the partial card."""
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **{**SETTINGS, **settings})
    return json.loads(partial.read_text())


def test_a_partial_card_of_finished_stages_only_resumes(tmp_path, monkeypatch):
    """A partial card kept before tables were kept (stages only) goes on too."""
    partial = tmp_path / "card.json.partial"
    _interrupt_after(monkeypatch, 1)
    saved = _killed(partial)
    del saved["tables"]
    partial.write_text(json.dumps(saved))
    played = _interrupt_after(monkeypatch, 99)
    resumed = make_card("heuristic", checkpoint=partial, **SETTINGS)
    assert played == [(3, 1), (2, 4), (3, 4)]
    monkeypatch.setattr(card_module, "play_field", REAL_PLAY)
    assert _figures(resumed) == _figures(make_card("heuristic", **SETTINGS))


def test_a_kept_table_of_another_size_is_refused(tmp_path, monkeypatch):
    partial = tmp_path / "card.json.partial"
    _kill_after_tables(monkeypatch, 1)
    saved = _killed(partial)
    saved["tables"]["2x1"]["random"]["games"].append(2.0)
    partial.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="a kept table of heuristic against random does "
                                         "not hold 3 decks: delete the partial card"):
        make_card("heuristic", checkpoint=partial, **SETTINGS)


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


class _Clock:
    """A clock that moves 12.373 s at every reading."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        self.now += 12.373
        return self.now


def test_the_time_of_a_card_played_in_pieces_adds_up_its_runs(tmp_path, monkeypatch):
    """The partial keeps the time played so far, to a tenth of a second, and the resumed
    card adds its own: a card's ``elapsed_s`` is the time of all its runs."""
    clock = _Clock()
    monkeypatch.setattr(card_module, "time", clock)
    partial = tmp_path / "card.json.partial"
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **SETTINGS)
    # readings: the start, then one per kept table (2) and one after the stage
    assert json.loads(partial.read_text())["elapsed_s"] == 37.1  # round(3 * 12.373, 1)
    _interrupt_after(monkeypatch, 99)
    resumed = make_card("heuristic", checkpoint=partial, **SETTINGS)
    # three stages of two tables: 9 readings after the start, then the card's own
    assert resumed["elapsed_s"] == round(37.1 + 10 * 12.373, 1)  # 160.8, not 160.83


def test_the_partial_card_keeps_the_settings_earlier_versions_wrote(tmp_path, monkeypatch):
    """The keys of a partial card's settings are a file format: a partial written by an
    earlier version (a card of hours) must still be recognised as the same run."""
    from agents.bench.rating import load_reference

    partial = tmp_path / "card.json.partial"
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **SETTINGS)
    saved = json.loads(partial.read_text())
    assert saved["format"] == "pis-bench-partial-card"
    assert saved["settings"] == {"bot": "heuristic", "players": [2, 3], "decks": 3,
                                 "matches": 1, "seed": 5, "field": FIELD,
                                 "reference": load_reference()["measured"]}


def test_a_resumed_card_says_what_it_goes_on_from(tmp_path, monkeypatch, capsys):
    partial = tmp_path / "card.json.partial"
    quiet = {**SETTINGS, "progress": False}
    loud = {**SETTINGS, "progress": True}
    _kill_after_tables(monkeypatch, 1)  # one table of the first stage
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **quiet)
    capsys.readouterr()
    _kill_after_tables(monkeypatch, 2)  # that stage's other table, then one more
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **loud)
    err = capsys.readouterr().err
    assert (f"resuming from {partial}: 0 of 4 stages and 1 tables of the others already "
            "played\n") in err
    # the bar counts the deals left: one table of 3 decks x 2 seats at 2 players, two
    # tables of 3 x 3 at 3, and the matches (1 x 4 deals, at both sizes, two tables)
    assert "card: 6/64 deals (9%)" in err
    _kill_after_tables(monkeypatch, 99)
    make_card("heuristic", checkpoint=partial, **quiet)  # quiet: nothing said
    assert capsys.readouterr().err == ""
    partial.unlink()
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **quiet)
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        make_card("heuristic", checkpoint=partial, **loud)
    assert (f"resuming from {partial}: 1 of 4 stages and 0 tables of the others already "
            "played\n") in capsys.readouterr().err


def test_a_stage_read_from_its_kept_tables_is_the_stage_played_whole(tmp_path, monkeypatch):
    kept = {}
    whole = REAL_PLAY(["heuristic"], FIELD, 3, 3, 5, 1, False,
                      on_table=lambda bot, member, played: kept.update(
                          {member: card_module._kept(played)}))
    read = card_module._stage_play(json.loads(json.dumps(kept)), "heuristic", FIELD, 3, 3,
                                   5, 1)
    for name in ("bots", "members", "num_players", "decks", "seed", "num_deals",
                 "truncated"):
        assert getattr(read, name) == getattr(whole, name), name
    for name in ("wins", "games", "charges"):
        for member in FIELD:
            got, want = getattr(read, name)["heuristic"][member], \
                getattr(whole, name)["heuristic"][member]
            assert got.dtype == want.dtype and (got == want).all(), (name, member)

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


class EventLogReader:
    """A bot that reads the v1 observation (the public event log): it asks for it with
    ``layout_version`` and refuses any other, then plays its first legal move."""

    layout_version = 1

    def __init__(self, num_players: int = 2, seed: int | None = None, num_deals: int = 1):
        from pis_env.observation import Layout

        self.size = Layout.of(num_players, num_deals, 1).size

    def act(self, observation):
        import numpy as np

        assert observation["observation"].shape == (self.size,), "not the v1 observation"
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_a_recorded_match_replays_every_deal_and_each_bot_sees_its_own_layout(tmp_path):
    from pis_env import Rules

    result = run_tournament([EventLogReader, "greedy"], deals=2, seed=3, workers=1,
                            progress=False, rules=Rules(num_deals=2))
    paths = record_games(result, 3, tmp_path)
    index_text = (tmp_path / "index.json").read_text()
    index = json.loads(index_text)
    assert index_text == json.dumps(index, indent=1)
    assert [(g["table"], g["deal"], g["rotation"]) for g in index] == [(0, 0, 0), (0, 0, 1),
                                                                        (0, 1, 0)]
    for path, game in zip(paths, index, strict=True):
        env = raw_env.from_history(path.read_text())
        assert env.game.deal_index == 1 and env.game.match_over  # both deals of the match
        assert env.game.totals == game["charges"]


def test_a_game_that_does_not_replay_names_itself(tmp_path):
    result = run_tournament(["greedy", "random"], deals=2, seed=9, workers=1, progress=False)
    result.table_results[0].charges[1, 1] += 1
    with pytest.raises(RuntimeError) as err:
        record_games(result, 4, tmp_path)
    assert str(err.value) == ("table 0, deal 1, rotation 1 played differently when "
                              "recorded: a bot does not play the same from the same seed")


def test_a_recorded_deal_shows_each_bot_its_own_layout_too(tmp_path):
    """One path for deals and matches: an event-log bot at a one-deal table was shown the
    table's v0 observation when its game was recorded, and the record failed."""
    result = run_tournament([EventLogReader, "greedy"], deals=2, seed=3, workers=1,
                            progress=False)
    paths = record_games(result, 4, tmp_path)
    for path, (d, r) in zip(paths, [(d, r) for d in range(2) for r in range(2)],
                            strict=True):
        env = raw_env.from_history(path.read_text())
        assert env.game.deal_over and env.game.charges == \
            result.table_results[0].charges[d, r].tolist()


def test_matches_that_reshuffle_are_recorded_from_their_env_seed(tmp_path):
    from pis_env import Rules

    result = run_tournament(["random", "random"], deals=6, seed=3, workers=1, progress=False,
                            rules=Rules(num_deals=2, empty_stock="reshuffle"))
    paths = record_games(result, 12, tmp_path)  # a reshuffle drawn otherwise fails here
    reshuffled = sum(len(deal["reshuffles"]) for p in paths
                     for deal in json.loads(p.read_text())["deals"])
    assert len(paths) == 12 and reshuffled > 0


class Bare:
    """A bot with nothing but ``act``: no ``layout_version``, so the table's own layout."""

    def __init__(self, num_players: int = 2, seed: int | None = None):
        pass

    def act(self, observation):
        import numpy as np

        assert observation["observation"].shape == (raw_env().observation_space(
            "player_0")["observation"].shape[0],)
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_a_bot_without_a_layout_version_is_recorded_at_the_tables_own(tmp_path):
    result = run_tournament([Bare, "greedy"], deals=1, seed=2, workers=1, progress=False)
    assert len(record_games(result, 2, tmp_path)) == 2

"""The heuristic bot and its held-out re-weightings keep choosing the recorded moves.

``tests/fixtures/heuristic_moves.json`` holds seeded games at 2 to 7 players (one-deal
tables, and four-deal matches at 2, 3 and 6 players) played by a fixed driver that does
not depend on the heuristic, and at every decision of every seat the move the heuristic
(default weights) and each variant of ``agents.heuristic.variants.HELD_OUT`` would have
chosen there. The positions are replayed from the driver's recorded moves by
``scripts/record_heuristic_moves.py`` (the one replay, shared with the recording), and every
bot is asked again, seated and fed as at a tournament table. A difference names the
table, the game's seed, the decision's index, phase and legal actions, and the recorded
and the new move.

A change meant to alter the heuristic's play at some tables re-records the fixture
(``python scripts/record_heuristic_moves.py``) in the same commit; the 2-player
single-deal moves and the held-out variants' moves are the ones such a change must keep.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from agents.heuristic.variants import HELD_OUT

ROOT = Path(__file__).resolve().parents[3]


def _load_tool():
    path = ROOT / "scripts" / "record_heuristic_moves.py"
    spec = importlib.util.spec_from_file_location("record_heuristic_moves", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


tool = _load_tool()
FIXTURE = tool.load()
TABLES = {tool.table_key(t["num_players"], t["num_deals"]): t for t in FIXTURE["tables"]}
OTHER_TABLES = [key for key in TABLES if key != "2p"]


@cache
def replayed(key: str):
    """The decisions of the fixture table ``key``'s games, replayed now (once per run)."""
    return tool.replay_table(TABLES[key], FIXTURE["bots"])


def assert_recorded(key: str, bot: str) -> None:
    difference = tool.first_difference(TABLES[key], replayed(key), bot)
    if difference:
        pytest.fail(f"{difference}\n(re-record with python scripts/record_heuristic_moves.py "
                    "only if the play is meant to change here)", pytrace=False)


def test_the_two_player_single_deal_moves_are_the_recorded_ones():
    assert_recorded("2p", "heuristic")


@pytest.mark.parametrize("key", OTHER_TABLES)
def test_the_default_heuristic_plays_its_recorded_moves_at_three_to_seven_players_and_in_matches(
        key):
    assert_recorded(key, "heuristic")


@pytest.mark.parametrize("variant", sorted(HELD_OUT))
@pytest.mark.parametrize("key", list(TABLES))
def test_the_held_out_variants_play_their_recorded_moves_at_every_size(key, variant):
    assert_recorded(key, variant)


@pytest.mark.parametrize("key", [k for k, t in TABLES.items() if t["num_players"] >= 5])
def test_the_fixture_holds_moves_of_the_big_tables_play_at_five_to_seven_players(key):
    """The default heuristic's recorded moves at 5 to 7 players include the big tables'
    play (``Params.big_table``): switched off, it chooses otherwise at a good number of
    the recorded decisions, so the fixture holds that play, not only the old one."""
    off = tool.replay_table(TABLES[key], {"off": "heuristic?big_table=false"})
    recorded = [a for g in TABLES[key]["games"] for a in g["heuristic"]]
    moves = [d.moves["off"] for game in off for d in game]
    assert len(moves) == len(recorded)
    assert sum(a != b for a, b in zip(recorded, moves)) >= 10


def test_the_fixture_records_every_held_out_variant_at_every_table_size():
    assert set(FIXTURE["bots"]) == {"heuristic", *HELD_OUT}
    one_deal = sorted(t["num_players"] for t in TABLES.values() if t["num_deals"] == 1)
    assert one_deal == [2, 3, 4, 5, 6, 7]
    assert {t["num_players"] for t in TABLES.values() if t["num_deals"] > 1} == {2, 3, 6}


@pytest.mark.parametrize("key", list(TABLES))
def test_the_replayed_positions_are_the_recorded_ones_and_cover_every_phase(key):
    """The replay reaches the recorded positions (the fixture's count of decisions per
    phase, with and without a choice), and every phase holds a decision with a choice."""
    table = TABLES[key]
    decisions = [d for game in replayed(key) for d in game]
    assert [d.driver for d in decisions] == [a for g in table["games"] for a in g["driver"]]
    phases = {p: [sum(d.phase == p for d in decisions),
                  sum(d.phase == p and len(d.legal) > 1 for d in decisions)]
              for p in tool.PHASES}
    assert phases == table["phases"]
    assert all(choices > 0 for _, choices in phases.values()), phases
    assert len(decisions) == table["decisions"] >= 300


def test_the_numba_port_chooses_the_recorded_moves():
    """``agents.heuristic.batched.HeuristicPolicy``, reading the same observation and mask
    rows (its observation route), chooses every recorded move, for every weighting."""
    from agents.heuristic.batched import HeuristicPolicy
    from pis_env import action_name
    from pis_env.rules import Rules

    weights = {"heuristic": None, **HELD_OUT}
    for key, table in TABLES.items():
        games = replayed(key)
        decisions = [d for game in games for d in game]
        obs = np.stack([d.observation for d in decisions])
        masks = np.stack([d.mask for d in decisions])
        where = [(g["seed"], i) for g, game in zip(table["games"], games)
                 for i in range(len(game))]
        rules = Rules(num_players=table["num_players"], num_deals=table["num_deals"])
        for bot in FIXTURE["bots"]:
            got = HeuristicPolicy(len(decisions), rules, params=weights[bot])(obs, masks)
            expected = [a for g in table["games"] for a in g[bot]]
            wrong = np.flatnonzero(np.asarray(got) != np.asarray(expected))
            if wrong.size:
                k = int(wrong[0])
                seed, i = where[k]
                pytest.fail(f"{bot} (numba port) at {key}, seed {seed}, decision {i} (phase "
                            f"{decisions[k].phase}): recorded {action_name(expected[k])}, "
                            f"got {action_name(int(got[k]))}", pytrace=False)

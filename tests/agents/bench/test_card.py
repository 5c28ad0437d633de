"""The benchmark card's figures (``agents.bench.card``) and its field: the intervals
against the formulas computed here, the reference field at every size, and the card as
``python -m benchmarks.panel`` reads the same tables.

Why: the card is the figure users compare across days; its intervals must be the
documented ones (Wilson's over seat-deals, a normal one over decks), and every reference
bot must sit at every size the card offers, or a card at seven players fails halfway.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.bench.card import format_card, make_card, mode_figures
from agents.bench.field import REFERENCE_FIELD, TABLE_SIZES, FieldPlay
from agents.panel import EVALUATION_SET
from agents.tournament.matches import build_seat

Z = 1.959963984540054


@pytest.mark.parametrize("n", list(TABLE_SIZES))
def test_every_reference_bot_sits_at_every_size_at_single_deals_and_at_matches(n):
    assert set(EVALUATION_SET) < set(REFERENCE_FIELD)
    assert {"random", "greedy", "heuristic"} < set(REFERENCE_FIELD)
    for ref in REFERENCE_FIELD:
        for num_deals in (1, 4):
            assert build_seat(ref, n, 0, num_deals).num_players == n


def _play(wins, games, charges, members=("random", "attacker", "counter")) -> FieldPlay:
    return FieldPlay(bots=["bot"], members=list(members), num_players=2, decks=len(wins[0]),
                     seed=0, num_deals=1,
                     wins={"bot": {m: np.array(w, float) for m, w in zip(members, wins)}},
                     games={"bot": {m: np.array(g, float) for m, g in zip(members, games)}},
                     charges={"bot": {m: np.array(c, float) for m, c in zip(members, charges)}},
                     truncated=0, elapsed_s=0.0, workers=1)


def test_the_win_share_has_wilsons_interval_and_the_charge_a_bootstrap_over_decks():
    # Against random: 3 + 2 wins in 4 + 4 seat-deals (5/8), charges 8 and 20 (2 and 5 a deal).
    played = _play(wins=[[3, 2], [1, 1], [0, 2]], games=[[4, 4], [2, 2], [2, 2]],
                   charges=[[8, 20], [0, 6], [10, 2]])
    refs = mode_figures(played, "bot")["refs"]
    p, k = 5 / 8, 8
    centre = (p + Z * Z / (2 * k)) / (1 + Z * Z / k)
    half = Z * math.sqrt(p * (1 - p) / k + Z * Z / (4 * k * k)) / (1 + Z * Z / k)
    assert refs["random"]["share"] == p and refs["random"]["games"] == 8
    assert (refs["random"]["low"], refs["random"]["high"]) == pytest.approx(
        (centre - half, centre + half))
    # per-deck means 2 and 5: mean 3.5; a resample of two decks has mean 2, 3.5 or 5, so
    # the percentile bootstrap's 95% interval is [2, 5] (a normal one reaches below 0)
    assert refs["random"]["charge"] == 3.5
    assert (refs["random"]["charge_low"], refs["random"]["charge_high"]) == (2.0, 5.0)


def test_the_evaluation_mean_is_over_decks_of_each_decks_mean_over_the_set():
    # Evaluation-set members here: attacker (shares 0.5, 0.5) and counter (0, 1); random
    # is not in the set. Deck means 0.25 and 0.75: mean 0.5, sd 0.35355.
    played = _play(wins=[[3, 2], [1, 1], [0, 2]], games=[[4, 4], [2, 2], [2, 2]],
                   charges=[[8, 20], [0, 6], [10, 2]])
    ev = mode_figures(played, "bot")["evaluation_mean"]
    sd = math.sqrt((0.25 - 0.5) ** 2 + (0.75 - 0.5) ** 2)
    assert ev["members"] == ["attacker", "counter"]
    assert ev["share"] == pytest.approx(0.5)
    assert (ev["low"], ev["high"]) == pytest.approx((0.5 - Z * sd / math.sqrt(2),
                                                     0.5 + Z * sd / math.sqrt(2)))


def test_the_printed_card_names_its_budget_reference_date_and_rating():
    card = {"bot": "x", "decks": 2, "matches": 0, "match_deals": 4, "seed": 3,
            "field": ["random", "heuristic"],
            "reference": {"measured": "2026-12-07"},
            "sizes": {"2": {"bot": "x", "rating": {"rating": 1190.8, "low": 1100.2,
                                                   "high": 1281.4, "unbounded": None},
                            "deals": {"refs": {r: {"share": 0.75, "low": 0.3, "high": 0.95,
                                                   "games": 4, "charge": 1.0,
                                                   "charge_low": None, "charge_high": None}
                                               for r in ("random", "heuristic")},
                                      "truncated": 0}}}}
    text = format_card(card)
    assert "2 duplicate decks" in text and "seed 3" in text and "2026-12-07" in text
    assert "rating 1191 [1100, 1281]" in text
    assert "75.0 [30.0, 95.0]" in text


def test_the_panel_benchmark_reads_tables_with_the_cards_code():
    import agents.bench.field as field
    import benchmarks.panel as panel

    assert panel.table_shares is field.table_shares
    assert panel.play_field is field.play_field


def test_a_card_is_played_on_the_decks_of_seed_0_unless_told():
    settings = dict(sizes=(2,), decks=4, matches=0, progress=False, field=["greedy"],
                    workers=1)
    default = make_card("heuristic", **settings)
    assert default["seed"] == 0
    assert default["sizes"] == make_card("heuristic", seed=0, **settings)["sizes"]
    assert default["sizes"] != make_card("heuristic", seed=1, **settings)["sizes"]


def test_a_card_plays_a_quarter_of_its_decks_as_matches_and_shows_its_progress_unless_told(
        capsys):
    card = make_card("heuristic", sizes=(2,), decks=8, field=["greedy"], workers=1)
    assert card["matches"] == 2
    assert card["sizes"]["2"]["matches"]["refs"]["greedy"]["games"] == 2 * 2  # rotations
    # 8 decks x 2 seats + 2 matches x 4 deals x 2 seats
    assert "card: 32/32 deals (100%)" in capsys.readouterr().err
    card = make_card("heuristic", sizes=(2,), decks=8, matches=0, field=["greedy"],
                     workers=1, progress=False)
    assert card["matches"] == 0 and "matches" not in card["sizes"]["2"]
    assert capsys.readouterr().err == ""


def test_the_rating_is_fitted_against_the_reference_it_is_given():
    from agents.bench.rating import load_reference

    stored = load_reference()
    shifted = {**stored, "measured": "another day",
               "ratings": {n: {bot: r + 100 for bot, r in table.items()}
                           for n, table in stored["ratings"].items()}}
    settings = dict(sizes=(2,), decks=4, matches=0, progress=False, field=["greedy"],
                    workers=1)
    card = make_card("heuristic", **settings)
    moved = make_card("heuristic", reference=shifted, **settings)
    assert moved["sizes"]["2"]["rating"]["rating"] == pytest.approx(
        card["sizes"]["2"]["rating"]["rating"] + 100)
    assert moved["reference"]["measured"] == "another day"
    assert card["reference"]["measured"] == stored["measured"]


def test_a_bot_that_won_or_lost_every_deal_has_no_finite_rating_and_the_card_says_which():
    settings = dict(sizes=(2,), decks=3, matches=0, progress=False, workers=1)
    won = make_card("heuristic", field=["random"], **settings)["sizes"]["2"]
    lost = make_card("random", field=["heuristic"], **settings)["sizes"]["2"]
    assert won["deals"]["refs"]["random"]["share"] == 1.0
    assert lost["deals"]["refs"]["heuristic"]["share"] == 0.0
    assert won["rating"] == {"rating": None, "low": None, "high": None, "unbounded": "above"}
    assert lost["rating"] == {"rating": None, "low": None, "high": None, "unbounded": "below"}
    fitted = make_card("heuristic", field=["greedy"], **{**settings, "decks": 8})
    assert fitted["sizes"]["2"]["rating"]["unbounded"] is None


def test_the_card_names_its_sizes_bot_at_each_size_and_the_stored_reference():
    from agents.bench.rating import load_reference

    card = make_card("ppo:models/ppo_{n}p.zip", sizes=(2,), decks=2, matches=0,
                     progress=False, field=["greedy"], workers=1)
    assert card["players"] == [2] and card["bot"] == "ppo:models/ppo_{n}p.zip"
    assert card["sizes"]["2"]["bot"] == "ppo:models/ppo_2p.zip"
    stored = load_reference()
    assert card["reference"] == {k: stored[k] for k in ("measured", "command", "seed",
                                                        "decks")}


def test_the_card_plays_with_the_workers_progress_and_backend_asked(monkeypatch):
    import agents.bench.card as card_module

    asked, real = [], card_module.play_field

    def play(bots, field, n, count, seed, workers, progress, **kw):
        asked.append((workers, progress, kw["backend"], kw["address"]))
        return real(bots, field, n, count, seed, 1, False, **{**kw, "backend": "local",
                                                              "address": None})

    monkeypatch.setattr(card_module, "play_field", play)
    make_card("heuristic", sizes=(2,), decks=2, matches=1, progress=False, field=["greedy"],
              workers=7, backend="ray", address="ray://head:10001")
    assert asked == [(7, False, "ray", "ray://head:10001")] * 2


def test_a_tables_play_is_the_bots_seats_of_every_rotation_counted_by_hand():
    from agents.bench.field import table_play
    from agents.tournament.worker import REASONS, TableResult

    rng = np.random.default_rng(4)
    deals, n = 30, 3
    lineup = ["bot", "m#1", "m#2"]
    seating = [lineup[-r:] + lineup[:-r] for r in range(n)]
    truncated = REASONS.index("truncated")
    reasons = rng.choice([0, 1, truncated], size=(deals, n)).astype(np.uint8)
    winners = rng.random((deals, n, n)) < 0.4
    charges = rng.integers(0, 50, (deals, n, n)).astype(np.int32)
    played = table_play(TableResult(lineup=lineup, seating=seating, charges=charges,
                                    winners=winners, reasons=reasons,
                                    decisions=np.ones((deals, n), np.int32)), "bot")
    for d in range(deals):
        wins = games = charge = 0.0
        for r in range(n):
            if reasons[d, r] == truncated:
                continue
            seat = seating[r].index("bot")
            games += 1
            charge += charges[d, r, seat]
            if winners[d, r, seat]:
                wins += 1 / winners[d, r].sum()
        assert (played.wins[d], played.games[d], played.charges[d]) == \
            pytest.approx((wins, games, charge))
    assert played.truncated == int((reasons == truncated).sum()) > 0


def test_each_finished_table_of_a_field_is_handed_over_as_the_field_reads_it(monkeypatch):
    """Even where the bot is also a member (two labels of one spec)."""
    import agents.bench.field as field_module
    from agents.bench.field import play_field

    handed, asked = {}, []
    real = field_module.run_tournament

    def tournament(*args, **kw):
        asked.append((kw["backend"], kw["address"]))
        return real(*args, **{**kw, "backend": "local", "address": None})

    monkeypatch.setattr(field_module, "run_tournament", tournament)
    members = ["greedy", "heuristic"]
    whole = play_field(["heuristic"], members, 2, 3, 5, 1, False, backend="ray",
                       address="ray://head:10001",
                       on_table=lambda bot, member, played: handed.update(
                           {(bot, member): played}))
    assert asked == [("ray", "ray://head:10001")]
    assert list(handed) == [("heuristic", "greedy"), ("heuristic", "heuristic")]
    for (bot, member), played in handed.items():
        assert (played.games == whole.games[bot][member]).all() and played.games.sum() == 6
        assert (played.wins == whole.wins[bot][member]).all()
        assert (played.charges == whole.charges[bot][member]).all()
    assert whole.truncated == sum(p.truncated for p in handed.values())

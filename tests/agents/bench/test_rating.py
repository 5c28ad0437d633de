"""The benchmark card's fixed rating scale (``agents.bench.rating``) against answers
computed here independently: Elo's closed form at two players, the three-player win-share
equation solved as a quadratic, a hand-stacked three-player table read as the card reads
it, Wald's interval from the Fisher information, and the stored reference ratings.

Why: a card is only comparable across days if the fit is the documented model exactly;
a wrong sign, a missing ``n - 1`` or an off-by-one in the log would shift every rating
and no tournament would notice.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.bench.field import REFERENCE_FIELD, TABLE_SIZES, table_shares
from agents.bench.rating import (
    fit_field,
    fit_rating,
    load_reference,
    win_probability,
)
from agents.tournament.worker import REASONS, TableResult


def test_a_bot_winning_three_deals_in_four_against_the_anchor_rates_1191_at_two_players():
    fit = fit_rating([(1000.0, 75, 100)], num_players=2)
    assert fit.rating == pytest.approx(1000 + 400 * math.log10(3), abs=1e-6)  # 1190.85
    assert fit.low < fit.rating < fit.high


def test_the_interval_is_walds_from_the_fisher_information():
    # p = 0.75 at the fit; information (ln 10 / 400)^2 * G * p * (1 - p); z = 1.959964
    fit = fit_rating([(1000.0, 75, 100)], num_players=2)
    info = (math.log(10) / 400) ** 2 * 100 * 0.75 * 0.25
    half = 1.959963984540054 / math.sqrt(info)
    assert (fit.low, fit.high) == pytest.approx((fit.rating - half, fit.rating + half))


def test_the_three_player_fit_solves_the_win_share_equation_in_closed_form():
    # References of strength 1 (rating 1000) and 2 (1000 + 400 log10 2); 100 seat-deals
    # each, 50 and 40 wins. With the bot's strength x the likelihood's root is
    # 90 = 100 x / (x + 2) + 100 x / (x + 4), i.e. 1.1 x^2 + 0.6 x - 7.2 = 0.
    a, b, c = 1.1, 0.6, -7.2
    x = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    assert x == pytest.approx(2.3, abs=1e-3)
    fit = fit_rating([(1000.0, 50, 100), (1000 + 400 * math.log10(2), 40, 100)],
                     num_players=3)
    assert fit.rating == pytest.approx(1000 + 400 * math.log10(x), abs=1e-6)


def test_a_hand_stacked_three_player_table_is_read_and_rated_as_documented():
    # The bot against two copies of a reference bot rated 1100, three rotations of four
    # decks. Per rotation the winners are stacked by hand: the bot wins deck 0 alone at
    # every rotation, shares deck 1's win with one copy (a half each), loses deck 2, and
    # deck 3 is truncated at rotation 0 (left out). Wins 3 + 1.5 = 4.5 of 11 seat-deals.
    lineup = ["bot", "ref#1", "ref#2"]
    seating = [[lineup[(seat - r) % 3] for seat in range(3)] for r in range(3)]
    winners = np.zeros((4, 3, 3), bool)
    reasons = np.zeros((4, 3), np.uint8)
    for r in range(3):
        bot_seat = seating[r].index("bot")
        winners[0, r, bot_seat] = True
        winners[1, r, bot_seat] = winners[1, r, (bot_seat + 1) % 3] = True
        winners[2, r, (bot_seat + 2) % 3] = True
        winners[3, r, bot_seat] = r != 0
    reasons[3, 0] = REASONS.index("truncated")
    table = TableResult(lineup=lineup, seating=seating, charges=np.zeros((4, 3, 3), np.int32),
                        winners=winners, reasons=reasons, decisions=np.ones((4, 3), np.int32))
    wins, games = table_shares(table, "bot")
    assert wins.tolist() == [3.0, 1.5, 0.0, 2.0] and games.tolist() == [3, 3, 3, 2]
    share = 6.5 / 11
    # One reference: share = x / (x + 2 r)  =>  R = r + 400 log10(2 share / (1 - share)).
    fit = fit_rating([(1100.0, wins.sum(), games.sum())], num_players=3)
    assert fit.rating == pytest.approx(1100 + 400 * math.log10(2 * share / (1 - share)),
                                       abs=1e-6)


@pytest.mark.parametrize("n", list(TABLE_SIZES))
def test_an_equal_share_of_the_wins_rates_a_bot_as_its_reference(n):
    assert win_probability(1234.0, 1234.0, n) == pytest.approx(1 / n)
    assert fit_rating([(1234.0, 100, 100 * n)], n).rating == pytest.approx(1234.0, abs=1e-6)


def test_a_bot_that_won_every_deal_or_none_has_no_finite_rating():
    assert fit_rating([(1000.0, 10, 10), (800.0, 5, 5)], 2).rating == math.inf
    assert fit_rating([(1000.0, 0, 10)], 3).rating == -math.inf
    with pytest.raises(ValueError, match="no games"):
        fit_rating([(1000.0, 0, 0)], 2)


def test_the_field_fit_recovers_the_ratings_that_made_the_shares():
    # Shares made exactly by the model from known ratings, every ordered pair at 3 players:
    # the joint fit must give them back, with the anchor held where it was put.
    truth = {"heuristic": 1000.0, "a": 820.0, "b": 1130.0, "c": 955.0}
    tables = []
    for x in truth:
        for y in truth:
            if x != y:
                p = 1 / (1 + 2 * 10 ** ((truth[y] - truth[x]) / 400))
                tables.append((x, y, 3000 * p, 3000))
    fitted = fit_field(tables, 3)
    assert fitted == pytest.approx(truth, abs=1e-5)
    assert list(fitted) == ["heuristic", "a", "b", "c"]


def test_the_stored_reference_ratings_cover_the_field_at_every_size_with_their_command():
    data = load_reference()
    assert {"measured", "command", "seed", "decks"} <= set(data)
    assert data["command"].startswith("python -m agents.bench.calibrate")
    for n in TABLE_SIZES:
        ratings = data["ratings"][str(n)]
        assert set(ratings) == set(REFERENCE_FIELD)
        assert ratings["heuristic"] == 1000.0
        # random is the weakest reference bot at every size the file was measured at
        assert min(ratings, key=ratings.get) == "random"

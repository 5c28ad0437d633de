"""What the page is sent about a table (``agents.ui.web.views``), word for word: cards,
suits, move labels, seat and full-table positions, and a finished deal's result, against
values written out here and the independent reference rules' points."""

from __future__ import annotations

import numpy as np
import pytest

from agents.ui.web.views import card, cards_of, move_label, position, result, suit
from pis_env.cards import card_name
from pis_env.engine import DRAW, NOMINATE_BASE, PASS, GameState
from pis_env.rules import Rules
from tests.pis_env.reference_rules import hand_points

ACE_OF_DIAMONDS = {"id": 25, "name": "AD", "label": "A\u2666", "rank": "A", "suit": 1,
                   "symbol": "\u2666", "color": "red"}
SEVEN_OF_CLUBS = {"id": 5, "name": "7C", "label": "7\u2663", "rank": "7", "suit": 0,
                  "symbol": "\u2663", "color": "black"}
SUITS = [{"id": 0, "symbol": "\u2663", "name": "clubs", "color": "black"},
         {"id": 1, "symbol": "\u2666", "name": "diamonds", "color": "red"},
         {"id": 2, "symbol": "\u2665", "name": "hearts", "color": "red"},
         {"id": 3, "symbol": "\u2660", "name": "spades", "color": "black"}]


def test_cards_and_suits_are_named_and_coloured():
    assert card(25) == ACE_OF_DIAMONDS and card(5) == SEVEN_OF_CLUBS
    assert card(50) == {"id": 50, "name": "KS", "label": "K\u2660", "rank": "K",
                        "suit": 3, "symbol": "\u2660", "color": "black"}
    assert card(34)["color"] == "red" and card(34)["rank"] == "10"  # 10 of hearts
    assert [suit(s) for s in range(4)] == SUITS


def test_a_hands_cards_are_its_52_bits_in_order():
    assert cards_of(0) == []
    assert cards_of(1 << 51 | 1 << 13 | 1) == [0, 13, 51]
    assert cards_of(1 << 52 | 1 << 3) == [3]  # a bit past the deck is no card


def table(**change) -> GameState:
    """Two seats, a chain of three 7s on the pile, player_1 to answer it."""
    fields = dict(hands=[1 << 0 | 1 << 14, 1 << 25 | 1 << 51], stock=[10, 20, 30],
                  pile=[40, 18, 31, 5], top=5, active_suit=0, pending_sevens=3, phase=1,
                  has_drawn=False, direction=-1, current=1, dealer=0, opened=1,
                  drew_on=[-1, -1], turns=7, deal_index=1, totals=[3, 0])
    fields.update(change)
    rules = fields.pop("rules", Rules(num_players=2, num_deals=2, seven_penalty="double"))
    return GameState.from_position(rules, **fields)


def test_move_labels_say_what_each_move_does():
    game = table()
    assert move_label(25, game) == "A\u2666"
    assert [move_label(NOMINATE_BASE + s, game) for s in range(4)] == [
        "name \u2663 clubs", "name \u2666 diamonds", "name \u2665 hearts", "name \u2660 spades"]
    assert move_label(DRAW, game) == "take the penalty: draw 12 cards"  # doubling
    added = table(rules=Rules(num_players=2, seven_penalty="add"), deal_index=0)
    assert move_label(DRAW, added) == "take the penalty: draw 9 cards"
    assert move_label(DRAW, table(pending_sevens=0)) == "draw a card"
    # a chain left on the table while the suit is named is no penalty to draw
    assert move_label(DRAW, table(phase=2)) == "draw a card"
    assert move_label(PASS, game) == "pass"
    with pytest.raises(ValueError) as err:
        move_label(58, game)
    assert str(err.value) == "action 58 is not in 0..57"


def test_a_seat_sees_its_own_hand_and_public_counts_only():
    game = table()
    view = position(game, 0, ["ann", "bob"])
    assert view == {
        "seat": 0, "names": ["ann", "bob"], "num_players": 2, "deal": 1, "num_deals": 2,
        "dealer": 0, "turn": 1, "phase": "play", "has_drawn": False, "top": SEVEN_OF_CLUBS,
        "active_suit": SUITS[0], "pending_sevens": 3, "penalty_cards": 12,
        "hand_sizes": [2, 2], "stock_size": 3, "discard_size": 4,
        "direction": "anticlockwise", "totals": [3, 0], "deal_over": False,
        "hands": [[card(0), card(14)], None]}
    other = position(table(direction=1, has_drawn=True, top=0, active_suit=2,
                           pending_sevens=0, phase=3, current=0), 1, ["ann", "bob"])
    assert other["hands"] == [None, [card(25), card(51)]]
    assert (other["direction"], other["has_drawn"], other["top"], other["active_suit"],
            other["penalty_cards"], other["phase"], other["turn"]) == (
        "clockwise", True, card(0), SUITS[2], 0, "ace", 0)
    assert "stock" not in view and "result" not in view


def test_the_full_table_shows_every_hand_and_the_stock_next_card_first():
    view = position(table(), None, ["ann", "bob"])
    assert view["seat"] is None
    assert view["hands"] == [[card(0), card(14)], [card(25), card(51)]]
    assert view["stock"] == [card(30), card(20), card(10)]
    assert position(table(top=-1), None, ["a", "b"])["top"] is None


def finished(seed: int, reason: str) -> GameState:
    for s in range(seed, seed + 200):
        rng = np.random.default_rng(s)
        game = GameState(Rules(num_players=2, num_deals=2), seed=s)
        while not game.deal_over:
            game.apply(int(rng.choice(game.legal_actions())))
        if game.end_reason == reason:
            return game
    raise AssertionError(f"no deal ended by {reason}")


def test_a_finished_deal_shows_every_hand_and_its_result():
    game = finished(0, "going_out")
    names = ["ann", "bob"]
    view = position(game, 1, names)
    assert view["deal_over"] is True and view["turn"] is None
    assert all(h is not None for h in view["hands"])
    last = game.history[-1][1]
    winner = names[game.winners.index(True)]
    out = view["result"]
    assert set(out) == {"reason", "text", "charges", "winners", "points", "totals",
                        "match_over"}
    assert out["reason"] == "going_out"
    assert out["text"].startswith(f"{winner} went out on {card_name(last, unicode=True)}")
    assert out["charges"] == list(game.charges) and out["totals"] == list(game.totals)
    assert out["winners"] == [bool(w) for w in game.winners] and True in out["winners"]
    assert out["points"] == [hand_points(cards_of(game.hands[i])) for i in range(2)]
    assert max(out["points"]) > 0
    assert out["match_over"] is False  # the first of two deals
    assert result(game, names) == out

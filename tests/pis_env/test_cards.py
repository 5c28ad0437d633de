"""Card ids, names, parsing and penalty points, of a card and of a hand (RULES.md, Cards
and ids, Going out and scoring)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pis_env import cards
from pis_env.cards import (
    CARD_POINTS,
    card_id,
    card_name,
    cards_of,
    mask_of,
    parse_card,
    points_of,
    rank_of,
    suit_of,
)
from pis_env.engine import GameState
from pis_env.rules import Rules
from tests.pis_env import reference_rules as ref


@pytest.mark.parametrize(
    "card, name",
    [(0, "2C"), (5, "7C"), (9, "JC"), (12, "AC"), (13, "2D"), (34, "10H"), (48, "JS"),
     (51, "AS"), (25, "AD"), (8, "10C"), (47, "10S")],
)
def test_ids_and_names(card, name):
    assert card_name(card) == name
    assert parse_card(name) == card


def test_id_is_13_suit_plus_rank():
    for suit, letter in enumerate("CDHS"):
        for rank, rank_name in enumerate(["2", "3", "4", "5", "6", "7", "8", "9", "10",
                                          "J", "Q", "K", "A"]):
            card = 13 * suit + rank
            assert card_id(rank, suit) == card
            assert suit_of(card) == suit and rank_of(card) == rank
            assert card_name(card) == rank_name + letter


def test_names_round_trip_and_are_ascii():
    names = [card_name(c) for c in range(52)]
    assert len(set(names)) == 52
    for c, name in enumerate(names):
        assert name.isascii()
        assert parse_card(name) == c
        assert parse_card(name.lower()) == c
        assert parse_card(card_name(c, unicode=True)) == c


def test_unicode_rendering():
    assert card_name(5, unicode=True) == "7♣"
    assert card_name(34, unicode=True) == "10♥"
    assert card_name(22, unicode=True) == "J♦"
    assert card_name(51, unicode=True) == "A♠"


@pytest.mark.parametrize(
    "text, card",
    [("7C", 5), ("7c", 5), ("10H", 34), ("10h", 34), ("TH", 34), ("th", 34), ("tH", 34),
     ("J♠", 48), ("j♠", 48), ("J♤", 48), ("a♦", 25), ("A♢", 25), ("q♥", 36), ("Q♡", 36),
     ("2♣", 0), ("2♧", 0), (" 7C ", 5), ("kd", 24)],
)
def test_parse_variants(text, card):
    assert parse_card(text) == card


def test_parse_ids():
    for c in range(52):
        assert parse_card(c) == c
    assert parse_card(np.int64(17)) == 17
    assert parse_card(np.int8(0)) == 0


@pytest.mark.parametrize(
    "bad",
    ["", "7", "C", "1C", "11H", "0C", "7X", "C7", "10", "JJ", "7CC", "1 0H", "T",
     "♣7", "seven of clubs", -1, 52, 100, True, False, None, 3.5, [5], b"7C"],
)
def test_parse_bad_raises_value_error(bad):
    if isinstance(bad, str):
        message = rf"not a card name: {re.escape(repr(bad))} \(expected e\.g\. '7C'"
    elif isinstance(bad, int) and not isinstance(bad, bool):
        message = rf"card id must be in 0\.\.51, got {bad}$"
    else:
        message = rf"not a card: {re.escape(repr(bad))} \(a {type(bad).__name__}"
    with pytest.raises(ValueError, match=message):
        parse_card(bad)


@pytest.mark.parametrize("bad", [-1, 52, 1000])
def test_card_name_out_of_range(bad):
    with pytest.raises(ValueError, match=rf"card id must be in 0\.\.51, got {bad}$"):
        card_name(bad)


@pytest.mark.parametrize(
    "name, points",
    [("JC", 25), ("JH", 25), ("7D", 20), ("7S", 20), ("AC", 15), ("KH", 10), ("QS", 10),
     ("2D", 2), ("3C", 3), ("4H", 4), ("5S", 5), ("6D", 6), ("8C", 8), ("9H", 9),
     ("10S", 10)],
)
def test_points(name, points):
    card = parse_card(name)
    assert CARD_POINTS[card] == points
    assert points_of(1 << card) == points
    assert ref.card_points(card) == points


def test_points_of_hands():
    assert points_of(0) == 0
    assert points_of(cards.FULL_DECK) == 4 * (2 + 3 + 4 + 5 + 6 + 20 + 8 + 9 + 10 + 25 + 10
                                              + 10 + 15) == 508
    hand = mask_of(parse_card(n) for n in ["7C", "JD", "AS", "2H"])
    assert points_of(hand) == 20 + 25 + 15 + 2
    for c in range(52):
        assert CARD_POINTS[c] == ref.card_points(c)


def test_masks():
    picked = [0, 5, 9, 12, 34, 51]
    mask = mask_of(picked)
    assert cards_of(mask) == picked
    assert cards_of(0) == []
    assert cards_of(cards.FULL_DECK) == list(range(52))
    for s in range(4):
        assert cards_of(cards.SUIT_MASKS[s]) == list(range(13 * s, 13 * s + 13))
    for r in range(13):
        assert cards_of(cards.RANK_MASKS[r]) == [r, r + 13, r + 26, r + 39]
    assert cards_of(cards.JACKS) == [9, 22, 35, 48]
    assert cards_of(cards.SEVENS) == [5, 18, 31, 44]


@pytest.mark.parametrize("bad, kind", [(3.0, "a float"), (None, "a NoneType"), (True, "a bool"),
                                       ([5], "a list")])
def test_parse_error_says_what_is_wrong_with_the_card(bad, kind):
    with pytest.raises(ValueError, match=rf"not a card: .*\({kind}; a card is an int id 0\.\.51"):
        parse_card(bad)


def test_hand_points_are_the_points_of_each_players_cards():
    deck = [parse_card(c) for c in ("AC", "KD", "10H", "2S", "7C", "8D", "JH", "QS")]
    deck += [c for c in range(52) if c not in deck]
    state = GameState(Rules(num_players=2), deck=deck, dealer=1)
    # dealt one at a time from the dealer's left: seat 0 gets AC, 10H, 7C, JH, ...
    hands = [sorted(card_name(c) for c in range(52) if state.hands[p] >> c & 1)
             for p in range(2)]
    points = {"J": 25, "7": 20, "A": 15, "K": 10, "Q": 10}  # RULES.md; the rest face value
    want = [sum(points.get(name[:-1]) or int(name[:-1]) for name in hand) for hand in hands]
    assert [state.hand_points(p) for p in range(2)] == want
    assert want[0] != want[1]

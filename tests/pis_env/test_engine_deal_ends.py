"""Hand-built ends of deals (``GameState.from_position``), each checked on the state a
player then sees: the active suit after going out (a Jack names none, any other card sets
its own) and a draw that empties the stock (the deal ends there, and neither the drawer
nor the turn moves on). The positions are written from the rules (RULES.md), not from
another engine run."""

from __future__ import annotations

from pis_env.cards import JACK
from pis_env.engine import DRAW, EMPTY_STOCK, GOING_OUT, PLAY, GameState
from pis_env.rules import Rules

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


def card(suit: int, rank: int) -> int:
    return 13 * suit + rank


def bits(*cards: int) -> int:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


def position(rules: Rules, hands, stock, top, active_suit, phase=PLAY, opened=0b11,
             current=0, pending_sevens=0):
    return GameState.from_position(
        rules, hands=hands, stock=stock, pile=[top], top=top, active_suit=active_suit,
        pending_sevens=pending_sevens, phase=phase, has_drawn=False, direction=1,
        current=current, dealer=1, opened=opened, drew_on=[0, 0], turns=10, deal_index=0,
        totals=[0, 0])


def test_going_out_sets_the_suit_of_its_card_and_a_jack_names_none():
    rules = Rules(num_players=2)
    top = card(CLUBS, 3)
    other = bits(card(SPADES, 4), card(HEARTS, 11))
    # by rank onto the top card: the last card's suit becomes the active suit
    state = position(rules, [bits(card(DIAMONDS, 3)), other],
                     [card(HEARTS, 2), card(SPADES, 5)], top, CLUBS)
    state.apply(card(DIAMONDS, 3))
    assert (state.deal_over, state.end_reason, state.active_suit) == (True, GOING_OUT,
                                                                     DIAMONDS)
    # a Jack as the last card: the deal ends on it, and the suit stays the one it met
    state = position(rules, [bits(card(DIAMONDS, JACK)), other],
                     [card(HEARTS, 2), card(SPADES, 5)], top, CLUBS)
    state.apply(card(DIAMONDS, JACK))
    assert (state.deal_over, state.end_reason, state.active_suit) == (True, GOING_OUT, CLUBS)


def test_a_draw_that_empties_the_stock_ends_the_deal_where_it_is():
    rules = Rules(num_players=2, empty_stock="end_deal")
    top = card(CLUBS, 3)
    hands = [bits(card(HEARTS, 4)), bits(card(SPADES, 4), card(SPADES, 6))]
    state = position(rules, hands, [card(DIAMONDS, 9)], top, CLUBS)
    assert state.legal_mask() >> DRAW & 1
    state.apply(DRAW)
    assert (state.deal_over, state.end_reason) == (True, EMPTY_STOCK)
    assert state.stock == [] and state.hands[0] == bits(card(HEARTS, 4), card(DIAMONDS, 9))
    assert state.has_drawn is False and state.current == 0
    assert state.legal_mask() == 0
    # a seven's penalty that empties it: the same, and the next seat does not move up
    penalised = position(rules, hands, [card(DIAMONDS, 9), card(DIAMONDS, 10)],
                         card(CLUBS, 5), CLUBS, pending_sevens=1)
    penalised.apply(DRAW)
    assert (penalised.deal_over, penalised.end_reason) == (True, EMPTY_STOCK)
    assert penalised.current == 0 and penalised.has_drawn is False


"""Hand-built positions (``GameState.from_position``), each checked on the state a player
then sees: the active suit after going out (a Jack names none, any other card sets its
own), a draw that empties the stock (the deal ends there, and neither the drawer nor the
turn moves on), and the suits a player drew on since it last played them (the
observation's ``drew_on_suit``). The positions are written from the rules (RULES.md) and
the observation's documentation, not from another engine run."""

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
             current=0, pending_sevens=0, drew_on=(0, 0)):
    return GameState.from_position(
        rules, hands=hands, stock=stock, pile=[top], top=top, active_suit=active_suit,
        pending_sevens=pending_sevens, phase=phase, has_drawn=False, direction=1,
        current=current, dealer=1, opened=opened, drew_on=list(drew_on), turns=10, deal_index=0,
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



def test_the_suits_drawn_on_add_up_until_the_player_plays_them():
    rules = Rules(num_players=2)
    fresh = GameState(rules, seed=3)
    assert fresh.drew_on == [0, 0]  # a deal starts with nobody having drawn
    hearts, spades = 1 << HEARTS, 1 << SPADES
    other = bits(card(CLUBS, 4), card(CLUBS, 6))
    # no spade, no 3, no Jack: the draw is on spades, and the hearts drawn on earlier stay
    state = position(rules, [bits(card(HEARTS, 4)), other], [card(DIAMONDS, 9)],
                     card(SPADES, 2), SPADES, drew_on=(hearts, 0))
    state.apply(DRAW)
    assert state.drew_on == [hearts | spades, 0]
    # playing a spade clears spades only
    state = position(rules, [bits(card(SPADES, 4), card(DIAMONDS, 6)), other],
                     [card(DIAMONDS, 9)], card(SPADES, 2), SPADES, drew_on=(hearts | spades, 0))
    state.apply(card(SPADES, 4))
    assert state.drew_on == [hearts, 0]


def test_a_state_assembled_without_a_record_of_chance_still_reshuffles():
    """Code outside the engine may build a state field by field, with neither a record of
    reshuffles nor scripted ones: when its stock runs dry the pile under the top card is
    shuffled from its own generator."""
    import numpy as np

    rules = Rules(num_players=2, empty_stock="reshuffle")
    state = GameState.from_position(
        rules, hands=[bits(card(HEARTS, 4)), bits(card(CLUBS, 4), card(CLUBS, 6))],
        stock=[card(DIAMONDS, 9)], pile=[card(SPADES, 7), card(SPADES, 1), card(SPADES, 2)],
        top=card(SPADES, 2), active_suit=SPADES, pending_sevens=0, phase=PLAY,
        has_drawn=False, direction=1, current=0, dealer=1, opened=0b11, drew_on=[0, 0],
        turns=10, deal_index=0, totals=[0, 0], rng=np.random.default_rng(0))
    del state._scripted
    state.apply(DRAW)
    assert not state.deal_over
    assert sorted(state.stock) == [card(SPADES, 1), card(SPADES, 7)]
    assert state.pile == [card(SPADES, 2)]

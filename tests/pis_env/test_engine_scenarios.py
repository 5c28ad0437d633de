"""Scripted deals on stacked decks: one or more tests for every rule, every
variant value and every engine decision listed in RULES.md.

``table(hands, stock, ...)`` builds the deck: ``hands[i]`` is player i's hand (missing
cards are filled with low cards nobody asked for), ``stock`` the first cards drawn, in
order. The dealer defaults to the last seat, so ``player_0`` opens.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from pis_env.cards import parse_card, points_of
from pis_env.engine import GameState, IllegalActionError
from pis_env.rules import Rules
from tests.conftest import stacked_deck
from tests.pis_env import reference_rules as ref
from tests.pis_env.test_engine_properties import snapshot  # noqa: E402

DRAW, PASS = 56, 57
SUITS = "CDHS"

def ids(*names) -> set[int]:
    """Action ids from names: ``"7C"``, ``"draw"``, ``"pass"``, ``"=H"`` (nominate)."""
    out = set()
    for name in names:
        out.add(action_id(name))
    return out


def action_id(name) -> int:
    if isinstance(name, int):
        return name
    if name == "draw":
        return DRAW
    if name == "pass":
        return PASS
    if name.startswith("="):
        return 52 + SUITS.index(name[1])
    return parse_card(name)


def table(hands, stock=(), dealer=None, **options) -> GameState:
    deck, dealer = stacked_deck(hands, stock, dealer)
    return GameState(Rules(num_players=len(hands), **options), deck=deck, dealer=dealer)


def play(state: GameState, *moves) -> GameState:
    """Apply moves in order, each checked against the reference legal set first."""
    for move in moves:
        action = action_id(move)
        assert action in ref.legal_actions(state), (move, sorted(ref.legal_actions(state)))
        assert set(state.legal_actions()) == ref.legal_actions(state)
        state.apply(action)
        assert state.card_count() == 52
    return state


def legal(state: GameState) -> set[int]:
    got = set(state.legal_actions())
    assert got == ref.legal_actions(state)
    return got


def hand(state: GameState, player: int) -> set[int]:
    return set(ref.hand_cards(state.hands[player]))


def names(*cards) -> set[int]:
    return {parse_card(c) for c in cards}


# ---------------------------------------------------------------------- the deal
def test_stacked_deal_order():
    deck = list(range(52))
    for dealer in range(3):
        state = GameState(Rules(num_players=3), deck=deck, dealer=dealer)
        for k in range(21):
            assert (state.hands[(dealer + 1 + k) % 3] >> deck[k]) & 1
        assert state.stock[-1] == deck[21]
        assert state.stock[::-1] == deck[21:]
        assert state.current == (dealer + 1) % 3 and state.dealer == dealer
        assert [h.bit_count() for h in state.hands] == [7, 7, 7]
        assert state.top == -1 and state.pile == [] and state.active_suit == 0
        assert state.phase == 0 and state.direction == 1 and state.pending_sevens == 0


def test_deck_accepts_names():
    deck = [f"{r}{s}" for s in "CDHS" for r in
            ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")]
    assert GameState(deck=deck, dealer=0).deal_decks[0] == list(range(52))


@pytest.mark.parametrize("n", range(2, 8))
def test_stock_size_and_first_draw(n):
    state = GameState(Rules(num_players=n), seed=n)
    assert len(state.stock) == 52 - 7 * n
    assert state.card_count() == 52


# ---------------------------------------------------------------------- opening
def test_opener_must_play_a_club():
    state = table([["5C", "KC", "5D", "9H", "JD", "7S", "AH"], []])
    assert state.current == 0 and state.phase == 0
    assert legal(state) == names("5C", "KC")  # no draw, no Jack, no pass while holding a club
    play(state, "KC")
    assert state.current == 1 and state.phase == 1 and state.top == parse_card("KC")
    assert state.active_suit == 0 and not state.has_drawn


@pytest.mark.parametrize("draw_rule", ["free", "one", "until_playable"])
def test_opener_without_club_draws_until_one(draw_rule):
    state = table([["5D", "9H", "JD", "7S", "AH", "KH", "2S"], []],
                  stock=["3D", "4H", "6C", "8C"], draw_rule=draw_rule)
    assert legal(state) == {DRAW}
    play(state, "draw")
    assert hand(state, 0) >= names("3D") and state.current == 0
    assert legal(state) == {DRAW}  # no pass, whatever the draw rule
    play(state, "draw")
    assert legal(state) == {DRAW}
    play(state, "draw")
    assert legal(state) == names("6C")
    with pytest.raises(IllegalActionError):
        state.apply(DRAW)
    play(state, "6C")
    assert state.current == 1 and state.phase == 1 and len(state.stock) == 52 - 14 - 3


def test_opener_is_left_of_dealer():
    hands = [[c] for c in ("2C", "3C", "4C", "5C")]
    for dealer in range(4):
        state = table(hands, dealer=dealer)
        assert state.current == (dealer + 1) % 4


def test_opening_jack_nominates_nothing():
    state = table([["JC"], ["JD", "3C", "3D", "9H"]])
    play(state, "JC")
    assert state.phase == 1 and state.current == 1 and state.active_suit == 0
    # The next player follows clubs and may not put a Jack on the Jack.
    assert legal(state) == names("3C") | {DRAW}


def test_opening_seven_charges_nothing():
    state = table([["7C"], ["7D", "3C", "9H", "JS"]])
    play(state, "7C")
    assert state.pending_sevens == 0 and state.current == 1
    assert legal(state) == names("7D", "3C", "JS") | {DRAW}  # a normal turn


def test_opening_eight_skips_nobody():
    state = table([["8C"], ["3D"], ["4D"]])
    play(state, "8C")
    assert state.current == 1


def test_opening_ten_reverses_nothing():
    state = table([["10C"], ["3C"], ["4D"]])
    play(state, "10C")
    assert state.direction == 1 and state.current == 1
    play(state, "3C")
    assert state.current == 2


def test_opening_ace_gives_no_extra_play():
    state = table([["AC", "3C"], ["4D"]])
    play(state, "AC")
    assert state.phase == 1 and state.current == 1


# ---------------------------------------------------------------------- legal plays
def test_match_rank_or_suit_or_any_jack():
    state = table([["6C"], ["6D", "2C", "JH", "JS", "9H", "KD", "QS"]])
    play(state, "6C")
    assert legal(state) == names("6D", "2C", "JH", "JS") | {DRAW}
    with pytest.raises(IllegalActionError):
        state.apply(parse_card("9H"))


def test_pass_illegal_before_a_draw():
    state = table([["6C"], ["6D", "2H", "4H", "5H", "3H", "9H", "QH"]], stock=["9S", "10S"])
    play(state, "6C")
    assert PASS not in legal(state)
    with pytest.raises(IllegalActionError):
        state.apply(PASS)
    play(state, "draw")
    assert legal(state) == names("6D") | {DRAW, PASS}
    play(state, "draw", "pass")
    assert state.current == 0 and not state.has_drawn
    assert hand(state, 1) >= names("9S", "10S")


def test_jack_on_jack_refused():
    state = table([["5C", "JH", "JS", "4H", "KD"], ["JD", "JC", "9S"]])
    play(state, "5C", "JD", "=H")
    assert state.current == 0 and state.active_suit == 2
    assert legal(state) == names("4H") | {DRAW}
    for jack in ("JH", "JS"):
        with pytest.raises(IllegalActionError):
            state.apply(parse_card(jack))


def test_nomination():
    state = table([["5C", "4H", "4D", "QD", "JS", "9S", "KS"], ["JD", "9H", "9D"]])
    play(state, "5C", "JD")
    # The same player nominates; the top is the Jack, the old suit still active.
    assert state.phase == 2 and state.current == 1
    assert state.top == parse_card("JD") and state.active_suit == 0
    assert legal(state) == {52, 53, 54, 55}
    with pytest.raises(IllegalActionError):
        state.apply(DRAW)
    play(state, "=D")  # the Jack's own suit is allowed
    assert state.phase == 1 and state.current == 0 and state.active_suit == 1
    assert legal(state) == names("4D", "QD") | {DRAW}


@pytest.mark.parametrize("before", ["5C", "5H"])
def test_nominate_other(before):
    first = "5C"
    state = table([[first, "5H", "KH"], ["JD", "9S", "9D", "JH"]], nominate="other")
    play(state, first)
    if before == "5H":  # make hearts the active suit before the Jack
        play(state, "JH", "=H", "5H")
    active = state.active_suit
    play(state, "JD")
    assert state.active_suit == active
    assert legal(state) == {52 + s for s in range(4) if s != active}
    with pytest.raises(IllegalActionError):
        state.apply(52 + active)
    play(state, "=D")
    assert state.active_suit == 1


def test_nominate_any_allows_current_suit():
    state = table([["5C"], ["JD", "9S"]])
    play(state, "5C", "JD", "=C")
    assert state.active_suit == 0 and state.current == 0


# ---------------------------------------------------------------------- 8, 10
def test_eight_skip_two_players_plays_again():
    state = table([["2C"], ["8C", "3D", "8D"]], stock=["9S"])
    play(state, "2C", "draw")
    assert state.has_drawn
    play(state, "8C")
    assert state.current == 1 and state.phase == 1
    assert not state.has_drawn and PASS not in legal(state)  # a fresh turn
    play(state, "8D")
    assert state.current == 1
    play(state, "3D")
    assert state.current == 0


def test_eight_skip_four_players():
    state = table([["2C"], ["8C"], ["3C"], ["4C"]])
    play(state, "2C", "8C")
    assert state.current == 3
    play(state, "4C")
    assert state.current == 0


def test_eight_skip_anticlockwise():
    state = table([["2C", "8C"], ["10C"], ["3D"], ["4D"]])
    play(state, "2C", "10C")
    assert state.current == 0 and state.direction == -1
    play(state, "8C")  # skips player_3
    assert state.current == 2


def test_ten_reverse_two_players():
    state = table([["2C", "3C"], ["10C", "10D"]])
    play(state, "2C", "10C")
    assert state.direction == -1 and state.current == 0
    play(state, "3C")
    assert state.current == 1 and state.direction == -1


def test_ten_reverse_three_players():
    state = table([["2C", "3C"], ["10C", "4D"], ["10H", "5C", "9H"]])
    play(state, "2C", "10C")
    assert state.direction == -1 and state.current == 0
    play(state, "3C")
    assert state.current == 2
    play(state, "5C")
    assert state.current == 1
    state2 = table([["2C", "3C"], ["10C", "4D"], ["10H", "5C", "9H"]])
    play(state2, "2C", "10C", "3C", "draw")
    assert state2.current == 2


# ---------------------------------------------------------------------- sevens
SEVEN_TABLE = [["2C", "7D", "QD", "9H", "KH"], ["7C", "7H", "JS", "3D", "QS", "9C"]]
SEVEN_STOCK = ["2D", "3H", "4S", "5D", "6H", "9S", "10D", "QH", "KS", "2S", "3S", "4D",
               "5H"]


@pytest.mark.parametrize(
    "chain, rule, size",
    [(1, "add", 3), (2, "add", 6), (3, "add", 9), (1, "double", 3), (2, "double", 6),
     (3, "double", 12)],
)
def test_seven_chain_penalty_ends_turn(chain, rule, size):
    state = table(SEVEN_TABLE, stock=SEVEN_STOCK, seven_penalty=rule)
    play(state, "2C")
    sevens = ["7C", "7D", "7H"][:chain]
    for k, seven in enumerate(sevens):
        play(state, seven)
        assert state.pending_sevens == k + 1
    taker = state.current
    assert taker == (chain + 1) % 2
    held = hand(state, taker)
    # Only a seven or the penalty: no Jack, no suit or rank match.
    assert legal(state) == {c for c in held if c % 13 == 5} | {DRAW}
    assert ref.penalty_size(chain, rule) == size
    play(state, "draw")
    assert hand(state, taker) == held | names(*SEVEN_STOCK[:size])
    assert state.pending_sevens == 0
    assert state.current == 1 - taker and not state.has_drawn  # the turn ended
    # The next player plays on the seven normally.
    top = state.top
    assert top == parse_card(sevens[-1]) and state.active_suit == top // 13
    assert legal(state) == {c for c in hand(state, state.current)
                            if c % 13 in (5, 9) or c // 13 == top // 13} | {DRAW}


def test_seven_chain_three_players():
    state = table([["2C", "7C"], ["3C", "7D"], ["4C", "9H"]], stock=SEVEN_STOCK)
    play(state, "2C", "3C", "4C", "7C", "7D")
    assert state.current == 2 and state.pending_sevens == 2
    play(state, "draw")
    assert hand(state, 2) >= names(*SEVEN_STOCK[:6]) and state.current == 0


def test_four_sevens_doubling():
    state = table([["2C", "7D", "7S"], ["7C", "7H"]], stock=SEVEN_STOCK + ["6S", "8S", "9D"],
                  seven_penalty="double")
    play(state, "2C", "7C", "7D", "7H", "7S")
    assert state.pending_sevens == 4 and state.current == 1
    before = len(ref.hand_cards(state.hands[1]))
    play(state, "draw")
    assert state.hands[1].bit_count() == before + 24


@pytest.mark.parametrize("draw_rule", ["free", "one", "until_playable"])
def test_penalty_always_legal(draw_rule):
    state = table(SEVEN_TABLE, stock=SEVEN_STOCK, draw_rule=draw_rule)
    play(state, "2C", "7C")
    assert legal(state) == names("7D") | {DRAW}


@pytest.mark.parametrize("draw_rule, after", [
    ("free", {DRAW, PASS}), ("one", {PASS}), ("until_playable", set())])
def test_after_penalty_continue(draw_rule, after):
    state = table(SEVEN_TABLE, stock=["9D", "QC", "5S"] + SEVEN_STOCK[3:],
                  after_penalty="continue", draw_rule=draw_rule)
    play(state, "2C", "7C", "draw")
    assert state.current == 0 and state.phase == 1 and state.pending_sevens == 0
    assert state.has_drawn
    assert hand(state, 0) >= names("9D", "QC", "5S")
    # A normal turn on the 7C: clubs, sevens, Jacks; as if the player had drawn.
    assert legal(state) == names("QC", "7D") | after
    play(state, "QC")
    assert state.current == 1


def test_penalty_larger_than_stock_ends_deal():
    # Seven players: the stock is 3 cards; a chain of two sevens asks for 6.
    hands = [["2C"], ["7C"], ["7D"], ["9H", "10H", "3S", "5S", "QH", "KH", "AH"], [], [], []]
    state = table(hands, stock=["4H", "5H", "6H"])
    assert len(state.stock) == 3
    play(state, "2C", "7C", "7D", "draw")
    assert state.deal_over and state.end_reason == "empty_stock"
    assert hand(state, 3) == names("9H", "10H", "3S", "5S", "QH", "KH", "AH", "4H", "5H", "6H")
    assert state.stock == [] and state.card_count() == 52
    assert (state.charges, state.winners) == ref.empty_stock_result(state.hands)


def test_penalty_exactly_the_stock_ends_deal():
    hands = [["2C"], ["7C"], ["3D"], [], [], [], []]
    state = table(hands, stock=["4H", "5H", "6H"])
    play(state, "2C", "7C", "draw")
    assert state.deal_over and state.end_reason == "empty_stock"


# ---------------------------------------------------------------------- Ace
ACE_HANDS = [["2C", "9D", "3S", "4S", "5S", "QH", "KH"],
             ["AC", "AD", "3C", "JH", "8C", "5H", "9S"]]


def ace_state(**options):
    state = table(ACE_HANDS, stock=["10S", "6S"], **options)
    play(state, "2C", "AC")
    return state


def test_ace_extra_play_choices():
    state = ace_state()
    assert state.phase == 3 and state.current == 1 and state.active_suit == 0
    # Its suit, its rank, any Jack, or pass; no draw in the extra play.
    assert legal(state) == names("AD", "3C", "JH", "8C") | {PASS}
    with pytest.raises(IllegalActionError):
        state.apply(DRAW)


def test_ace_extra_play_after_a_draw_has_no_draw():
    state = table(ACE_HANDS, stock=["10S", "6S"])
    play(state, "2C", "draw", "AC")
    assert state.phase == 3 and DRAW not in legal(state)


def test_ace_extra_match():
    state = play(ace_state(), "3C")
    assert state.current == 0 and state.phase == 1 and state.top == parse_card("3C")


def test_ace_extra_another_ace():
    state = play(ace_state(), "AD")
    assert state.phase == 3 and state.current == 1 and state.active_suit == 1
    assert legal(state) == names("JH") | {PASS}
    play(state, "pass")
    assert state.current == 0 and state.phase == 1
    assert legal(state) == names("9D") | {DRAW}


def test_ace_extra_jack_nominates():
    state = play(ace_state(), "JH")
    assert state.phase == 2 and state.current == 1 and state.active_suit == 0
    play(state, "=S")
    assert state.current == 0 and state.active_suit == 3


def test_ace_extra_card_effect_applies():
    state = play(ace_state(), "8C")  # skip: with two players the Ace's owner again
    assert state.current == 1 and state.phase == 1


def test_ace_pass():
    state = play(ace_state(), "pass")
    assert state.current == 0 and state.phase == 1 and state.top == parse_card("AC")
    assert state.active_suit == 0


# ---------------------------------------------------------------------- going out
OUT_P0 = ["2C", "3D", "KH", "QS", "9S", "10D", "4H"]


@pytest.mark.parametrize("last, multiplier", [("7H", 3), ("JD", 2), ("AD", 1), ("5H", 1)])
def test_going_out(last, multiplier):
    state = table([OUT_P0, ["8C", "8D", "8H", "8S", "AS", "AH", last]])
    play(state, "2C", "8C", "8D", "8H", "8S", "AS", "AH")
    assert state.current == 1 and state.hands[1].bit_count() == 1
    play(state, last)
    assert state.deal_over and state.end_reason == "going_out"
    left = 3 + 10 + 10 + 9 + 10 + 4
    assert points_of(state.hands[0]) == left
    assert state.charges == [left * multiplier, 0]
    assert state.winners == [False, True]
    assert state.totals == state.charges and state.match_over
    # The last card's effect is not applied.
    assert state.pending_sevens == 0
    assert state.legal_actions() == []
    with pytest.raises(IllegalActionError):
        state.apply(DRAW)


def test_going_out_three_players_triples_every_charge():
    hands = [["2C", "3H", "4H"], ["AC", "AD", "AH", "AS", "JS", "9H", "7H"], ["2H", "6H"]]
    state = table(hands)
    play(state, "2C", "AC", "AD", "AH", "AS", "JS", "=H", "2H", "3H", "9H", "6H", "4H")
    assert state.current == 1 and state.hands[1].bit_count() == 1
    play(state, "7H")
    assert state.end_reason == "going_out" and state.pending_sevens == 0
    assert state.charges == [3 * points_of(state.hands[0]), 0, 3 * points_of(state.hands[2])]
    assert state.winners == [False, True, False]


# ---------------------------------------------------------------------- empty stock
def test_empty_stock_lowest_points_win_with_ties():
    hands = [["2C"], [], [], [],
             ["2D", "3D", "4D", "2H", "3H", "4H", "8H"],
             ["3C", "4C", "2S", "3S", "4S", "5H", "5S"], []]
    state = table(hands, stock=["QC", "KC", "AS"])
    points = [points_of(h) for h in state.hands]
    assert points[4] == points[5] == 26
    play(state, "2C", "draw", "pass", "draw", "pass")
    assert not state.deal_over and len(state.stock) == 1
    play(state, "draw")  # the draw that takes the last card ends the deal
    assert state.deal_over and state.end_reason == "empty_stock"
    assert state.winners == [i in (4, 5) for i in range(7)]
    final = [points_of(h) for h in state.hands]
    assert min(final) == 26
    assert state.charges == [0 if i in (4, 5) else final[i] for i in range(7)]
    assert state.charges[3] == final[3] > 26
    assert state.legal_actions() == []


def test_empty_stock_during_the_opening():
    no_clubs = ["2D", "3D", "4D", "5D", "6D", "9D", "QD"]
    state = table([no_clubs, [], [], [], [], [], []], stock=["KH", "QH", "AH"])
    play(state, "draw", "draw")
    assert not state.deal_over and legal(state) == {DRAW}
    play(state, "draw")
    assert state.deal_over and state.end_reason == "empty_stock" and state.pile == []
    assert (state.charges, state.winners) == ref.empty_stock_result(state.hands)


def test_empty_stock_two_players_draw_out():
    state = table([["2C"], []])
    play(state, "2C")
    while not state.deal_over:
        play(state, "draw")
        if not state.deal_over:
            play(state, "pass")
    assert state.end_reason == "empty_stock" and state.stock == []
    assert state.hands[0].bit_count() + state.hands[1].bit_count() == 51
    assert (state.charges, state.winners) == ref.empty_stock_result(state.hands)


# ---------------------------------------------------------------------- draw rules
DRAW_HANDS = [["6C", "9D", "2D", "3D", "4D", "5D", "QD"],
              ["6D", "2H", "4H", "5H", "3H", "9H", "QH"]]
DRAW_STOCK = ["9S", "10S", "3C", "KH", "QS"]


def test_draw_rule_free():
    state = table(DRAW_HANDS, stock=DRAW_STOCK)
    play(state, "6C")
    assert legal(state) == names("6D") | {DRAW}
    play(state, "draw", "draw")
    assert legal(state) == names("6D") | {DRAW, PASS}
    play(state, "draw")
    assert legal(state) == names("6D", "3C") | {DRAW, PASS}
    play(state, "3C")
    assert state.current == 0


def test_draw_rule_one():
    state = table(DRAW_HANDS, stock=DRAW_STOCK, draw_rule="one")
    play(state, "6C")
    assert legal(state) == names("6D") | {DRAW}
    play(state, "draw")
    assert legal(state) == names("6D") | {PASS}
    with pytest.raises(IllegalActionError):
        state.apply(DRAW)
    play(state, "pass")
    assert state.current == 0
    assert legal(state) == {DRAW}


def test_draw_rule_until_playable():
    state = table(DRAW_HANDS, stock=DRAW_STOCK, draw_rule="until_playable")
    play(state, "6C")
    assert legal(state) == names("6D")  # holding a playable card: no draw, no pass
    state = table([["6C", "9D", "2D", "3D", "4D", "KD", "QD"],
                   ["5D", "2H", "4H", "5H", "3H", "9H", "QH"]], stock=DRAW_STOCK,
                  draw_rule="until_playable")
    play(state, "6C")
    assert legal(state) == {DRAW}
    play(state, "draw")
    assert legal(state) == {DRAW}  # 9S does not fit: draw again, never pass
    play(state, "draw", "draw")
    assert legal(state) == names("3C")
    play(state, "3C")
    assert state.current == 0


def test_until_playable_never_passes():
    for seed in range(30):
        rng = random.Random(seed)
        state = GameState(Rules(draw_rule="until_playable", num_players=3), seed=seed)
        while not state.deal_over:
            actions = legal(state)
            assert PASS not in actions or state.phase == 3
            state.apply(rng.choice(sorted(actions)))


# ---------------------------------------------------------------------- first_round
def test_first_round_every_first_card_is_a_club():
    hands = [["8C", "8D", "JD"], ["3C", "8H", "7C", "QD"], ["9D", "AD", "KD"]]
    state = table(hands, stock=["5S", "10C", "6D"], opening="first_round")
    play(state, "8C")  # no skip
    assert state.current == 1 and state.phase == 0
    assert legal(state) == names("3C", "7C")  # 8H matches the rank, but a club is required
    play(state, "7C")  # no penalty
    assert state.current == 2 and state.pending_sevens == 0 and state.phase == 0
    assert legal(state) == {DRAW}  # no club: draw until one
    play(state, "draw")
    assert legal(state) == {DRAW}
    play(state, "draw", "10C")  # no reverse
    assert state.direction == 1 and state.current == 0
    # The first round is over: the opener's turn is a normal one with effects.
    assert state.phase == 1
    assert legal(state) == names("JD") | {DRAW}
    play(state, "JD")
    assert state.phase == 2


def test_first_round_jack_and_ace_have_no_effect():
    state = table([["2C", "4D"], ["JC", "5D"], ["AC", "6D"]], opening="first_round")
    play(state, "2C", "JC")
    assert state.phase == 0 and state.current == 2
    play(state, "AC")
    assert state.phase == 1 and state.current == 0


def test_opener_only_by_default():
    hands = [["8C", "8D"], ["3C", "8H", "7C"], ["9D"]]
    state = table(hands)
    play(state, "8C")
    assert state.phase == 1
    assert legal(state) == names("3C", "8H", "7C") | {DRAW}
    play(state, "8H")  # a normal card with effect: skips player_2
    assert state.current == 0


# ---------------------------------------------------------------------- reshuffle
def reshuffle_table(stock=("QH", "KH", "AH"), **options):
    hands = [["2C"], ["3C"], ["4C"], ["5C"], ["7C"], ["7D"], ["9H"]]
    return table(hands, stock=stock, empty_stock="reshuffle", **options)


def test_reshuffle_refills_stock():
    state = reshuffle_table()
    play(state, "2C", "3C", "4C", "draw", "pass", "draw", "pass")
    assert len(state.stock) == 1
    play(state, "draw")  # empties the stock: the pile but its top becomes the stock
    assert not state.deal_over
    assert state.pile == [parse_card("4C")]
    assert sorted(state.stock) == sorted(names("2C", "3C"))
    assert hand(state, 5) >= names("AH") and state.current == 5
    assert state.card_count() == 52


def test_reshuffle_during_penalty():
    state = reshuffle_table()
    play(state, "2C", "3C", "4C", "5C", "7C", "7D")
    assert state.current == 6 and state.pending_sevens == 2
    before = hand(state, 6)
    play(state, "draw")  # 6 cards: 3 from the stock, 3 from the reshuffled pile
    assert not state.deal_over and state.current == 0
    got = hand(state, 6) - before
    assert len(got) == 6 and got >= names("QH", "KH", "AH")
    assert got - names("QH", "KH", "AH") <= names("2C", "3C", "4C", "5C", "7C")
    assert state.pile == [parse_card("7D")] and len(state.stock) == 2
    assert state.card_count() == 52


def test_reshuffle_with_nothing_to_reshuffle_ends_deal():
    state = reshuffle_table()
    play(state, "2C", "draw", "pass", "draw", "pass", "draw")
    assert state.deal_over and state.end_reason == "empty_stock"
    assert (state.charges, state.winners) == ref.empty_stock_result(state.hands)


def test_reshuffle_default_max_turns_truncates():
    state = reshuffle_table()
    assert state.rules.max_turns == 1000
    state = reshuffle_table(max_turns=5)
    play(state, "2C", "3C", "4C", "draw")
    assert not state.deal_over
    play(state, "pass")
    assert state.deal_over and state.end_reason == "truncated"
    assert state.charges == [0] * 7 and state.winners == [False] * 7
    assert state.match_over and state.legal_actions() == []


def test_max_turns_without_reshuffle():
    state = table([["2C"], ["3C"]], max_turns=3)
    play(state, "2C", "3C")
    assert not state.deal_over
    play(state, "draw")
    assert state.end_reason == "truncated"


def test_reshuffle_is_seeded():
    deck, dealer = stacked_deck([["2C"], ["3C"], ["4C"], ["5C"], ["7C"], ["7D"], ["9H"]],
                                ["QH", "KH", "AH"])
    stocks = []
    for _ in range(2):
        state = GameState(Rules(num_players=7, empty_stock="reshuffle"), seed=5, deck=deck,
                          dealer=dealer)
        play(state, "2C", "3C", "4C", "5C", "7C", "7D", "draw")
        stocks.append(list(state.stock))
    assert stocks[0] == stocks[1]


# ---------------------------------------------------------------------- matches
def finish_deal(state: GameState, rng: random.Random) -> None:
    while not state.deal_over:
        state.apply(rng.choice(state.legal_actions()))


def test_four_deal_match():
    rules = Rules(num_players=3, num_deals=4)
    deck, _ = stacked_deck([["2C"], ["3C"], ["4C"]], dealer=1)
    state = GameState(rules, seed=11, deck=deck, dealer=1)
    assert state.deal_decks[0] == deck
    rng = random.Random(0)
    totals = [0, 0, 0]
    with pytest.raises(RuntimeError, match=r"next_deal\(\) is only valid after a deal"):
        state.next_deal()
    for k in range(4):
        assert state.deal_index == k and state.dealer == (1 + k) % 3
        assert state.current == (state.dealer + 1) % 3
        assert state.totals == totals and state.phase == 0 and state.direction == 1
        finish_deal(state, rng)
        assert state.end_reason in ("going_out", "empty_stock")
        totals = [t + c for t, c in zip(totals, state.charges)]
        assert state.totals == totals
        assert state.match_over == (k == 3)
        if k < 3:
            state.next_deal()
            assert state.card_count() == 52
    with pytest.raises(RuntimeError, match=r"next_deal\(\) is only valid after a deal"):
        state.next_deal()
    assert state.deal_dealers == [1, 2, 0, 1]
    assert len(state.histories) == 4


def test_match_with_a_deck_per_deal():
    decks = [stacked_deck([["2C"], ["3C"]], dealer=0)[0],
             stacked_deck([["4C"], ["5C"]], dealer=1)[0]]
    state = GameState(Rules(num_deals=2), seed=3, deck=decks, dealer=0)
    assert state.deal_decks[0] == decks[0]
    finish_deal(state, random.Random(1))
    state.next_deal()
    assert state.dealer == 1 and state.deal_decks[1] == decks[1]
    with pytest.raises(ValueError, match="got 4 decks for a match of 2 deals"):
        GameState(Rules(num_deals=2), deck=decks * 2)


def test_match_later_deals_from_seed():
    deck = stacked_deck([["2C"], ["3C"]])[0]
    later = []
    for _ in range(2):
        state = GameState(Rules(num_deals=3), seed=8, deck=deck, dealer=0)
        finish_deal(state, random.Random(2))
        state.next_deal()
        later.append(state.deal_decks[1])
    assert later[0] == later[1] and later[0] != deck


# ---------------------------------------------------------------------- illegal actions
def test_illegal_action_raises_names_legal_and_changes_nothing():
    state = table([["6C"], ["6D", "2C", "JH", "9H"]])
    play(state, "6C")
    before = snapshot(state)
    for bad in (parse_card("9H"), PASS, 52, 58, -1, 1000):
        with pytest.raises(IllegalActionError) as info:
            state.apply(bad)
        assert isinstance(info.value, ValueError)
        message = str(info.value)
        for a in state.legal_actions():
            assert str(a) in message
        assert snapshot(state) == before
    play(state, "6D")  # play goes on
    assert state.current == 0


def test_illegal_action_after_deal_over():
    state = table([["2C"], []], max_turns=1)
    play(state, "2C")
    assert state.deal_over
    with pytest.raises(IllegalActionError):
        state.apply(DRAW)


def test_numpy_action_accepted():
    state = table([["6C"], ["6D"]])
    state.apply(np.int64(parse_card("6C")))
    assert state.current == 1


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "deck",
    [list(range(51)), list(range(52)) + [0], list(range(51)) + [0], [0] * 52,
     ["XX"] + list(range(1, 52)), list(range(1, 53)), [], "2C3C"],
)
def test_bad_deck(deck):
    with pytest.raises(ValueError, match="deck"):
        GameState(deck=deck)


@pytest.mark.parametrize("dealer", [-1, 2, 7, 1.0, "0", True])
def test_bad_dealer(dealer):
    with pytest.raises(ValueError, match=rf"dealer must be a seat index 0\.\.1, got {dealer!r}"):
        GameState(dealer=dealer)


@pytest.mark.parametrize("n", [0, 1, 8, 10])
def test_bad_player_count(n):
    with pytest.raises(ValueError, match=rf"num_players={n}: allowed values are 2\.\.7"):
        GameState(Rules(num_players=n))


# ---------------------------------------------------------------------- seeding, clones
def test_same_seed_same_deal_whatever_global_state():
    random.seed(1)
    np.random.seed(1)
    a = GameState(Rules(num_players=4), seed=123)
    random.seed(2)
    np.random.seed(2)
    np.random.rand(100)
    random.random()
    b = GameState(Rules(num_players=4), seed=123)
    assert a.hands == b.hands and a.stock == b.stock and a.dealer == b.dealer
    c = GameState(Rules(num_players=4), seed=124)
    assert (c.hands, c.stock) != (a.hands, a.stock)


def test_same_seed_same_match():
    runs = []
    for _ in range(2):
        np.random.seed(None)
        state = GameState(Rules(num_deals=3, empty_stock="reshuffle"), seed=9)
        rng = random.Random(4)
        for _ in range(3):
            finish_deal(state, rng)
            if not state.match_over:
                state.next_deal()
        runs.append((state.deal_decks, state.histories, state.totals))
    assert runs[0] == runs[1]




def test_copy_is_independent():
    state = GameState(Rules(num_players=3, empty_stock="reshuffle"), seed=4)
    rng = random.Random(0)
    for _ in range(10):
        state.apply(rng.choice(state.legal_actions()))
    before = snapshot(state)
    clone = state.copy()
    assert snapshot(clone) == before
    finish_deal(clone, random.Random(1))
    assert snapshot(state) == before
    clone2 = state.copy()
    finish_deal(state, random.Random(1))
    assert snapshot(clone2) == before
    # The clone replays the same future (its RNG is a copy).
    assert clone.histories == state.histories and clone.charges == state.charges


def test_determinize():
    state = GameState(Rules(num_players=4), seed=21)
    rng = random.Random(3)
    for _ in range(15):
        state.apply(rng.choice(state.legal_actions()))
    before = snapshot(state)
    det = state.determinize(2, np.random.default_rng(0))
    assert snapshot(state) == before
    assert det.hands[2] == state.hands[2] and det.pile == state.pile
    assert det.hand_sizes() == state.hand_sizes() and len(det.stock) == len(state.stock)
    assert det.card_count() == 52
    union = 0
    for h in det.hands:
        assert union & h == 0
        union |= h
    for c in det.stock + det.pile:
        union |= 1 << c
    assert union == (1 << 52) - 1
    other = state.determinize(2, np.random.default_rng(1))
    assert (other.hands, other.stock) != (det.hands, det.stock)
    finish_deal(det, random.Random(0))
    assert snapshot(state) == before

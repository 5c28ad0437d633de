"""The engine's refusals read word for word: a deck with a card twice, an action id outside
the actions, an illegal action (named with every legal one, as every action has its name),
a forfeit after the deal and ``next_deal`` mid-deal or after the match.

Each test reads what a user or a bot sees (a message, a value), with the expected values
written out here, not recomputed through the engine."""

from __future__ import annotations

import pytest

from pis_env.cards import card_name
from pis_env.engine import NUM_ACTIONS, GameState, parse_deck
from pis_env.rules import Rules


def test_a_deck_with_a_card_twice_names_the_missing_and_the_duplicated_card():
    deck = list(range(52))
    deck[7] = 5  # 5 twice, 7 missing
    with pytest.raises(ValueError) as e:
        parse_deck(deck, "deck[1]")
    assert str(e.value) == ("deck[1] must hold each of the 52 cards exactly once: missing "
                            f"['{card_name(7)}'], duplicated ['{card_name(5)}']")
    deck[8] = 5  # 5 three times, 7 and 8 missing
    with pytest.raises(ValueError) as e:
        parse_deck(deck)
    assert str(e.value).endswith(f"missing ['{card_name(7)}', '{card_name(8)}'], "
                                 f"duplicated ['{card_name(5)}']")


def test_is_legal_refuses_every_id_outside_the_actions():
    state = GameState(Rules(), seed=0)
    legal = set(state.legal_actions())
    assert [a for a in range(-3, NUM_ACTIONS + 3) if state.is_legal(a)] == sorted(legal)
    state._legal = state.legal_mask() | (1 << NUM_ACTIONS)  # a stray bit past the last id
    assert not state.is_legal(NUM_ACTIONS)


def test_forfeit_after_the_deal_refuses_in_words():
    state = GameState(Rules(), seed=1)
    state.forfeit(0)
    with pytest.raises(RuntimeError) as e:
        state.forfeit(1)
    assert str(e.value) == "the deal is already over"


def test_every_action_has_its_name():
    names = {0: "2C", 51: "AS", 52: "nominate clubs", 55: "nominate spades", 56: "draw",
             57: "pass", 58: "<invalid action 58>", -1: "<invalid action -1>"}
    from pis_env.engine import action_name

    assert {a: action_name(a) for a in names} == names


def test_an_illegal_action_is_refused_naming_it_and_every_legal_one():
    from pis_env.engine import IllegalActionError, action_name

    state = GameState(Rules(num_players=2), seed=0)
    while len(state.legal_actions()) < 3:
        state.apply(state.legal_actions()[-1])
    legal = state.legal_actions()
    bad = next(a for a in range(58) if a not in legal)
    with pytest.raises(IllegalActionError) as e:
        state.apply(bad)
    assert str(e.value) == (
        f"action {bad} ({action_name(bad)}) is illegal for player_{state.current} in phase "
        f"{state.phase_name}; legal actions: "
        + ", ".join(f"{a} ({action_name(a)})" for a in legal))
    with pytest.raises(IllegalActionError) as e:
        state.apply(1.5)
    assert str(e.value).startswith("action 1.5 (?) is illegal for player_")


def test_next_deal_refuses_in_words_mid_deal_and_after_the_match():
    state = GameState(Rules(num_players=2, num_deals=2), seed=3)
    words = "next_deal() is only valid after a deal of an unfinished match"
    with pytest.raises(RuntimeError) as e:
        state.next_deal()  # mid-deal
    assert str(e.value) == words
    state.forfeit(0)  # a forfeit ends the match at once
    with pytest.raises(RuntimeError) as e:
        state.next_deal()
    assert str(e.value) == words

"""Scripted reshuffles: the order a script gives is the new stock, a missing or a wrong one
is refused naming the cards, and a determinized clone of a scripted deal reshuffles from
its own generator.

The expected values are written out here, not recomputed through the engine."""

from __future__ import annotations

import numpy as np
import pytest

from pis_env.cards import card_name
from pis_env.engine import ChanceError, GameState
from pis_env.rules import Rules


def _reshuffling_game():
    """A 2-player deal with reshuffles, played by a fixed random policy; returns
    (rules, deck, dealer, actions up to the first reshuffle, that reshuffle's order)."""
    rules = Rules(num_players=2, empty_stock="reshuffle", draw_rule="until_playable")
    for seed in range(200):
        rng = np.random.default_rng(seed)
        state = GameState(rules, rng=np.random.default_rng(seed))
        deck, dealer, actions = state.deal_decks[0], state.dealer, []
        while not state.deal_over:
            action = int(rng.choice(state.legal_actions()))
            state.apply(action)
            actions.append(action)
            if state.deal_reshuffles[0]:
                return rules, deck, dealer, actions, state.deal_reshuffles[0][0]
    raise AssertionError("no reshuffle in 200 deals")


def _replay(rules, deck, dealer, actions, reshuffles):
    state = GameState(rules, deck=deck, dealer=dealer, reshuffles=reshuffles)
    for action in actions:
        state.apply(action)
    return state


def test_a_scripted_reshuffle_is_the_new_stock_and_a_missing_one_is_refused():
    rules, deck, dealer, actions, order = _reshuffling_game()
    state = _replay(rules, deck, dealer, actions, [[order]])
    assert state.deal_reshuffles[0] == [order]
    for script in ([], [[]]):  # no deal's orders at all, or none for this deal
        with pytest.raises(ChanceError) as e:
            _replay(rules, deck, dealer, actions, script)
        assert str(e.value) == ("deal 0: the stock ran out and must be reshuffled "
                                "(reshuffle 1), but only 0 reshuffle order(s) were given "
                                "for this deal")


def test_a_reshuffle_of_other_cards_is_refused_naming_the_cards():
    rules, deck, dealer, actions, order = _reshuffling_game()
    with pytest.raises(ChanceError) as e:
        _replay(rules, deck, dealer, actions, [[order[:-1]]])
    names = [card_name(c) for c in sorted(order)]
    assert str(e.value) == (f"deal 0: reshuffle 1 must order the {len(order)} cards under "
                            f"the top of the pile, {names}; got {len(order) - 1} other cards")


def test_a_determinized_clone_of_a_scripted_deal_reshuffles_from_its_generator():
    """The clone's stock is not the one the script ordered, so it must not follow it."""
    rules, deck, dealer, actions, order = _reshuffling_game()
    state = _replay(rules, deck, dealer, actions[:-1], [[order]])
    clone = state.determinize(state.current, np.random.default_rng(4))
    clone.apply(actions[-1])  # the player to move keeps its hand: the same move is legal
    assert len(clone.deal_reshuffles[0]) == 1
    assert sorted(clone.deal_reshuffles[0][0]) == sorted(order)

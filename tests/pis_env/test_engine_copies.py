"""Copies of a game: the action log read and copied as a list would be, a copy's
generator, a copy of a later deal of a match, and determinized clones that draw from their
own generator.

Each test reads what a user or a bot sees of them (a value, a later position),
with the expected values written out here, not recomputed through the engine."""

from __future__ import annotations

import numpy as np
import pytest

from pis_env.engine import ActionLog, GameState
from pis_env.rules import Rules


def test_an_action_logs_last_entry_and_every_index_read_as_a_list_would():
    pairs = [(0, 3), (1, 52), (0, 17), (1, 53)]
    log = ActionLog(pairs)
    for i in range(-len(pairs), len(pairs)):
        assert log[i] == pairs[i]
    assert log[1:3] == pairs[1:3]
    copy = log.copy()
    copy.append((0, 9))
    assert copy[-1] == (0, 9) and log[-1] == (1, 53) and copy[-2] == (1, 53)
    with pytest.raises(IndexError):
        ActionLog()[-1]
    with pytest.raises(IndexError):
        log[4]


def test_a_copy_without_a_generator_draws_what_the_original_would():
    state = GameState(Rules(), seed=2)
    clone = state.copy()
    assert clone.rng is not state.rng
    assert clone.rng.integers(1 << 30, size=4).tolist() == \
        state.rng.integers(1 << 30, size=4).tolist()
    rng = np.random.default_rng(5)
    assert state.copy(rng).rng is rng


def test_a_determinized_clone_draws_from_its_generator_and_forgets_the_stacked_decks():
    decks = [list(range(52)), list(range(51, -1, -1))]
    state = GameState(Rules(num_players=2, num_deals=2), deck=decks, dealer=0,
                      reshuffles=[[], []])
    rng = np.random.default_rng(3)
    clone = state.determinize(0, rng)
    assert clone.rng is rng and clone._scripted is None
    while not clone.deal_over:
        clone.apply(clone.legal_actions()[0])
    clone.next_deal()  # the second deal is dealt from rng, not from the stacked deck
    assert clone.deal_decks[1] != decks[1]
    assert sorted(clone.deal_decks[1]) == list(range(52))
    assert clone.copy()._decks_left == []


def test_a_copy_of_a_later_deal_keeps_every_deals_log_and_its_own_result():
    state = GameState(Rules(num_players=2, num_deals=3), seed=4)
    rng = np.random.default_rng(4)
    while state.deal_index < 2 or not state.deal_over:
        if state.deal_over:
            state.next_deal()
        else:
            state.apply(int(rng.choice(state.legal_actions())))
    clone = state.copy()
    assert len(clone.histories) == 3 and clone.histories[:2] == state.histories[:2]
    assert clone.histories[-1] is clone.history and clone.history == state.history
    assert clone.charges == state.charges and clone.charges is not state.charges
    assert clone.winners == state.winners and clone.winners is not state.winners

"""The engine's small parts read word for word: deck checks, the action log, copies and
determinized clones, scripted reshuffles and their refusals.

Each test reads what a user or a bot sees of them (a message, a value, a later position),
with the expected values written out here, not recomputed through the engine."""

from __future__ import annotations

import numpy as np
import pytest

from pis_env.cards import card_name, parse_card
from pis_env.engine import NUM_ACTIONS, ActionLog, ChanceError, GameState, parse_deck
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


def test_is_legal_refuses_every_id_outside_the_actions():
    state = GameState(Rules(), seed=0)
    legal = set(state.legal_actions())
    assert [a for a in range(-3, NUM_ACTIONS + 3) if state.is_legal(a)] == sorted(legal)
    state._legal = state.legal_mask() | (1 << NUM_ACTIONS)  # a stray bit past the last id
    assert not state.is_legal(NUM_ACTIONS)


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


def test_forfeit_after_the_deal_refuses_in_words():
    state = GameState(Rules(), seed=1)
    state.forfeit(0)
    with pytest.raises(RuntimeError) as e:
        state.forfeit(1)
    assert str(e.value) == "the deal is already over"


def test_a_copy_without_a_generator_draws_what_the_original_would():
    state = GameState(Rules(), seed=2)
    clone = state.copy()
    assert clone.rng is not state.rng
    assert clone.rng.integers(1 << 30, size=4).tolist() == \
        state.rng.integers(1 << 30, size=4).tolist()
    rng = np.random.default_rng(5)
    assert state.copy(rng).rng is rng


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


def test_a_determinized_clone_of_a_scripted_deal_reshuffles_from_its_generator():
    """The clone's stock is not the one the script ordered, so it must not follow it."""
    rules, deck, dealer, actions, order = _reshuffling_game()
    state = _replay(rules, deck, dealer, actions[:-1], [[order]])
    clone = state.determinize(state.current, np.random.default_rng(4))
    clone.apply(actions[-1])  # the player to move keeps its hand: the same move is legal
    assert len(clone.deal_reshuffles[0]) == 1
    assert sorted(clone.deal_reshuffles[0][0]) == sorted(order)


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


def test_a_position_is_of_an_unfinished_match_unless_told():
    state = GameState(Rules(num_players=2), seed=5)
    rebuilt = GameState.from_position(
        state.rules, hands=state.hands, stock=state.stock, pile=state.pile, top=state.top,
        active_suit=state.active_suit, pending_sevens=state.pending_sevens,
        phase=state.phase, has_drawn=state.has_drawn, direction=state.direction,
        current=state.current, dealer=state.dealer, opened=state.opened,
        drew_on=state.drew_on, turns=state.turns, deal_index=state.deal_index,
        totals=state.totals)
    assert rebuilt.match_over is False and rebuilt.end_reason is None

"""``GameState.from_position``: a state rebuilt from a position's public fields is that
position, field for field, plays on exactly as the original does, and is of an unfinished
match unless told.

The batched engine's ``game_state`` and the bots' search states are built this way, so
a field it drops or mistypes would only show as a bot that plays a slightly wrong game.
The reference here is the engine's own state reached by play, never the batched engine.
"""

from __future__ import annotations

import numpy as np
import pytest

from pis_env.engine import ActionLog, GameState
from pis_env.rules import Rules

# What a position does not hold, and so starts empty in the rebuilt state.
NOT_IN_A_POSITION = {"history", "histories", "deal_decks", "deal_dealers", "deal_reshuffles",
                     "_scripted", "rng", "_legal", "_decks_left"}

VARIANTS = [
    dict(num_players=2),
    dict(num_players=3, draw_rule="until_playable", seven_penalty="double",
         after_penalty="continue", empty_stock="reshuffle", num_deals=2),
    dict(num_players=4, draw_rule="one", opening="first_round", nominate="other",
         max_turns=60, num_deals=3),
]


def position_of(state: GameState, rng=None, numpy: bool = False) -> GameState:
    """``from_position`` with every field the position keeps, read off ``state``;
    ``numpy``: as numpy scalars and arrays, the way the batched engine passes them."""
    num = (lambda v: np.int64(v)) if numpy else (lambda v: v)
    seq = (lambda v: None if v is None else np.asarray(v)) if numpy else (lambda v: v)
    return GameState.from_position(
        state.rules, hands=seq(state.hands), stock=seq(state.stock), pile=seq(state.pile),
        top=num(state.top), active_suit=num(state.active_suit),
        pending_sevens=num(state.pending_sevens), phase=num(state.phase),
        has_drawn=num(state.has_drawn), direction=num(state.direction),
        current=num(state.current), dealer=num(state.dealer), opened=num(state.opened),
        drew_on=seq(state.drew_on), turns=num(state.turns),
        deal_index=num(state.deal_index), totals=seq(state.totals),
        end_reason=state.end_reason, charges=seq(state.charges),
        winners=seq(state.winners),
        match_over=np.bool_(state.match_over) if numpy else state.match_over,
        decks_left=[seq(d) for d in state._decks_left], rng=rng)


def assert_same_position(rebuilt: GameState, state: GameState) -> None:
    for name in GameState.__slots__:
        if name in NOT_IN_A_POSITION:
            continue
        want, got = getattr(state, name), getattr(rebuilt, name)
        assert got == want, name
        assert type(got) is type(want), name
        if isinstance(want, list):
            assert got is not want, f"{name} is shared with the caller's list"
            assert all(type(g) is type(w) for g, w in zip(got, want)), name
    assert rebuilt._decks_left == state._decks_left
    assert all(type(d) is list for d in rebuilt._decks_left)
    assert rebuilt.legal_mask() == state.legal_mask()


def play_positions(options: dict, seed: int):
    """Every position of a seeded random match on stacked decks (so the deals to come
    are part of the position)."""
    rng = np.random.default_rng(seed)
    rules = Rules(**options)
    decks = [rng.permutation(52).tolist() for _ in range(rules.num_deals)]
    state = GameState(rules, deck=decks, rng=np.random.default_rng(seed + 1000))
    yield state
    while not state.match_over:
        if state.deal_over:
            state.next_deal()
        else:
            state.apply(int(rng.choice(state.legal_actions())))
        yield state


@pytest.mark.parametrize("numpy", [False, True], ids=["python", "numpy"])
@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: f"{o['num_players']}p")
def test_a_position_rebuilt_from_its_fields_is_the_same_position(options, numpy):
    positions = 0
    for seed in range(3):
        for state in play_positions(options, seed):
            assert_same_position(position_of(state, numpy=numpy), state)
            positions += 1
    assert positions > 150


def test_what_a_position_does_not_hold_starts_empty():
    state = next(s for s in play_positions(VARIANTS[1], 0) if s.turns > 10)
    state.legal_mask()  # a cached mask the rebuilt state must not inherit
    rng = np.random.default_rng(7)
    rebuilt = position_of(state, rng)
    assert rebuilt.rng is rng
    assert rebuilt._legal is None and rebuilt._scripted is None
    assert rebuilt.deal_decks == [] and rebuilt.deal_dealers == []
    assert not hasattr(rebuilt, "deal_reshuffles")
    assert isinstance(rebuilt.history, ActionLog) and len(rebuilt.history) == 0
    assert len(rebuilt.histories) == state.deal_index + 1
    assert rebuilt.histories[-1] is rebuilt.history
    assert all(isinstance(h, ActionLog) and len(h) == 0 for h in rebuilt.histories)
    assert rebuilt.pile_mask == sum(1 << c for c in state.pile)
    assert rebuilt.deal_over is (state.end_reason is not None)
    assert isinstance(position_of(state).rng, np.random.Generator)


@pytest.mark.parametrize("options", VARIANTS[1:], ids=lambda o: f"{o['num_players']}p")
def test_a_rebuilt_position_plays_on_as_the_original(options):
    """From a position a few turns in, both states take the same actions (and the same
    random numbers) to the end of the match: every later position is the same."""
    for seed in range(2):
        for state in play_positions(options, seed):
            if state.turns == 5 and not state.deal_over:
                break
        original = state.copy(np.random.default_rng(99))
        rebuilt = position_of(state, np.random.default_rng(99))
        rng = np.random.default_rng(seed)
        steps = 0
        while not original.match_over:
            assert_same_position(rebuilt, original)
            if original.deal_over:
                original.next_deal()
                rebuilt.next_deal()
            else:
                action = int(rng.choice(original.legal_actions()))
                original.apply(action)
                rebuilt.apply(action)
            steps += 1
        assert_same_position(rebuilt, original)
        assert rebuilt.totals == original.totals and steps > 20


def test_a_finished_deals_result_is_kept():
    state = next(s for s in play_positions(VARIANTS[1], 1) if s.deal_over)
    rebuilt = position_of(state)
    assert rebuilt.deal_over and rebuilt.end_reason == state.end_reason
    assert rebuilt.charges == state.charges and rebuilt.winners == state.winners
    assert rebuilt.charges is not state.charges and rebuilt.winners is not state.winners
    assert all(type(w) is bool for w in rebuilt.winners)
    assert rebuilt.legal_mask() == 0


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

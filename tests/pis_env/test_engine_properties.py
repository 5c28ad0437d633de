"""Property tests: random tables, variants and legal play against the reference rules.

Every step checks: 52 cards conserved, a non-empty legal set while the deal is live,
the engine's legal set equal to ``reference_rules.legal_actions``, the position after the
action equal to ``reference_rules.predict``, an illegal action raising and changing
nothing, every deal ending within a bound, and the charges recomputed independently.
"""

from __future__ import annotations

import copy
import random

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pis_env.engine import GameState, IllegalActionError
from pis_env.rules import CHOICES, Rules
from tests.pis_env import reference_rules as ref

#: Decisions a deal without reshuffling can last: draws (≤ 38) and plays (≤ 52) and one
#: nomination per play, one pass per draw or per Ace.
DEAL_BOUND = 2 * 38 + 3 * 52

RULE_KEYS = ("draw_rule", "seven_penalty", "after_penalty", "nominate", "opening",
             "empty_stock")

rules_strategy = st.builds(
    lambda n, choices, deals, max_turns: Rules(
        num_players=n, num_deals=deals,
        max_turns=max_turns if choices["empty_stock"] == "reshuffle" or max_turns
        and max_turns < 60 else None,
        **choices,
    ),
    st.integers(2, 7),
    st.fixed_dictionaries({k: st.sampled_from(CHOICES[k]) for k in RULE_KEYS}),
    st.integers(1, 3),
    st.one_of(st.none(), st.integers(20, 400)),
)


def snapshot(state: GameState) -> dict:
    """Every field of the state, deep-copied, the RNG as its bit-generator state."""
    snap = {}
    for name in GameState.__slots__:
        if name == "_legal":  # a cache of the legal set, filled on demand
            continue
        value = getattr(state, name)
        if isinstance(value, np.random.Generator):
            value = value.bit_generator.state
        snap[name] = copy.deepcopy(value)
    return snap


def check_final_charges(state: GameState) -> None:
    """The deal's charges and winners, recomputed from the hands and the last action."""
    n = state.num_players
    if state.end_reason == "going_out":
        player, card = state.history[-1]
        assert card < 52 and state.hands[player] == 0
        assert state.charges == ref.going_out_charges(state.hands, card)
        assert state.winners == [i == player for i in range(n)]
        mult = {ref.R_SEVEN: 3, ref.R_JACK: 2}.get(ref.rank(card), 1)
        assert state.charges == [ref.hand_points(h) * mult for h in state.hands]
    elif state.end_reason == "empty_stock":
        assert state.stock == [] or state.rules.empty_stock == "reshuffle"
        assert not state.stock
        assert (state.charges, state.winners) == ref.empty_stock_result(state.hands)
        assert min(ref.hand_points(h) for h, w in zip(state.hands, state.winners) if w) == min(
            ref.hand_points(h) for h in state.hands
        )
    else:
        assert state.end_reason == "truncated"
        assert state.charges == [0] * n and state.winners == [False] * n
        assert len(state.history) == state.rules.max_turns


def sensible_action(legal: set[int], rnd) -> int:
    plays = sorted(a for a in legal if a < 52)
    plain = [a for a in plays if a % 13 not in (ref.R_SEVEN, ref.R_JACK)]
    if plain or plays:
        return rnd.choice(plain or plays)
    if ref.PASS in legal:
        return ref.PASS
    return rnd.choice(sorted(legal))


def play_match(
    rules: Rules, seed: int, rnd, illegal_every: int = 7, play_bias: float = 0.0
) -> GameState:
    """Play a whole match with random legal actions, checking everything at every step.

    With probability ``play_bias`` a "sensible" action is taken instead: a card play when
    one is legal (Jacks and sevens kept for last), else a pass when one is legal. Pure
    random play draws so often that few deals end by going out on a Jack or a seven."""
    state = GameState(rules, seed=seed)
    totals = [0] * rules.num_players
    dealers = [state.dealer]
    step = 0
    while True:
        while not state.deal_over:
            assert state.card_count() == 52
            legal = set(state.legal_actions())
            assert legal, "no legal action in a live deal"
            assert legal == ref.legal_actions(state), (
                state.phase, state.top, state.active_suit, state.pending_sevens,
                state.has_drawn, legal ^ ref.legal_actions(state),
            )
            mask = state.legal_mask()
            assert all(((mask >> a) & 1) == (a in legal) for a in range(58))
            step += 1
            if step % illegal_every == 0:
                bad = rnd.choice([a for a in range(-1, 60) if a not in legal])
                before = snapshot(state)
                try:
                    state.apply(bad)
                except IllegalActionError:
                    pass
                else:
                    raise AssertionError(f"illegal action {bad} was accepted")
                assert snapshot(state) == before
            if rnd.random() < play_bias:
                action = sensible_action(legal, rnd)
            else:
                action = rnd.choice(sorted(legal))
            expected = ref.predict(state, action)
            state.apply(action)
            ref.check_prediction(expected, state)
            if rules.empty_stock == "end_deal" and not rules.max_turns:
                assert len(state.history) <= DEAL_BOUND
            if rules.max_turns:
                assert len(state.history) <= rules.max_turns
        assert state.card_count() == 52
        assert state.legal_actions() == [] and state.legal_mask() == 0
        check_final_charges(state)
        totals = [t + c for t, c in zip(totals, state.charges)]
        assert state.totals == totals
        if state.match_over:
            break
        state.next_deal()
        dealers.append(state.dealer)
        assert state.deal_index == len(dealers) - 1
    n = rules.num_players
    assert dealers == [(dealers[0] + k) % n for k in range(len(dealers))]
    assert state.match_over
    if state.end_reason != "truncated":
        assert state.deal_index == rules.num_deals - 1
    return state


@settings(max_examples=200, deadline=None)
@given(
    rules=rules_strategy,
    seed=st.integers(0, 2**32 - 1),
    play_seed=st.integers(0, 2**32 - 1),
    play_bias=st.sampled_from([0.0, 0.9]),
)
def test_random_play_matches_reference(rules, seed, play_seed, play_bias):
    state = play_match(rules, seed, random.Random(play_seed), play_bias=play_bias)
    event(f"last deal ended: {state.end_reason}")


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 7),
    seed=st.integers(0, 2**32 - 1),
    max_turns=st.integers(30, 250),
    play_seed=st.integers(0, 2**32 - 1),
)
def test_reshuffle_truncates_at_max_turns(n, seed, max_turns, play_seed):
    """A reshuffling deal either ends normally or is truncated at exactly max_turns."""
    rules = Rules(num_players=n, empty_stock="reshuffle", max_turns=max_turns)
    state = play_match(rules, seed, random.Random(play_seed), illegal_every=50)
    assert len(state.history) <= max_turns
    if state.end_reason == "truncated":
        assert len(state.history) == max_turns


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 7), seed=st.integers(0, 2**32 - 1), play_seed=st.integers(0, 2**32 - 1))
def test_draw_only_play_ends_on_empty_stock(n, seed, play_seed):
    rnd = random.Random(play_seed)
    """Drawing whenever allowed still ends the deal: the stock only shrinks."""
    state = GameState(Rules(num_players=n), seed=seed)
    while not state.deal_over:
        legal = state.legal_actions()
        action = 56 if 56 in legal else rnd.choice(legal)
        state.apply(action)
        assert state.card_count() == 52
        assert len(state.history) <= DEAL_BOUND
    check_final_charges(state)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), observer_pick=st.integers(0, 6),
       n=st.integers(2, 7), steps=st.integers(0, 60), play_seed=st.integers(0, 2**32 - 1))
def test_determinize_keeps_what_the_observer_sees(seed, observer_pick, n, steps, play_seed):
    rnd = random.Random(play_seed)
    state = GameState(Rules(num_players=n), seed=seed)
    for _ in range(steps):
        if state.deal_over:
            break
        state.apply(rnd.choice(state.legal_actions()))
    observer = observer_pick % n
    before = snapshot(state)
    det = state.determinize(observer, np.random.default_rng(seed))
    assert snapshot(state) == before
    assert det.card_count() == 52
    assert det.hands[observer] == state.hands[observer]
    assert det.pile == state.pile and det.top == state.top
    assert [h.bit_count() for h in det.hands] == [h.bit_count() for h in state.hands]
    assert len(det.stock) == len(state.stock)
    every = 0
    for h in det.hands:
        assert every & h == 0
        every |= h
    for c in det.stock + det.pile:
        assert not (every >> c) & 1
        every |= 1 << c
    assert every == (1 << 52) - 1
    if not state.deal_over:
        assert det.current == state.current and det.phase == state.phase
        assert set(det.legal_actions()) == ref.legal_actions(det)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 7), steps=st.integers(0, 60),
       offset=st.integers(1, 6), play_seed=st.integers(0, 2**32 - 1))
def test_determinize_after_a_cached_mask(seed, n, steps, offset, play_seed):
    """A position whose legal mask was already computed, determinized for a seat that is
    not the player to move: the clone's mask is that of its own (redealt) hand."""
    rnd = random.Random(play_seed)
    state = GameState(Rules(num_players=n), seed=seed)
    for _ in range(steps):
        if state.deal_over:
            break
        state.apply(rnd.choice(state.legal_actions()))
    if state.deal_over:
        return
    state.legal_mask()  # cached on the state, then copied by determinize
    observer = (state.current + 1 + offset % (n - 1)) % n
    assert observer != state.current
    det = state.determinize(observer, np.random.default_rng(seed))
    assert set(det.legal_actions()) == ref.legal_actions(det)

"""The belief over hidden cards (agents.belief.tracker): public information only, consistent
determinizations, sound hard voids."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agents import make
from agents.belief.tracker import (
    DealTracker,
    expected_correct,
    hint_belief,
    load_model,
    log_loss,
    sample_hidden,
    uniform_belief,
)
from pis_env import decode_observation, raw_env
from pis_env.cards import NUM_CARDS
from pis_env.engine import GameState
from pis_env.observation import ObservationEncoder
from pis_env.rules import Rules


def _observer_beliefs(deck, dealer, actions, n, observer=0):
    """Replay ``actions`` on a game dealt from ``deck``; at each decision of
    ``observer``: (observation vector, belief matrix, true opponent hands)."""
    state = GameState(Rules(num_players=n), deck=deck, dealer=dealer)
    enc = ObservationEncoder(n)
    tracker = DealTracker(n)
    model = load_model(n)
    out = []
    for action in actions:
        if state.current == observer:
            vec = enc.encode(state, observer)
            decoded = decode_observation(vec, n)
            tracker.observe(decoded)
            belief = model(decoded, tracker)
            hands = [state.hands[(observer + k) % n] for k in range(1, n)]
            out.append((vec, belief, hands))
            tracker.record(action)
        state.apply(action)
    return out


@pytest.mark.parametrize("n", [2, 4])
def test_belief_ignores_hidden_cards(n):
    """Two games that differ only in hidden cards (an opponent's card it never plays is
    swapped with a stock card nobody draws), with the same public history: the observer
    sees the same observations, and the belief gives exactly the same output."""
    rng = np.random.default_rng(n)
    checked = 0
    for _attempt in range(40):
        deck = rng.permutation(NUM_CARDS).tolist()
        state = GameState(Rules(num_players=n), deck=deck, dealer=n - 1)
        first_hand = list(state.hands)
        bots = [make("heuristic", num_players=n) for _ in range(n)]
        enc = ObservationEncoder(n)
        actions = []
        while not state.deal_over and len(actions) < 60:
            p = state.current
            mask = np.zeros(58, dtype=np.int8)
            mask[state.legal_actions()] = 1
            a = bots[p].act({"observation": enc.encode(state, p), "action_mask": mask})
            actions.append(a)
            state.apply(a)
        prefix = actions[:-1]  # the last move may end the deal and reveal the hands
        played = {a for a in prefix if a < NUM_CARDS}
        stock_left = state.stock
        if len(stock_left) < 2:
            continue
        hidden_stock = stock_left[0]  # drawn last: never drawn during the prefix
        opponent = 1
        kept = [c for c in range(NUM_CARDS) if (first_hand[opponent] >> c) & 1
                and c not in played and (state.hands[opponent] >> c) & 1]
        if not kept:
            continue
        swap = kept[0]
        deck_b = [hidden_stock if c == swap else swap if c == hidden_stock else c
                  for c in deck]
        a = _observer_beliefs(deck, n - 1, prefix, n)
        b = _observer_beliefs(deck_b, n - 1, prefix, n)
        assert len(a) == len(b) > 0
        differs = False
        for (va, ba, ha), (vb, bb, hb) in zip(a, b):
            np.testing.assert_array_equal(va, vb)      # the same public view
            np.testing.assert_array_equal(ba, bb)      # hence the same belief
            differs |= ha != hb
        assert differs, "the two games must differ in hidden cards"
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def _play_to(seed: int, n: int, stop: int):
    """Random play from a seeded deal; seat 0's tracker follows its observations. Stops
    at seat 0's ``stop``-th decision (or the last one before the deal ends)."""
    env = raw_env(num_players=n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    tracker = DealTracker(n)
    last = None
    seen = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        if agent == "player_0":
            decoded = decode_observation(obs["observation"], n)
            tracker.observe(decoded)
            last = (decoded, [int(h) for h in env.unwrapped.game.hands],
                    env.unwrapped.game.drew_on.copy())
            seen += 1
            if seen >= stop:
                break
            tracker.record(action)
        env.step(action)
    return last, tracker


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 7), stop=st.integers(1, 25),
       mode=st.sampled_from(["belief", "hints", "uniform"]))
def test_determinizations_consistent(seed, n, stop, mode):
    last, tracker = _play_to(seed, n, stop)
    assume(last is not None)  # the deal may end before seat 0 moves (7 players)
    decoded, hands, _ = last
    sizes = decoded["hand_sizes"]
    unseen = np.ones(NUM_CARDS, dtype=bool)
    unseen[decoded["hand"] + decoded["discard"]] = False
    # Hard voids are sound: the true hands never hold a card the tracker rules out.
    for k in range(1, n):
        true_hand = hands[k]
        assert not any((true_hand >> c) & 1 for c in np.flatnonzero(tracker.void[k]))
    belief = {"belief": lambda: load_model(n)(decoded, tracker),
              "hints": lambda: hint_belief(decoded),
              "uniform": lambda: uniform_belief(decoded)}[mode]()
    assert belief.shape == (n - 1, NUM_CARDS)
    assert (belief[:, ~unseen] == 0).all()
    np.testing.assert_allclose(belief.sum(axis=1), sizes[1:], atol=1e-3)
    assert (belief.sum(axis=0) <= 1 + 1e-6).all()
    forbidden = tracker.void[1:]
    if mode == "belief":  # the baselines ignore hard voids; the sampler never does
        assert (belief[forbidden] == 0).all()
    rng = np.random.default_rng(seed)
    for _ in range(3):
        dealt, stock = sample_hidden(belief, sizes, unseen, rng, forbidden)
        assert [h.bit_count() for h in dealt] == sizes[1:]
        assert len(stock) == decoded["stock_size"]
        union = 0
        for k, h in enumerate(dealt):
            assert union & h == 0
            union |= h
            assert not any((h >> c) & 1 for c in np.flatnonzero(forbidden[k]))
        for c in stock:
            assert not (union >> c) & 1
            union |= 1 << c
        assert union == sum(1 << int(c) for c in np.flatnonzero(unseen))


def test_opening_draw_is_a_hard_void():
    """At two players an opener who drew in the opening holds no club afterwards."""
    for seed in range(400):
        (decoded, hands, _), tracker = _play_to(seed, 2, 1)
        if len(decoded["discard"]) == 1 and decoded["hand_sizes"][1] > 6:
            assert tracker.void[1, :13].all() and not tracker.void[1, 13:].any()
            assert hands[1] & ((1 << 13) - 1) == 0
            return
    pytest.fail("no opening draw in 400 deals")


def test_scores_of_baselines():
    """log-loss and placement: a belief that knows the hands beats the uniform prior."""
    (decoded, hands, _), tracker = _play_to(3, 2, 5)
    unseen = np.ones(NUM_CARDS, dtype=bool)
    unseen[decoded["hand"] + decoded["discard"]] = False
    holders = np.zeros(NUM_CARDS, dtype=np.int64)
    holders[[c for c in range(NUM_CARDS) if (hands[1] >> c) & 1]] = 1
    holders[~unseen] = -1
    uniform = uniform_belief(decoded)
    perfect = np.zeros_like(uniform)
    perfect[0, holders == 1] = 1.0
    assert log_loss(perfect, holders, unseen) < 1e-5 < log_loss(uniform, holders, unseen)
    assert expected_correct(perfect, holders) == decoded["hand_sizes"][1]
    assert expected_correct(uniform, holders) < decoded["hand_sizes"][1]

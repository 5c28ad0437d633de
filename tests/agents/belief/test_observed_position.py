"""``ObservedPosition`` against the engine it stands in for.

A search rebuilds positions from one seat's observation; if the rebuilt state differs from
the real one in anything the seat can see (a phase, who has opened, the pile's order, a
hint), every rollout plays a slightly different game and nothing fails loudly. Here the
real game is the reference: the rebuilt state, given the real hidden cards, must play on
exactly like the real one, and the hidden cards it deals must follow the observation's
counts and its drew-on-suit hints.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.belief.state_from_obs import ObservedPosition, search_rules
from pis_env import decode_observation, raw_env
from pis_env.cards import mask_of
from pis_env.rules import Rules

VARIANTS = [
    dict(num_players=n, opening=opening, draw_rule=draw)
    for n in (2, 3, 4) for opening in ("opener", "first_round")
    for draw in ("free", "until_playable")
]


def positions(options: dict, count: int, seed: int):
    """``count`` (real state, decoded observation) pairs of player_0 to move, reached by
    random play from fresh deals; the first moves of a deal are kept often (the opening)."""
    env = raw_env(**options)
    rng = np.random.default_rng(seed)
    found = []
    for attempt in range(count * 20):
        env.reset(seed=seed * 1000 + attempt)
        stop = int(rng.integers(0, 3 * options["num_players"] + 6))
        seen = 0
        while not env.game.deal_over:
            obs = env.observe(env.agent_selection)
            if env.agent_selection == "player_0":
                if seen == stop:
                    decoded = decode_observation(obs["observation"], options["num_players"])
                    found.append((env.game, decoded))
                    break
                seen += 1
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if len(found) == count:
            return found
    raise AssertionError("too few positions")


def with_real_cards(sample, real):
    """The rebuilt position holding the real hidden cards, in the real stock's order."""
    sample.hands = list(real.hands)
    sample.stock = list(real.stock)
    sample._legal = None
    return sample


def public(state) -> tuple:
    return (state.current, state.legal_mask(), state.phase, state.top, state.pile_mask,
            state.active_suit, state.pending_sevens, state.has_drawn, state.direction,
            state.hand_sizes(), len(state.stock), state.drew_on, state.deal_over)


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "-".join(map(str, o.values())))
def test_the_rebuilt_position_plays_on_like_the_real_one(options):
    rng = np.random.default_rng(5)
    for real, decoded in positions(options, 12, seed=options["num_players"]):
        # the observer's own hint is not in its observation: a bot that remembers passes it
        position = ObservedPosition(decoded, Rules(**options), void_weight=None,
                                    own_drew_on=real.drew_on[0])
        assert position.matches(real)
        rebuilt = with_real_cards(position.sample(np.random.default_rng(1)), real)
        real = real.copy(np.random.default_rng(2))
        assert rebuilt.deal_over is False and rebuilt.end_reason is None
        # the pile's order below the top card is not observed; the top is its last card
        assert sorted(rebuilt.pile) == sorted(real.pile)
        assert rebuilt.pile[-1:] == real.pile[-1:]
        if options["opening"] == "first_round":
            assert rebuilt.opened == real.opened
        else:
            assert bool(rebuilt.opened) == bool(real.opened)
        for _ in range(4 * options["num_players"]):
            assert public(rebuilt) == public(real)
            if real.deal_over:
                assert (rebuilt.charges, rebuilt.end_reason) == (real.charges, real.end_reason)
                break
            action = int(rng.choice(real.legal_actions()))
            rebuilt.apply(action)
            real.apply(action)


def test_a_sample_deals_every_unseen_card_once_in_the_observed_counts():
    for options in VARIANTS[::2]:
        for real, decoded in positions(options, 4, seed=11):
            unseen = sorted(c for k in range(1, len(real.hands)) for c in range(52)
                            if real.hands[k] >> c & 1) + sorted(real.stock)
            for weight in (None, 0.15, 3.0):
                position = ObservedPosition(decoded, Rules(**options), void_weight=weight)
                for seed in range(5):
                    state = position.sample(np.random.default_rng(seed))
                    assert state.hands[0] == real.hands[0]
                    assert state.hand_sizes() == real.hand_sizes()
                    assert len(state.stock) == len(real.stock)
                    dealt = [c for k in range(1, len(state.hands)) for c in range(52)
                             if state.hands[k] >> c & 1] + state.stock
                    assert sorted(dealt) == sorted(unseen)
                    assert position.matches(state)


def decoded_position(sizes, hints=None, top=5, **fields) -> dict:
    """A decoded observation by hand: the observer holds cards 40.. of its size, the pile
    is cards 0..5 with ``top`` on it, the rest unseen."""
    discard = [c for c in range(6)]
    hand = list(range(40, 40 + sizes[0]))
    unseen = 52 - len(hand) - len(discard)
    decoded = {"hand": hand, "discard": discard, "top_card": top, "hand_sizes": list(sizes),
               "stock_size": unseen - sum(sizes[1:]), "active_suit": top // 13,
               "pending_sevens": 0, "phase": "play", "has_drawn": False, "direction": 1}
    if hints is not None:
        decoded["drew_on_suit"] = hints
    decoded.update(fields)
    return decoded


def test_the_top_card_is_the_piles_last_card_even_card_zero():
    for top in (0, 1, 5):
        state = ObservedPosition(decoded_position([5, 7, 7], top=top)).sample(
            np.random.default_rng(0))
        assert state.top == top and state.pile[-1] == top
        assert sorted(state.pile) == list(range(6))


def test_hints_and_the_observers_own_draws_reach_the_state():
    plain = ObservedPosition(decoded_position([5, 7, 7])).sample(np.random.default_rng(0))
    assert plain.drew_on == [0, 0, 0]  # no hints in the dict: none for any seat
    hinted = ObservedPosition(decoded_position([5, 7, 7], hints=[[1], [0, 3]]),
                              own_drew_on=4)
    state = hinted.sample(np.random.default_rng(0))
    assert state.drew_on == [4, 0b10, 0b1001]
    assert hinted.matches(state) and not ObservedPosition(
        decoded_position([5, 7, 7], hints=[[1], [0]])).matches(state)


def test_matches_is_false_when_any_one_field_differs():
    position = ObservedPosition(decoded_position([5, 7, 6, 4], hints=[[], [2], []]))
    state = position.sample(np.random.default_rng(3))
    assert position.matches(state)

    def changed(**fields):
        other = state.copy()
        for name, value in fields.items():
            setattr(other, name, value)
        return position.matches(other)

    hands = state.hands
    moved = [hands[0] ^ (1 << 40) ^ (1 << 6)] + hands[1:]
    assert not changed(deal_over=True)
    assert not changed(current=1)
    assert not changed(hands=moved)
    assert not changed(top=4)
    assert not changed(pile_mask=state.pile_mask | 1 << 6)
    assert not changed(active_suit=3)
    assert not changed(pending_sevens=1)
    assert not changed(phase=0)
    assert not changed(has_drawn=True)
    assert not changed(direction=-1)
    assert not changed(stock=state.stock[1:])
    for k in (1, 2, 3):
        card = next(c for c in range(52) if hands[k] >> c & 1)
        assert not changed(hands=[h ^ (1 << card) if i == k else h
                                  for i, h in enumerate(hands)])
        assert not changed(drew_on=[d ^ 1 if i == k else d
                                    for i, d in enumerate(state.drew_on)])


def void_counts(position, seat, suit, samples=3000) -> np.ndarray:
    rng = np.random.default_rng(7)
    mask = mask_of(range(13 * suit, 13 * suit + 13))
    return np.array([(position.deal_hidden(rng)[0][seat] & mask).bit_count()
                     for _ in range(samples)])


def reference_void_count(unseen, sizes, hinted, suit, weight, samples=3000) -> float:
    """The mean count of ``suit`` in seat ``hinted``'s hand when the hinted seat draws
    first, one card at a time with ``suit`` at ``weight``: an independent dealer."""
    rng = np.random.default_rng(8)
    counts = []
    for _ in range(samples):
        pool = list(unseen)
        hand = []
        for _ in range(sizes[hinted]):
            w = np.array([weight if c // 13 == suit else 1.0 for c in pool])
            hand.append(pool.pop(int(rng.choice(len(pool), p=w / w.sum()))))
        counts.append(sum(c // 13 == suit for c in hand))
    return float(np.mean(counts))


@pytest.mark.parametrize("seat", [1, 2])
def test_a_hinted_seat_is_dealt_its_void_suit_at_the_void_weight(seat):
    hints = [[], []]
    hints[seat - 1] = [2]  # hearts: unseen are 13 of them (cards 26..38)
    sizes = [5, 7, 9]
    decoded = decoded_position(sizes, hints=hints)
    unseen = [c for c in range(52) if c not in decoded["hand"] + decoded["discard"]]
    other = 3 - seat
    for weight in (0.15, 2.0):
        counts = void_counts(ObservedPosition(decoded, void_weight=weight), seat, 2)
        want = reference_void_count(unseen, sizes, seat, 2, weight)
        assert abs(counts.mean() - want) < 4 * counts.std() / np.sqrt(len(counts)) + 0.02
    uniform = sizes[seat] * 13 / len(unseen)
    assert void_counts(ObservedPosition(decoded, void_weight=None), seat, 2).mean() == \
        pytest.approx(uniform, abs=0.1)
    assert void_counts(ObservedPosition(decoded, void_weight=1e-9), seat, 2).max() == 0
    # the seat without a hint takes its share of what the hinted seat left
    assert void_counts(ObservedPosition(decoded, void_weight=1e-9), other, 2).mean() > \
        sizes[other] * 13 / (len(unseen) - sizes[seat]) - 0.1


def test_a_weight_of_one_deals_as_no_weight():
    decoded = decoded_position([5, 7, 9], hints=[[2], []])
    for seed in range(5):
        a = ObservedPosition(decoded, void_weight=1.0).sample(np.random.default_rng(seed))
        b = ObservedPosition(decoded, void_weight=None).sample(np.random.default_rng(seed))
        assert (a.hands, a.stock) == (b.hands, b.stock)


def test_an_opponent_with_no_cards_gets_an_empty_hand_and_the_others_theirs():
    decoded = decoded_position([5, 0, 9, 6], hints=[[2], [], [1]])
    position = ObservedPosition(decoded)
    for seed in range(10):
        state = position.sample(np.random.default_rng(seed))
        assert state.hand_sizes() == [5, 0, 9, 6]
        assert len(state.stock) == decoded["stock_size"]


def test_a_sample_draws_its_future_from_the_given_generator():
    rng = np.random.default_rng(4)
    assert ObservedPosition(decoded_position([5, 7, 7])).sample(rng).rng is rng


def test_search_rules_reads_a_mapping_and_a_rollout_horizon():
    want = Rules(num_players=3, draw_rule="until_playable", num_deals=1,
                 illegal_action="raise")
    assert search_rules({"draw_rule": "until_playable", "num_players": 3}) == want
    assert search_rules({"draw_rule": "until_playable"}, 3) == want
    assert search_rules(Rules(num_players=3, max_turns=40), max_turns=7).max_turns == 7
    assert search_rules(Rules(num_players=3, max_turns=40)).max_turns == 40


def test_a_rollout_horizon_counts_from_the_rebuilt_position():
    rng = np.random.default_rng(0)
    for horizon in (1, 3, 6):
        state = ObservedPosition(decoded_position([5, 7, 7]), max_turns=horizon).sample(
            np.random.default_rng(1))
        assert state.turns == 0 and state.rules.max_turns == horizon
        for step in range(horizon):
            assert not state.deal_over, step
            state.apply(int(rng.choice(state.legal_actions())))
        assert state.deal_over


@pytest.mark.parametrize("decoded, message", [
    (decoded_position([5, 7, 7], hand=[0, 40, 41, 42, 43]),
     "observation lists a card both in hand and on the discard pile"),
    (decoded_position([5, 7, 7], hand_sizes=[6, 7, 7]),
     "observer's hand does not match its hand size"),
    (decoded_position([5, 7, 7], top=9), "the top card is not on the discard pile"),
    (decoded_position([5, 7, 7], stock_size=3),
     "41 unseen cards but opponents hold 14 and the stock has 3: the observation does not "
     "add up to 52 cards"),
])
def test_an_inconsistent_observation_is_refused_with_its_reason(decoded, message):
    with pytest.raises(ValueError) as refused:
        ObservedPosition(decoded)
    assert str(refused.value) == message

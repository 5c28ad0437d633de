"""The particle filter's worlds (``agents.belief.ParticleBelief``): the belief it reports
is its weighted worlds mixed with the uniform deal, computed here again by hand; worlds
rebuilt at an observation (``_project``) show that observation, start unweighted and
deal the unseen cards exactly; a rebuild inside a deal keeps what each world still can
(``_deal_keeping``) and never gives an opponent a card it is known not to hold."""

from __future__ import annotations

import numpy as np
import pytest

from agents.belief import ParticleBelief
from pis_env import decode_observation, pis_yedili_v1
from pis_env.batched import kernels as K
from pis_env.rules import Rules

N = 3


def observed(num_players: int = N, seed: int = 1, until=lambda d, b: d["stock_size"] < 20,
             rules=None):
    """A filter that has watched seat 0 (its ``pis_yedili_v1`` observations, whose event
    log it replays) through random play until ``until(decoded, belief)``; returns
    (belief, decoded)."""
    rules = rules or {}
    env = pis_yedili_v1.raw_env(num_players=num_players, **rules)
    for attempt in range(50):  # deals until one reaches the position asked for
        env.reset(seed=seed + attempt)
        belief = ParticleBelief(num_players, particles=32, seed=seed, **rules)
        rng = np.random.default_rng(seed + attempt)
        while not env.game.deal_over:
            agent = env.agent_selection
            obs = env.observe(agent)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            if agent == "player_0":
                decoded = decode_observation(obs["observation"], num_players, 1, 1)
                belief.observe(decoded)
                if until(decoded, belief):
                    return belief, decoded
                belief.record(action)
            env.step(action)
    raise AssertionError("no deal reached the position")


def cards(mask: int) -> set[int]:
    return {c for c in range(52) if mask >> c & 1}


def uniform_deal(decoded) -> np.ndarray:
    """Each unseen card's chance to be in each opponent's hand when the unseen cards are
    dealt at random: its hand size over the number of unseen cards."""
    seen = set(decoded["hand"]) | set(decoded["discard"])
    unseen = [c for c in range(52) if c not in seen]
    out = np.zeros((len(decoded["hand_sizes"]) - 1, 52))
    for k, size in enumerate(decoded["hand_sizes"][1:]):
        out[k, unseen] = size / len(unseen)
    return out


def weighted(belief) -> bool:
    return len(set(np.round(belief.worlds()[2], 9))) > 1


def test_the_belief_is_the_weighted_worlds_mixed_with_the_uniform_deal():
    belief, decoded = observed(until=lambda d, b: d["stock_size"] < 24 and weighted(b)
                               and not b.tracker.void.any())
    hands, _, weights = belief.worlds()
    marg = np.zeros((N - 1, 52))
    for p in range(belief.particles):
        for k in range(1, N):
            for c in cards(int(hands[p, k])):
                marg[k - 1, c] += weights[p]
    s = belief.smoothing
    assert s > 0
    np.testing.assert_allclose(belief.belief(), (1 - s) * marg + s * uniform_deal(decoded),
                               atol=1e-9)
    belief.smoothing = 0.0
    np.testing.assert_allclose(belief.belief(), marg, atol=1e-12)


def test_the_uniform_part_gives_no_card_to_an_opponent_known_not_to_hold_it():
    belief, decoded = observed()
    unseen = sorted(set(range(52)) - set(decoded["hand"]) - set(decoded["discard"]))
    belief.tracker.void[1, unseen[:5]] = True  # opponent 1 holds none of these
    belief.smoothing = 1.0                     # the uniform part alone
    got = belief.belief()
    assert (got[0, unseen[:5]] == 0).all() and (got[1, unseen[:5]] > 0).all()
    np.testing.assert_allclose(got.sum(axis=1), decoded["hand_sizes"][1:])


def test_rebuilt_worlds_show_the_observation_unweighted_and_deal_every_unseen_card():
    belief, decoded = observed(until=lambda d, b: b.used > 4)
    posterior = belief.type_posterior()
    before = belief.projections
    belief._project(decoded)
    belief._project(decoded)
    assert belief.projections == before + 2
    assert belief._in_sync(decoded)
    assert belief.used == 0 and belief.ess == pytest.approx(belief.particles)
    assert (belief.logw == 0).all() and (belief.loglik == 0).all()
    np.testing.assert_allclose(np.exp(belief.seat_logprior), np.maximum(posterior, 1e-6),
                               rtol=1e-9)
    streams = belief.streams
    assert (streams > 0).all() and len(set(streams.tolist())) == belief.particles
    seen = set(decoded["hand"]) | set(decoded["discard"])
    st = belief._state
    for p in range(belief.particles):
        opp = [cards(int(st[p, K.HAND + k])) for k in range(1, N)]
        stock = belief.stock[p, st[p, K.SPOS]:st[p, K.SLEN]].tolist()
        dealt = sorted(c for hand in opp for c in hand) + sorted(stock)
        assert sorted(dealt) == sorted(c for c in range(52) if c not in seen)
        assert [len(h) for h in opp] == decoded["hand_sizes"][1:]


def _one_world(belief):
    """All the weight on world 0; returns its opponents' hands as card sets."""
    belief.logw[:] = -1e3
    belief.logw[0] = 0.0
    st = belief._state
    return [cards(int(st[0, K.HAND + k])) for k in range(1, N)]


def test_a_rebuild_in_the_deal_keeps_the_weighted_worlds_cards_that_are_still_unseen():
    """All the weight on one world: a rebuild at the same observation draws every new
    world from it and keeps its opponents' cards (they are still unseen), where a fresh
    deal would spread them over the unseen cards."""
    belief, decoded = observed(until=lambda d, b: b.used > 2)
    hands = _one_world(belief)
    want = np.zeros((N - 1, 52))
    for k, hand in enumerate(hands):
        want[k, sorted(hand)] = 1.0
    assert belief._same_deal_as(decoded)
    belief._project(decoded)
    belief.smoothing = 0.0
    np.testing.assert_array_equal(belief.belief(), want)


def test_a_rebuild_drops_a_kept_card_the_opponent_is_known_not_to_hold():
    belief, decoded = observed(until=lambda d, b: b.used > 2)
    hands = _one_world(belief)
    card = min(hands[0])
    belief.tracker.void[1, card] = True
    belief._project(decoded)
    belief.smoothing = 0.0
    got = belief.belief()
    assert got[0, card] == 0.0
    assert (got[0, sorted(hands[0] - {card})] == 1.0).all()


def test_the_same_deal_is_told_from_a_new_one():
    belief, decoded = observed()
    assert belief._same_deal_as(decoded)
    fewer_pile = dict(decoded, discard=decoded["discard"][:1])
    assert not belief._same_deal_as(fewer_pile)  # the worlds' pile cards are gone: new deal
    more_stock = dict(decoded, stock_size=decoded["stock_size"] + 1)
    assert not belief._same_deal_as(more_stock)
    assert belief._same_deal_as(dict(decoded, stock_size=decoded["stock_size"] - 1))
    reshuffling, d2 = observed(rules={"empty_stock": "reshuffle"})
    assert not reshuffling._same_deal_as(d2)  # a reshuffle can bring pile cards back


def keeping(keep, sizes, unseen, forbidden, particles=64, seed=0):
    belief = ParticleBelief(len(sizes), Rules(num_players=len(sizes)), particles=particles,
                            seed=seed)
    return belief._deal_keeping(keep, sizes, unseen, forbidden)


def test_kept_cards_stay_trimmed_to_the_hand_and_the_rest_is_dealt_exactly():
    unseen = np.zeros(52, dtype=bool)
    unseen[:12] = True
    sizes = [5, 3, 4]          # the observer's, then the two opponents'; a stock of 5
    keep = np.zeros((64, 2), dtype=np.int64)
    keep[:, 0] = 0b11111       # five cards for a hand of three: trimmed
    keep[:, 1] = 0b1100000     # two of four: kept, two more dealt
    hands, stocks = keeping(keep, sizes, unseen, None)
    assert hands.dtype == np.int64 and stocks.dtype == np.int64
    trims = set()
    for h, s in zip(hands.tolist(), stocks.tolist()):
        a, b = cards(h[0]), cards(h[1])
        assert len(a) == 3 and a <= {0, 1, 2, 3, 4}
        assert len(b) == 4 and {5, 6} <= b
        assert sorted(a | b | set(s)) == list(range(12)) and len(s) == 5
        trims.add(frozenset(a))
    assert len(trims) > 3  # trimmed at random, not always the same three


def test_a_forbidden_card_is_dropped_from_what_is_kept_and_never_dealt():
    unseen = np.zeros(52, dtype=bool)
    unseen[:6] = True
    sizes = [7, 2, 2]          # two each, a stock of two
    forbidden = np.zeros((2, 52), dtype=bool)
    forbidden[1, 2:6] = True   # opponent 2 can hold only cards 0 and 1
    keep = np.zeros((64, 2), dtype=np.int64)
    keep[:, 1] = 0b100         # it "kept" card 2, which it cannot hold
    hands, _ = keeping(keep, sizes, unseen, forbidden)
    for h in hands.tolist():
        assert cards(h[1]) == {0, 1}  # dealt first, so opponent 1 cannot take 0 or 1
        assert not cards(h[0]) & {0, 1}
    hands, _ = keeping(None, sizes, unseen, forbidden)  # a fresh deal honours it too
    assert all(cards(h[1]) == {0, 1} for h in hands.tolist())


def test_a_new_deal_deals_every_world_afresh_and_carries_who_the_opponents_are():
    """A second deal observed without ``reset()``: the worlds are dealt from the event
    log's deal start (not projected), each with the seat's hand and seven cards per
    opponent from the other cards, unweighted, each with a stream of its own; what the
    first deal said of the opponents becomes the prior."""
    belief, _ = observed(until=lambda d, b: b.used > 3)
    posterior = belief.type_posterior()
    env = pis_yedili_v1.raw_env(num_players=N)
    env.reset(seed=77)
    while env.agent_selection != "player_0":
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    decoded = decode_observation(env.observe("player_0")["observation"], N, 1, 1)
    projections = belief.projections
    belief.observe(decoded)
    assert belief.projections == projections and belief.used == 0
    np.testing.assert_allclose(np.exp(belief.seat_logprior), np.maximum(posterior, 1e-6),
                               rtol=1e-9)
    assert (belief.logw == 0).all() and (belief.loglik == 0).all()
    streams = belief.streams
    assert (streams > 0).all() and len(set(streams.tolist())) == belief.particles
    st = belief._state
    hand = cards(int(st[0, K.HAND]))
    assert all(cards(int(h)) == hand for h in st[:, K.HAND])
    for p in range(belief.particles):
        opp = [cards(int(st[p, K.HAND + k])) for k in range(1, N)]
        stock = belief.stock[p, st[p, K.SPOS]:st[p, K.SLEN]].tolist()
        assert not (opp[0] & opp[1]) and not ((opp[0] | opp[1]) & hand)
        assert len(set(stock) | opp[0] | opp[1] | hand | set(decoded["discard"])) == 52


def test_the_weights_stay_normalised_when_every_world_is_unlikely_or_dead():
    """``logw`` sums log-probabilities: after a long deal every world's can be far below
    zero, and exp() of it underflows unless the largest is taken out first. With no world
    alive at all the worlds count alike."""
    belief, _ = observed()
    p = belief.particles
    belief.logw[:] = -900.0 - np.arange(p) * 0.01
    want = np.exp(-np.arange(p) * 0.01)
    want /= want.sum()
    np.testing.assert_allclose(belief.worlds()[2], want, rtol=1e-9)
    assert belief.ess == pytest.approx(1.0 / np.sum(want ** 2))
    belief.logw[:] = -np.inf
    np.testing.assert_allclose(belief.worlds()[2], np.full(p, 1.0 / p))
    assert belief.ess == pytest.approx(p)
    hands, _ = belief.sample(64, np.random.default_rng(0))
    assert len({tuple(h) for h in hands}) > 1  # drawn from every world, not from one


def test_sample_takes_the_bounds_of_its_ranges():
    belief, _ = observed()
    rng = np.random.default_rng(0)
    assert belief.sample(1, rng)[0].shape == (1, N - 1)
    assert belief.sample(3, rng, types=True, type_temperature=1e6)[2].shape == (3, N)
    with pytest.raises(ValueError) as refused:
        belief.sample(3, rng, types=True, type_temperature=1000000.5)
    assert str(refused.value) == "type_temperature=1000000.5: must be in 0..1e6"
    with pytest.raises(ValueError) as refused:
        belief.sample(0, rng)
    assert str(refused.value) == f"count=0: must be in 1..{1 << 20}"

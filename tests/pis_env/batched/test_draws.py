"""The batched engine's random draws against independent references.

The differential tests (``test_differential.py``) feed both engines the same stacked decks and
the same actions, so they never look at what the batched engine draws by itself: its
random stream, its shuffles, the dealer of a seeded match, the learner's seat and the
opponents of every match a training run plays. A wrong draw there raises nothing and
changes no legal move; a training run just learns from a skewed table. Here each draw is
compared with a plain-Python statement of it (splitmix64 and Lemire's reduction written
out on Python ints) or counted over many draws against shares computed from the
configured weights, with thresholds far above chance, so that a draw that can never
produce one of its outcomes (or produces one too often) fails.
"""

from __future__ import annotations

import numpy as np

from pis_env.batched import BatchedEnv, BatchedGame
from pis_env.batched import kernels as K
from pis_env.cards import CARD_POINTS
from tests.pis_env.reference_draws import assert_uniform_permutations, seeded, splitmix64


def test_the_stream_is_splitmix64_with_lemires_reduction():
    """Reference: splitmix64 and the multiply-shift reduction written on Python ints; the
    published first output of splitmix64 from state 0 anchors the reference itself."""
    assert splitmix64(0)[1] == 0xE220A8397B1DCDAF
    rng = np.random.default_rng(11)
    seeds = rng.integers(0, 2**63, size=40, dtype=np.uint64)
    seeds[:3] = [0, 1, 2**63 + 5]
    streams = np.empty(seeds.size, dtype=np.uint64)
    K.seed_streams(streams, seeds)
    states = [seeded(int(s)) for s in seeds]
    assert streams.tolist() == states
    for b in range(seeds.size):
        for n in (1, 2, 7, 52, 1000, 2**31 + 3):
            states[b], z = splitmix64(states[b])
            assert K.rand_below(streams, b, n) == ((z >> 32) * n) >> 32
        states[b], z = splitmix64(states[b])
        assert K.rand_unit(streams, b) == (z >> 11) / 2.0**53
        states[b], z = splitmix64(states[b])
        assert int(K.rand_u64(streams, b)) == z
        assert int(streams[b]) == states[b]


def test_bit_helpers_are_their_plain_statements():
    """Reference: the card ids of a mask listed in order, and the sum of each card's
    points from ``pis_env.cards.CARD_POINTS``."""
    rng = np.random.default_rng(3)
    for mask in rng.integers(1, 1 << 52, size=300).tolist():
        cards = [c for c in range(52) if mask >> c & 1]
        for k in {0, len(cards) // 2, len(cards) - 1}:
            assert K.nth_bit(np.int64(mask), k) == cards[k]
        assert K.points_of(np.int64(mask)) == sum(CARD_POINTS[c] for c in cards)


def test_a_seeded_deal_is_a_uniform_shuffle_from_a_uniform_dealer():
    """Reference: a uniform permutation (every card at every position alike, one fixed
    point per deck on average) and a dealer uniform over the seats."""
    game = BatchedGame(4000, num_players=5, seed=0)
    game.reset(seed=17)
    assert_uniform_permutations(game.stock.astype(np.int64), np.arange(52))
    dealers = np.bincount(game.st[:, K.DEALER], minlength=5)
    assert dealers.size == 5 and (np.abs(dealers - 800) < 120).all(), dealers


def test_a_reshuffle_is_a_uniform_permutation_of_the_pile_under_its_top():
    """Reference: the pile less its top card, in ascending order, permuted uniformly."""
    rows, top = 6000, 30
    pile = np.array([1, 5, 9, 13, 22, 30, 40, 47], dtype=np.int64)
    st = np.zeros((rows, K.NF), dtype=np.int64)
    st[:, K.TOP] = top
    st[:, K.PILE] = int(sum(1 << int(c) for c in pile))
    stock = np.zeros((rows, K.NUM_CARDS), dtype=np.int8)
    rng = np.empty(rows, dtype=np.uint64)
    K.seed_streams(rng, np.arange(rows, dtype=np.uint64))
    for b in range(rows):
        K._refill_stock(st, stock, rng, b)
    under = pile[pile != top]
    assert (st[:, K.SLEN] == under.size).all() and (st[:, K.SPOS] == 0).all()
    assert (st[:, K.PILE] == 1 << top).all()
    assert_uniform_permutations(stock[:, :under.size].astype(np.int64), under)


def _play(env: BatchedEnv, steps: int, on_done) -> None:
    masks = env.masks
    for t in range(steps):
        actions = masks.argmax(axis=1) if t % 2 else (masks * np.arange(58)).argmax(axis=1)
        _, _, dones, infos = env.step(actions)
        if dones.any():
            on_done(np.flatnonzero(dones), infos)
        masks = env.masks


def test_a_random_learner_seat_is_redrawn_uniformly_for_every_match():
    """Reference: independent uniform seats, match after match: each seat a quarter of the
    time, and the next match's seat independent of the last (each of the 16 pairs about
    1/16); a fixed seat never moves."""
    n, games = 4, 512
    env = BatchedEnv(games, num_players=n, opponent="random", learner_seat="random",
                     seed=7, max_turns=12)
    env.reset()
    first = np.bincount(env.learner[:, K.L_SEAT], minlength=n)
    assert (np.abs(first - games / n) < 60).all(), first  # sd about 10
    pairs = np.zeros((n, n))

    def count(done, infos):
        # the finished match's seat, and the seat drawn for the next one
        np.add.at(pairs, (infos["learner_seat"][done], env.learner[done, K.L_SEAT]), 1)

    _play(env, 60, count)
    total = pairs.sum()
    assert total > 3000
    shares = pairs / total
    assert (np.abs(shares - 1 / 16) < 0.02).all(), shares  # sd about 0.004

    fixed = BatchedEnv(64, num_players=n, opponent="random", learner_seat=2, seed=7,
                       max_turns=12)
    fixed.reset()
    seen = []
    _play(fixed, 30, lambda done, infos: seen.extend(fixed.learner[done, K.L_SEAT]))
    assert seen and set(seen) == {2} and (fixed.learner[:, K.L_SEAT] == 2).all()


def _lowest_legal(obs, masks):
    return masks.argmax(axis=1)


def _mixed_env(games: int, n: int, seed: int) -> tuple[BatchedEnv, np.ndarray]:
    """A table whose opponent kinds are 0 (random) and three external policies."""
    policies = [lambda o, m: _lowest_legal(o, m) for _ in range(3)]
    env = BatchedEnv(games, num_players=n, opponent=["random", *policies][:n], seed=seed,
                     max_turns=12)
    return env, np.array([K.RANDOM, K.EXTERNAL, K.EXTERNAL + 1, K.EXTERNAL + 2])


def test_opponents_are_drawn_per_seat_at_the_configured_shares():
    """Reference: the shares ``w / sum(w)`` of the weights 1, 2, 3, 4, each seat on its
    own (two seats of a match hold the same kind with chance sum of squared shares, 0.3),
    at every reset and again for every match that starts during play (where the seats of
    the new match are as independent of the old one's)."""
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    expected = weights / weights.sum()
    env, kinds = _mixed_env(1024, 4, seed=5)
    env.set_opponent_mix(kinds, weights)
    drawn = []
    for seed in range(3):
        env.reset(seed=seed)
        drawn.append(env.opponent_kinds.copy())
    drawn = np.concatenate(drawn)
    shares = np.bincount(drawn.ravel(), minlength=4) / drawn.size
    assert (np.abs(shares - expected) < 0.015).all(), shares  # sd below 0.003
    same = (drawn[:, 1] == drawn[:, 2]).mean()
    assert abs(same - (expected**2).sum()) < 0.03, same

    new, kept = [], []

    def count(done, infos):
        new.append(env.opponent_kinds[done, 1:].copy())
        kept.append(env.opponent_kinds[done, 1:] == env.term_kinds[done, 1:])

    _play(env, 40, count)
    new, kept = np.concatenate(new), np.concatenate(kept)
    assert new.size > 3000
    shares = np.bincount(new.ravel(), minlength=4) / new.size
    assert (np.abs(shares - expected) < 0.03).all(), shares
    assert abs(kept.mean() - (expected**2).sum()) < 0.04, kept.mean()


def test_opponents_drawn_per_game_share_one_kind_at_the_configured_shares():
    """Reference: with ``per_game`` one draw per match, ``w / sum(w)``, for every seat."""
    weights = np.array([4.0, 1.0, 2.0, 3.0])
    env, kinds = _mixed_env(2048, 4, seed=9)
    env.set_opponent_mix(kinds, weights, per_game=True)
    env.reset(seed=1)
    k = env.opponent_kinds
    assert (k == k[:, :1]).all()
    shares = np.bincount(k[:, 0], minlength=4) / k.shape[0]
    assert (np.abs(shares - weights / weights.sum()) < 0.035).all(), shares  # sd < 0.011


def test_the_draw_kernel_reaches_every_kind_of_a_mix():
    """Reference: shares ``w / sum(w)`` of a five-kind mix with a tiny and a large weight,
    the cumulative table built by hand; a kind with weight 0 is never drawn."""
    weights = np.array([0.02, 0.3, 0.0, 0.5, 0.18])
    table = np.array([10, 11, 12, 13, 14], dtype=np.int64)
    cum = np.cumsum(weights) / weights.sum()
    cum[-1] = 1.0
    games, n = 20000, 3
    kinds = np.zeros((games, n), dtype=np.int64)
    rng = np.empty(games, dtype=np.uint64)
    K.seed_streams(rng, np.arange(games, dtype=np.uint64) + 99)
    K.draw_all_opponents(kinds, n, cum, table, False, rng)
    counts = np.array([(kinds == k).sum() for k in table])
    shares = counts / kinds.size
    assert counts[2] == 0
    assert (np.abs(shares - weights) < 0.01).all(), shares
    assert counts[0] > 600  # expected 1200

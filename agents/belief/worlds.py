"""The particle belief's worlds as arrays, and the numba kernels that move them.

A **world** is one complete hidden state of the current deal: a row of the batched
engine's state (``pis_env.batched.kernels``: every hand, the pile, the public fields),
its stock in order, and the hand each opponent held at each of its past decisions. Seats
are relative to the observer (seat 0), as in the observation and ``SearchAgent._template``.
Stepping every world with the action actually taken keeps the public fields of all
worlds equal to the table's (the same engine code), while the hidden draws are dealt
from each world's own stock: uniform over that world's unseen cards, which is the prior.

Why one engine row per world: an opponent model is then evaluated exactly on the
position that opponent faced in that world (its hand there, the public state), with the
same numba heuristic the bots use (``agents.heuristic.batched``) or the same observation
a network would be shown (``kernels.write_obs``), and the world is ready for the search's
rollouts as it is.

The one hidden-history move is :func:`relabel`: exchanging the names of two cards that
were never public (both unseen by the observer for the whole deal). It maps a hidden
history consistent with the public record to another consistent one with the same prior
probability (every deal and every draw is uniform), so it serves both the repairs (a
world that contradicts a public fact is fixed by renaming, rather than dropped) and the
Metropolis-Hastings rejuvenation moves (``agents.belief.particles``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pis_env.batched import kernels as K
from pis_env.batched.kernels import apply_action, legal_of, lowbit_index, popcount, rand_below

FULL_DECK = (np.int64(1) << np.int64(K.NUM_CARDS)) - np.int64(1)


@njit(cache=True)
def refresh_legal(st, cfg):
    """Every world's legal-action mask from its state (after hands were written)."""
    for b in range(st.shape[0]):
        st[b, K.LEGAL] = legal_of(st, b, cfg)


@njit(cache=True)
def step_worlds(st, stock, rng, cfg, action, charges, winners, rewards):
    """Apply ``action`` of the current player in every world whose deal is not over."""
    for b in range(st.shape[0]):
        if st[b, K.OVER] == 0:
            apply_action(st, stock, rng, cfg, b, action, charges, winners, rewards)


@njit(cache=True, inline="always")
def _swap_bits(mask, bx, by):
    hx = (mask & bx) != 0
    hy = (mask & by) != 0
    if hx and not hy:
        return (mask ^ bx) | by
    if hy and not hx:
        return (mask ^ by) | bx
    return mask


@njit(cache=True)
def relabel(st, stock, b, x, y, n, dec_hand, used):
    """Exchange the names of cards ``x`` and ``y`` in world ``b``: its hands, its stock
    and the hands of its first ``used`` recorded decisions."""
    bx = np.int64(1) << np.int64(x)
    by = np.int64(1) << np.int64(y)
    for s in range(n):
        st[b, K.HAND + s] = _swap_bits(st[b, K.HAND + s], bx, by)
    for i in range(st[b, K.SPOS], st[b, K.SLEN]):
        if stock[b, i] == x:
            stock[b, i] = y
        elif stock[b, i] == y:
            stock[b, i] = x
    for t in range(used):
        dec_hand[b, t] = _swap_bits(dec_hand[b, t], bx, by)


@njit(cache=True)
def apply_swaps(st, stock, xs, ys, accept, n, dec_hand, used):
    """:func:`relabel` ``xs[b]`` with ``ys[b]`` in every world ``b`` with ``accept[b]``."""
    for b in range(st.shape[0]):
        if accept[b]:
            relabel(st, stock, b, xs[b], ys[b], n, dec_hand, used)


@njit(cache=True, inline="always")
def _random_bit(mask, rng, b):
    return K.nth_bit(mask, rand_below(rng, b, popcount(mask)))


@njit(cache=True)
def _keeps_legal(b, x, y, hist, scratch, cfg):
    """Whether renaming ``x`` and ``y`` in world ``b`` leaves every recorded decision
    legal for the hand its mover then held (``hist``: rows, movers, actions, hands,
    used)."""
    dec_rows, dec_mover, dec_action, dec_hand, used = hist
    bx = np.int64(1) << np.int64(x)
    by = np.int64(1) << np.int64(y)
    for t in range(used):
        h = dec_hand[b, t]
        new = _swap_bits(h, bx, by)
        if new != h:
            for f in range(scratch.shape[1]):
                scratch[0, f] = dec_rows[t, f]
            scratch[0, K.HAND + dec_mover[t]] = new
            if not (legal_of(scratch, 0, cfg) >> dec_action[t]) & 1:
                return False
    return True


@njit(cache=True)
def _pick(pool, x, rng, b, hist, scratch, cfg):
    """A card of ``pool`` to rename with ``x`` that keeps the recorded decisions legal
    (tried from a random start; if none does, the first tried)."""
    k = popcount(pool)
    start = rand_below(rng, b, k)
    for i in range(k):
        y = K.nth_bit(pool, (start + i) % k)
        if _keeps_legal(b, x, y, hist, scratch, cfg):
            return y
    return K.nth_bit(pool, start)


@njit(cache=True)
def _stock_mask(stock, st, b):
    m = np.int64(0)
    for i in range(st[b, K.SPOS], st[b, K.SLEN]):
        m |= np.int64(1) << np.int64(stock[b, i])
    return m


@njit(cache=True)
def repair_for_action(st, stock, rng, cfg, action, public, hist, repaired):
    """Make ``action`` legal for the current player of every world where it is not,
    by relabelling cards that were never public (``public``: a mask of cards that were).

    * A card played that the world did not give the mover: renamed with one of the
      mover's own hidden cards (``c`` joins the hand, that card takes ``c``'s place).
    * A draw or pass that the world's hand forbids (an opening draw while holding a
      club; the stricter draw rules): each card that made it illegal is renamed with a
      hidden card that would not be playable here (the stock first, else another hand).

    Among the candidates, one that keeps every recorded decision ``hist`` (rows,
    movers, actions, hands, used) legal is preferred: after an opening draw of five
    cards and a club, the club played can only be the last card drawn.

    ``repaired[b]``: 1 repaired, 2 could not be repaired (the world is then dead),
    0 untouched."""
    n = cfg[K.C_N]
    dec_hand, used = hist[3], hist[4]
    scratch = np.zeros((1, st.shape[1]), dtype=np.int64)
    for b in range(st.shape[0]):
        repaired[b] = 0
        if st[b, K.OVER]:
            repaired[b] = 2
            continue
        if (st[b, K.LEGAL] >> action) & 1:
            continue
        m = st[b, K.CUR]
        hand = st[b, K.HAND + m]
        if action < K.NUM_CARDS:
            pool = hand & ~public
            if pool == 0:
                pool = hand
            if pool == 0:
                repaired[b] = 2
                continue
            y = _pick(pool, action, rng, b, hist, scratch, cfg)
            relabel(st, stock, b, action, y, n, dec_hand, used)
        else:
            # The cards that would be playable here whatever the hand: the mover's hand
            # set to the whole deck for a moment.
            st[b, K.HAND + m] = FULL_DECK
            playable = legal_of(st, b, cfg) & FULL_DECK
            st[b, K.HAND + m] = hand
            others = np.int64(0)
            for s in range(1, n):
                if s != m:
                    others |= st[b, K.HAND + s]
            stock_pool = _stock_mask(stock, st, b) & ~playable & ~public
            hand_pool = others & ~playable & ~public
            bad = hand & playable
            while bad:
                x = lowbit_index(bad)
                bad &= bad - 1
                if stock_pool:
                    y = _pick(stock_pool, x, rng, b, hist, scratch, cfg)
                    stock_pool &= ~(np.int64(1) << np.int64(y))
                elif hand_pool:
                    y = _pick(hand_pool, x, rng, b, hist, scratch, cfg)
                    hand_pool &= ~(np.int64(1) << np.int64(y))
                else:
                    break
                relabel(st, stock, b, x, y, n, dec_hand, used)
        st[b, K.LEGAL] = legal_of(st, b, cfg)
        repaired[b] = 1 if (st[b, K.LEGAL] >> action) & 1 else 2


@njit(cache=True)
def place_own_draws(st, stock, rng, cfg, cards, public, hist, repaired):
    """Put the cards the observer is about to draw (``cards``, in order) at the front of
    every world's stock. A world that gave one of them to an opponent renames it with a
    stock card first. ``repaired[b]`` as in :func:`repair_for_action`."""
    n = cfg[K.C_N]
    dec_hand, used = hist[3], hist[4]
    scratch = np.zeros((1, st.shape[1]), dtype=np.int64)
    known = np.int64(0)
    for c in cards:
        known |= np.int64(1) << np.int64(c)
    for b in range(st.shape[0]):
        repaired[b] = 0
        if st[b, K.OVER]:
            repaired[b] = 2
            continue
        for c in cards:
            bit = np.int64(1) << np.int64(c)
            for s in range(1, n):
                if st[b, K.HAND + s] & bit:
                    pool = _stock_mask(stock, st, b) & ~known & ~public
                    if pool == 0:
                        pool = _stock_mask(stock, st, b) & ~known
                    if pool == 0:
                        repaired[b] = 2
                        break
                    y = _pick(pool, c, rng, b, hist, scratch, cfg)
                    relabel(st, stock, b, c, y, n, dec_hand, used)
                    repaired[b] = max(repaired[b], 1)
                    break
        if repaired[b] == 2:
            continue
        start = st[b, K.SPOS]
        for i in range(cards.shape[0]):
            pos = start + i
            found = -1
            for j in range(pos, st[b, K.SLEN]):
                if stock[b, j] == cards[i]:
                    found = j
                    break
            if found < 0:
                repaired[b] = 2
                break
            t = stock[b, pos]
            stock[b, pos] = stock[b, found]
            stock[b, found] = t


@njit(cache=True)
def shuffle_stocks(st, stock, rng):
    """Reshuffle what is left of every world's stock (its order is uniform given the
    world, and resampled copies should not draw alike)."""
    for b in range(st.shape[0]):
        lo = st[b, K.SPOS]
        for i in range(st[b, K.SLEN] - 1, lo, -1):
            j = lo + rand_below(rng, b, i - lo + 1)
            t = stock[b, i]
            stock[b, i] = stock[b, j]
            stock[b, j] = t


@njit(cache=True)
def propose_swaps(st, stock, rng, cfg, public, dec_mover, dec_hand, used, xs, ys, counts):
    """One Metropolis-Hastings proposal per world: a hidden card ``x`` of a random
    opponent's hand and a hidden card ``y`` of another holder (the stock or another
    opponent), both never public. ``counts[b]``: how many recorded decisions the
    exchange changes (0: no proposal)."""
    n = cfg[K.C_N]
    for b in range(st.shape[0]):
        xs[b] = -1
        ys[b] = -1
        counts[b] = 0
        held = np.int64(0)
        for s in range(1, n):
            held |= st[b, K.HAND + s]
        held &= ~public
        hidden = (held | _stock_mask(stock, st, b)) & ~public
        if held == 0:
            continue
        x = _random_bit(held, rng, b)
        bx = np.int64(1) << np.int64(x)
        owner = 0
        for s in range(1, n):
            if st[b, K.HAND + s] & bx:
                owner = s
        pool = hidden & ~st[b, K.HAND + owner]
        if pool == 0:
            continue
        y = _random_bit(pool, rng, b)
        by = np.int64(1) << np.int64(y)
        xs[b] = x
        ys[b] = y
        c = 0
        for t in range(used):
            h = dec_hand[b, t]
            if ((h & bx) != 0) != ((h & by) != 0):
                c += 1
        counts[b] = c


@njit(cache=True)
def swapped_rows(dec_rows, dec_mover, dec_hand, used, xs, ys, counts, cfg, rows, worlds,
                 times):
    """The decision rows a proposal changes, with the mover's hand renamed and its legal
    mask recomputed, into ``rows`` (``worlds[i]``, ``times[i]``: which world and
    decision). Returns the number of rows written."""
    k = 0
    for b in range(xs.shape[0]):
        if counts[b] == 0:
            continue
        bx = np.int64(1) << np.int64(xs[b])
        by = np.int64(1) << np.int64(ys[b])
        for t in range(used):
            h = dec_hand[b, t]
            new = _swap_bits(h, bx, by)
            if new != h:
                for f in range(rows.shape[1]):
                    rows[k, f] = dec_rows[t, f]
                rows[k, K.HAND + dec_mover[t]] = new
                rows[k, K.LEGAL] = legal_of(rows, k, cfg)
                worlds[k] = b
                times[k] = t
                k += 1
    return k


@njit(cache=True)
def hand_bits(hands, out):
    """``out[i, k, c]`` = 1 when card ``c`` is in mask ``hands[i, k]`` (float64)."""
    for i in range(hands.shape[0]):
        for k in range(hands.shape[1]):
            h = hands[i, k]
            while h:
                c = lowbit_index(h)
                h &= h - 1
                out[i, k, c] = 1.0


__all__ = ["FULL_DECK", "apply_swaps", "hand_bits", "place_own_draws", "propose_swaps",
           "refresh_legal", "relabel", "repair_for_action", "shuffle_stocks", "step_worlds",
           "swapped_rows"]

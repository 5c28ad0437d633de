"""The public record of layout 1 (``pis_yedili_v1``) for the batched engine, in numba.

``pis_env.events`` replays a ``GameState``'s history; the batched engine keeps no
history, so this module keeps, per game, what layout 1 needs and updates it as the
actions are applied (the loops of ``stepping`` call ``record_action``, ``new_deal``,
``new_match_record`` and ``write_public`` as they go): the per-seat summary of the
deal (cards drawn, drawn since the last play, refused suits and ranks as bit masks, the
latest nomination) and a ring of
the last ``RING`` events of the match, already merged (a seat's run of draws is one
entry). Per seat, ``last_own`` is the entry holding its latest action and ``first`` a
copy of that action as its window's first event (its own share of a run of draws; the
ring may have moved past it). ``record_action`` reads the engine's state *before* the
action, so counts follow the engine's ``_take`` from the stock and pile sizes, and
refusals the engine's phase, top card and active suit; ``new_deal`` and
``new_match_record`` follow the engine's deal and match starts. ``write_public`` writes
the record of one seat into the tail of a row whose head ``kernels.write_obs`` wrote.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .. import events as _events
from .. import observation as _observation
from . import kernels as K

RING = 64  # a power of two >= the most slots a log has (51) - 1
PENALTY, NEW_DEAL = _events.PENALTY, _events.NEW_DEAL
DRAWN_CAP = _observation.DRAWN_CAP
SIZE_SCALE, SEAT_SCALE, CODE_SCALE = (_observation.SIZE_SCALE, _observation.SEAT_SCALE,
                                      _observation.CODE_SCALE)
DROPPED_SCALE = _observation.DROPPED_SCALE
# Rows of ``summary``.
S_DRAWN, S_SINCE, S_SUITS, S_RANKS, S_NOMINATED = range(5)
#: Layout-1 segments whose starts ``offsets`` holds, in this order (then the slot count).
SEGMENTS = ("opp_drawn", "opp_drawn_since_play", "opp_refused_suits", "opp_refused_ranks",
            "opp_nominated", "event_seat", "event_action", "event_count", "events_dropped")


class PublicRecord(NamedTuple):
    """The layout-1 record of B games."""

    ring: np.ndarray       # int8 [B, RING, 3] (absolute seat, event code, count)
    pushed: np.ndarray     # [B] entries pushed since the match began
    last_own: np.ndarray   # [B, 7] entry of each seat's latest action (0: none yet)
    first: np.ndarray      # int8 [B, 7, 3] that action as its window's first event
    summary: np.ndarray    # int64 [B, 5, 7] per seat: S_DRAWN ... S_NOMINATED (-1: none)
    offsets: np.ndarray    # [10] starts of SEGMENTS, then the number of event slots


def make_record(num_games: int, num_players: int, num_deals: int) -> PublicRecord:
    layout = _observation.Layout.of(num_players, num_deals, 1)
    offsets = [layout.offsets[name].start for name in SEGMENTS]
    offsets.append(_observation.event_slots(num_players))
    B = num_games
    # Small types keep a game's record in a few cache lines: seats, codes and counts fit
    # int8 (a run of draws takes < 52 cards).
    return PublicRecord(np.zeros((B, RING, 3), np.int8), np.zeros(B, np.int64),
                        np.zeros((B, K.MAX_PLAYERS), np.int64),
                        np.zeros((B, K.MAX_PLAYERS, 3), np.int8),
                        np.zeros((B, 5, K.MAX_PLAYERS), np.int64),
                        np.array(offsets, np.int64))


# The helpers below are inlined into the stepping loops. They take the record's arrays
# unpacked and never return early: an inlined function that reads a tuple's arrays field
# by field or returns from inside a branch keeps numba's reference counting of those
# arrays in the loop (measured 2-3x slower).
@njit(cache=True, inline="always")
def _push(ring, pushed, b, seat, code, count):
    i = pushed[b] & (RING - 1)
    ring[b, i, 0] = seat
    ring[b, i, 1] = code
    ring[b, i, 2] = count
    pushed[b] += 1


@njit(cache=True, inline="always")
def new_deal(pub, st, b):
    """The deal just dealt in game ``b``: its marker, a fresh summary."""
    ring, pushed, _, _, summary, _ = pub
    for s in range(K.MAX_PLAYERS):
        for r in range(5):
            summary[b, r, s] = 0
        summary[b, S_NOMINATED, s] = -1
    _push(ring, pushed, b, st[b, K.DEALER], NEW_DEAL, 0)


@njit(cache=True, inline="always")
def new_match_record(pub, st, b):
    """The match just started in game ``b``: an empty ring, then its first deal."""
    _, pushed, last_own, first, _, _ = pub
    pushed[b] = 0
    new_deal(pub, st, b)
    for s in range(K.MAX_PLAYERS):
        last_own[b, s] = 0
        first[b, s, 0] = st[b, K.DEALER]
        first[b, s, 1] = NEW_DEAL
        first[b, s, 2] = 0


@njit(cache=True)
def new_matches(pub, st, games):
    """``new_match_record`` for ``games`` (after ``kernels.reset_games``)."""
    for i in range(games.shape[0]):
        new_match_record(pub, st, games[i])


@njit(cache=True, inline="always")
def _taken(st, cfg, b, want):
    """Cards a draw of ``want`` takes (``GameState._take``: the stock running dry
    reshuffles the pile under its top card, or ends the deal)."""
    stock = st[b, K.SLEN] - st[b, K.SPOS]
    pile = K.popcount(st[b, K.PILE])
    taken = want
    for k in range(1, want + 1):
        stock -= 1
        if stock == 0:
            if cfg[K.C_RESHUFFLE] and pile >= 2:
                stock = pile - 1
                pile = 1
            else:
                taken = k
                break
    return taken


@njit(cache=True, inline="always")
def _refuse(summary, st, b, p):
    if st[b, K.PHASE] == K.OPENING:
        summary[b, S_SUITS, p] |= 1  # clubs
    else:
        summary[b, S_SUITS, p] |= np.int64(1) << st[b, K.SUIT]
        rank = st[b, K.TOP] % 13
        if rank != K.JACK:
            summary[b, S_RANKS, p] |= (np.int64(1) << rank) | (np.int64(1) << K.JACK)


@njit(cache=True, inline="always")
def write_public(pub, st, cfg, b, observer, row, size_tab):
    """Layout 1's record of game ``b`` seen by ``observer`` into ``row``'s tail (zeros).
    ``size_tab[k]`` is ``k / 52`` in the row's dtype (the head's table: the same values
    as the encoder's division). ``row`` must have layout 1's width: the loops call it
    only where ``has_tail`` says so (no test in here: an early return in an inlined
    function keeps numba's reference counting of the record's arrays in the loop)."""
    ring, count, last_own, first, summary, o = pub
    n = cfg[K.C_N]
    o_drawn, o_since, o_suits, o_ranks, o_nom = o[0], o[1], o[2], o[3], o[4]
    o_seat, o_code, o_count, o_dropped, slots = o[5], o[6], o[7], o[8], o[9]
    s = observer
    for k in range(1, n):
        s += 1
        if s == n:
            s = 0
        row[o_drawn + k - 1] = size_tab[min(summary[b, S_DRAWN, s], DRAWN_CAP)]
        row[o_since + k - 1] = size_tab[min(summary[b, S_SINCE, s], DRAWN_CAP)]
        bits = summary[b, S_SUITS, s]
        base = o_suits + 4 * (k - 1)
        while bits:
            row[base + K.lowbit_index(bits)] = 1
            bits &= bits - 1
        bits = summary[b, S_RANKS, s]
        base = o_ranks + 13 * (k - 1)
        while bits:
            row[base + K.lowbit_index(bits)] = 1
            bits &= bits - 1
        nominated = summary[b, S_NOMINATED, s]
        if nominated >= 0:
            row[o_nom + 4 * (k - 1) + nominated] = 1
    total = count[b] - last_own[b, observer]
    shown = min(total, slots)
    rel = first[b, observer, 0] - observer
    row[o_seat] = ((rel + n if rel < 0 else rel) + 1) / SEAT_SCALE
    row[o_code] = (first[b, observer, 1] + 1) / CODE_SCALE
    row[o_count] = size_tab[first[b, observer, 2]]
    e = count[b] - (shown - 1)
    for i in range(1, shown):
        j = e & (RING - 1)
        rel = ring[b, j, 0] - observer
        row[o_seat + i] = ((rel + n if rel < 0 else rel) + 1) / SEAT_SCALE
        row[o_code + i] = (ring[b, j, 1] + 1) / CODE_SCALE
        row[o_count + i] = size_tab[ring[b, j, 2]]
        e += 1
    dropped = total - shown
    if dropped:
        row[o_dropped] = dropped / (dropped + DROPPED_SCALE)


@njit(cache=True, inline="always")
def record_action(pub, st, cfg, b, a):
    """Take in game ``b``'s legal action ``a`` before it is applied (by the loops of
    ``stepping``, which record no illegal one: a forfeit is no event)."""
    ring, pushed, last_own, first, summary, _ = pub
    p = st[b, K.CUR]
    code = a
    count = np.int64(0)
    if a < K.NUM_CARDS:
        summary[b, S_SINCE, p] = 0
        summary[b, S_SUITS, p] &= ~(np.int64(1) << (a // 13))
        summary[b, S_RANKS, p] &= ~(np.int64(1) << (a % 13))
    elif a == K.DRAW:
        pend = st[b, K.PEND]
        if st[b, K.PHASE] == K.PLAY and pend > 0:
            code = PENALTY
            want = 3 * (np.int64(1) << (pend - 1)) if cfg[K.C_DOUBLE] else 3 * pend
            summary[b, S_RANKS, p] |= np.int64(1) << K.SEVEN
        else:
            want = np.int64(1)
            _refuse(summary, st, b, p)
        count = _taken(st, cfg, b, want)
        summary[b, S_DRAWN, p] += count
        summary[b, S_SINCE, p] += count
    elif a == K.PASS:
        _refuse(summary, st, b, p)
    else:
        summary[b, S_NOMINATED, p] = a - K.NOMINATE_BASE
    last = (pushed[b] - 1) & (RING - 1)
    if code == K.DRAW and ring[b, last, 1] == K.DRAW and ring[b, last, 0] == p:
        ring[b, last, 2] += count  # the seat's run of draws goes on
    else:
        _push(ring, pushed, b, p, code, count)
    last_own[b, p] = pushed[b] - 1
    first[b, p, 0] = p
    first[b, p, 1] = code
    first[b, p, 2] = count


@njit(cache=True)
def has_tail(pub, rows):
    """Whether ``rows`` [K, L] are layout 1's (they have the record's tail), not layout
    0's (a seat shown v0 at a table keeping the record for its v1 seats)."""
    return rows.shape[1] > pub.offsets[0]


@njit(cache=True)
def observe_public(pub, st, cfg, games, seats, obs, size_tab):
    """``write_public`` for ``games[i]`` seen by ``seats[i]`` (``< 0``: the player to
    move) into ``obs[i]`` (after ``kernels.observe_games`` wrote its head)."""
    if not has_tail(pub, obs):
        return
    for i in range(games.shape[0]):
        b = games[i]
        seat = seats[i]
        write_public(pub, st, cfg, b, st[b, K.CUR] if seat < 0 else seat, obs[i], size_tab)

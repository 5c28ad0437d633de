"""The public record of layout 1 (``pis_yedili_v1``) for the batched engine, in numba.

``pis_env.events`` replays a ``GameState``'s history; the batched engine keeps no
history, so this module keeps, per game, what layout 1 needs and updates it as the
actions are applied (the loops of ``stepping`` call ``record_action``, ``new_deal``,
``new_match_record`` and ``write_public`` as they go): the per-seat summary of the
deal (cards drawn, drawn since the last play, refused suits and ranks as bit masks, the
latest nomination) and a ring of the last ``RING`` events of the match, already merged
(a seat's run of draws is one entry). Per seat, ``R_LAST`` is the entry holding its
latest action and ``R_FIRST`` a copy of that action as its window's first event (its own
share of a run of draws; the ring may have moved past it). All of it sits in one packed
int32 row per game (``R_PUSHED`` ...), so that the per-action update touches two or
three cache lines instead of one or two in each of five arrays. ``record_action``
reads the engine's state *before* the action, so counts follow the engine's ``_take``
from the stock and pile sizes, and refusals the engine's phase, top card and active
suit; ``new_deal`` and ``new_match_record`` follow the engine's deal and match starts.
``write_public`` writes the record of one seat into the tail of a row whose head
``kernels.write_obs`` wrote.
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
#: Layout-1 segments whose starts ``offsets`` holds, in this order (then the slot count).
SEGMENTS = ("opp_drawn", "opp_drawn_since_play", "opp_refused_suits", "opp_refused_ranks",
            "opp_nominated", "event_seat", "event_action", "event_count", "events_dropped")

# A game's record is one int32 row of ``WIDTH`` words, 64-byte aligned: the header
# (line 0: entries pushed, each seat's latest entry and its first event; line 1: the
# seats' summaries and nominations), then the ring. An action's update touches two or
# three cache lines of one row (five arrays of int64 and int8 took about ten).
R_PUSHED = 0           # entries pushed since the match began
R_LAST = 1             # 7 seats: the entry of the seat's latest action (0: none yet)
R_FIRST = 8            # 7 seats: that action as its window's first event (an entry)
R_SUMMARY = 16         # 7 seats: drawn | since << 6 | refused suits << 12 | ranks << 16
R_NOMINATED = 23       # 7 seats: the latest nomination (-1: none)
R_RING = 32            # RING entries
WIDTH = R_RING + RING
# An entry (ring and R_FIRST): absolute seat | event code << 3 | count << 9.
E_CODE, E_COUNT = 3, 9
# The summary's counts are kept capped at DRAWN_CAP, the most layout 1 shows
# (min(min(x, cap) + c, cap) == min(x + c, cap)), so each fits 6 bits.
SUM_SINCE, SUM_SUITS, SUM_RANKS = 6, 12, 16
COUNT_BITS = np.int64(63)
assert DRAWN_CAP <= COUNT_BITS and NEW_DEAL < 1 << (E_COUNT - E_CODE) \
    and K.MAX_PLAYERS <= 1 << E_CODE


class PublicRecord(NamedTuple):
    """The layout-1 record of B games."""

    rec: np.ndarray        # int32 [B, WIDTH] one row per game (R_PUSHED ... R_RING)
    offsets: np.ndarray    # [10] starts of SEGMENTS, then the number of event slots


def make_record(num_games: int, num_players: int, num_deals: int) -> PublicRecord:
    layout = _observation.Layout.of(num_players, num_deals, 1)
    offsets = [layout.offsets[name].start for name in SEGMENTS]
    offsets.append(_observation.event_slots(num_players))
    words = num_games * WIDTH
    buf = np.zeros(words + 16, np.int32)  # a row starts on a cache line
    skip = (-buf.ctypes.data % 64) // 4
    return PublicRecord(buf[skip:skip + words].reshape(num_games, WIDTH),
                        np.array(offsets, np.int64))


# The helpers below are inlined into the stepping loops. They take the record's arrays
# unpacked and never return early: an inlined function that reads a tuple's arrays field
# by field or returns from inside a branch keeps numba's reference counting of those
# arrays in the loop (measured 2-3x slower).
@njit(cache=True, inline="always")
def _entry(seat, code, count):
    return seat | (code << E_CODE) | (count << E_COUNT)


@njit(cache=True, inline="always")
def _push(rec, b, entry):
    pushed = rec[b, R_PUSHED]
    rec[b, R_RING + (pushed & (RING - 1))] = entry
    rec[b, R_PUSHED] = pushed + 1


@njit(cache=True, inline="always")
def new_deal(pub, st, b):
    """The deal just dealt in game ``b``: its marker, a fresh summary."""
    rec, _ = pub
    for s in range(K.MAX_PLAYERS):
        rec[b, R_SUMMARY + s] = 0
        rec[b, R_NOMINATED + s] = -1
    _push(rec, b, _entry(st[b, K.DEALER], NEW_DEAL, 0))


@njit(cache=True, inline="always")
def new_match_record(pub, st, b):
    """The match just started in game ``b``: an empty ring, then its first deal."""
    rec, _ = pub
    rec[b, R_PUSHED] = 0
    new_deal(pub, st, b)
    marker = _entry(st[b, K.DEALER], NEW_DEAL, 0)
    for s in range(K.MAX_PLAYERS):
        rec[b, R_LAST + s] = 0
        rec[b, R_FIRST + s] = marker


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
def _refused(st, b):
    """The summary bits a draw or pass refuses: the active suit (clubs in the opening)
    and, unless the top card is a Jack, its rank and the Jacks."""
    if st[b, K.PHASE] == K.OPENING:
        return np.int64(1) << SUM_SUITS  # clubs
    bits = np.int64(1) << (SUM_SUITS + st[b, K.SUIT])
    rank = st[b, K.TOP] % 13
    if rank != K.JACK:
        bits |= (np.int64(1) << (SUM_RANKS + rank)) | (np.int64(1) << (SUM_RANKS + K.JACK))
    return bits


@njit(cache=True, inline="always")
def write_public(pub, st, cfg, b, observer, row, size_tab):
    """Layout 1's record of game ``b`` seen by ``observer`` into ``row``'s tail (zeros).
    ``size_tab[k]`` is ``k / 52`` in the row's dtype (the head's table: the same values
    as the encoder's division). ``row`` must have layout 1's width: the loops call it
    only where ``has_tail`` says so (no test in here: an early return in an inlined
    function keeps numba's reference counting of the record's arrays in the loop)."""
    rec, o = pub
    n = cfg[K.C_N]
    o_drawn, o_since, o_suits, o_ranks, o_nom = o[0], o[1], o[2], o[3], o[4]
    o_seat, o_code, o_count, o_dropped, slots = o[5], o[6], o[7], o[8], o[9]
    s = observer
    for k in range(1, n):
        s += 1
        if s == n:
            s = 0
        word = np.int64(rec[b, R_SUMMARY + s])
        row[o_drawn + k - 1] = size_tab[word & COUNT_BITS]
        row[o_since + k - 1] = size_tab[(word >> SUM_SINCE) & COUNT_BITS]
        # Every bit written, zeros too: a loop of fixed length, without the branch
        # mispredictions of a loop over the set bits.
        base = o_suits + 4 * (k - 1)
        for i in range(4):
            row[base + i] = (word >> (SUM_SUITS + i)) & 1
        base = o_ranks + 13 * (k - 1)
        for i in range(13):
            row[base + i] = (word >> (SUM_RANKS + i)) & 1
        nominated = rec[b, R_NOMINATED + s]
        base = o_nom + 4 * (k - 1)
        for i in range(4):
            row[base + i] = nominated == i
    pushed = np.int64(rec[b, R_PUSHED])
    total = pushed - rec[b, R_LAST + observer]
    shown = min(total, slots)
    entry = np.int64(rec[b, R_FIRST + observer])
    rel = (entry & 7) - observer
    row[o_seat] = ((rel + n if rel < 0 else rel) + 1) / SEAT_SCALE
    row[o_code] = (((entry >> E_CODE) & 63) + 1) / CODE_SCALE
    row[o_count] = size_tab[entry >> E_COUNT]
    e = pushed - (shown - 1)
    for i in range(1, shown):
        entry = np.int64(rec[b, R_RING + (e & (RING - 1))])
        rel = (entry & 7) - observer
        row[o_seat + i] = ((rel + n if rel < 0 else rel) + 1) / SEAT_SCALE
        row[o_code + i] = (((entry >> E_CODE) & 63) + 1) / CODE_SCALE
        row[o_count + i] = size_tab[entry >> E_COUNT]
        e += 1
    dropped = total - shown
    if dropped:
        row[o_dropped] = dropped / (dropped + DROPPED_SCALE)


@njit(cache=True, inline="always")
def record_action(pub, st, cfg, b, a):
    """Take in game ``b``'s legal action ``a`` before it is applied (by the loops of
    ``stepping``, which record no illegal one: a forfeit is no event)."""
    rec, _ = pub
    p = st[b, K.CUR]
    code = a
    count = np.int64(0)
    word = np.int64(rec[b, R_SUMMARY + p])
    if a < K.NUM_CARDS:
        word &= ~((COUNT_BITS << SUM_SINCE) | (np.int64(1) << (SUM_SUITS + a // 13))
                  | (np.int64(1) << (SUM_RANKS + a % 13)))
    elif a == K.DRAW:
        pend = st[b, K.PEND]
        if st[b, K.PHASE] == K.PLAY and pend > 0:
            code = PENALTY
            want = 3 * (np.int64(1) << (pend - 1)) if cfg[K.C_DOUBLE] else 3 * pend
            word |= np.int64(1) << (SUM_RANKS + K.SEVEN)
        else:
            want = np.int64(1)
            word |= _refused(st, b)
        count = _taken(st, cfg, b, want)
        drawn = min((word & COUNT_BITS) + count, DRAWN_CAP)
        since = min(((word >> SUM_SINCE) & COUNT_BITS) + count, DRAWN_CAP)
        word = (word & ~(COUNT_BITS | (COUNT_BITS << SUM_SINCE))) | drawn \
            | (since << SUM_SINCE)
    elif a == K.PASS:
        word |= _refused(st, b)
    else:
        rec[b, R_NOMINATED + p] = a - K.NOMINATE_BASE
    rec[b, R_SUMMARY + p] = word
    entry = _entry(p, code, count)
    pushed = np.int64(rec[b, R_PUSHED])
    last = R_RING + ((pushed - 1) & (RING - 1))
    head = (np.int64(1) << E_COUNT) - 1  # the entry's seat and code
    if code == K.DRAW and rec[b, last] & head == entry & head:
        rec[b, last] += count << E_COUNT  # the seat's run of draws goes on
    else:
        rec[b, R_RING + (pushed & (RING - 1))] = entry
        pushed += 1
        rec[b, R_PUSHED] = pushed
    rec[b, R_LAST + p] = pushed - 1
    rec[b, R_FIRST + p] = entry


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

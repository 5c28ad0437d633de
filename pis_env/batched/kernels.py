"""The numba kernels of the batched engine: every rule of ``pis_env.engine`` over arrays.

This module imports numba (an optional dependency); ``pis_env`` itself never imports it.
Every kernel is ``@njit(cache=True)``: the first import in a fresh environment compiles
for a few seconds, later processes load machine code from ``__pycache__``.

State layout. One match per row of four arrays (see :data:`FIELDS`):

* ``st``    int64[B, NF]  scalar fields and per-seat fields (hands are 52-bit masks in
  int64, so every bit operation stays in signed 64-bit arithmetic, which numba keeps
  integral; action masks use bits 0..57);
* ``stock`` int8[B, 52]   the stock of the current deal: ``stock[b, st[b, SPOS]]`` is the
  next card drawn and ``st[b, SLEN]`` the end (a stacked deck is stored whole, the stock
  starting at ``7 n``; a reshuffle writes the new stock at 0);
* ``decks`` int8[B, D, 52] stacked decks for the deals of the match (``st[b, NSTACK]`` of
  them; deals beyond are shuffled from the game's RNG);
* ``rng``   uint64[B]     one splitmix64 stream per game (deck shuffles, dealers,
  reshuffles): a game's randomness does not depend on the batch it sits in.

``cfg`` is an int64 vector of the rules (see :data:`CFG`), so one compilation serves all
variants. All kernels loop over the batch in one thread; B in the thousands amortises the
call overhead.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from .. import actions as _actions
from .. import cards as _cards
from .. import engine as _engine
from .. import observation as _observation
from ..scoring import (
    FORFEIT_FACTOR,
    FORFEIT_FINE,
    JACK_MULTIPLIER,
    POINTS_SCALE,
    SEVEN_MULTIPLIER,
)

# ---------------------------------------------------------------------- constants
# Every fact below is imported from the module that owns it (cards, action ids, phases,
# end reasons, the observation layout) and only turned into the int64 scalars and arrays
# that numba freezes into the machine code.
NUM_ACTIONS, NOMINATE_BASE, DRAW, PASS = _actions.NUM_ACTIONS, _actions.NOMINATE_BASE, \
    _actions.DRAW, _actions.PASS
NUM_CARDS, MAX_PLAYERS, CARDS_PER_HAND = _cards.NUM_CARDS, _cards.MAX_PLAYERS, \
    _cards.CARDS_PER_HAND
OPENING, PLAY, NOMINATE, ACE_PHASE = _engine.OPENING, _engine.PLAY, _engine.NOMINATE, \
    _engine.ACE_PHASE
JACK, SEVEN, EIGHT, TEN, ACE = _cards.JACK, _cards.SEVEN, _cards.EIGHT, _cards.TEN, _cards.ACE

# Why a deal ended (``st[b, REASON]``): the index of the engine's string in REASON_NAMES.
REASON_NAMES = (None, _engine.GOING_OUT, _engine.EMPTY_STOCK, _engine.ILLEGAL,
                _engine.TRUNCATED)
NOT_OVER, GOING_OUT, EMPTY_STOCK, ILLEGAL, TRUNCATED = range(len(REASON_NAMES))

# Fields of ``st``.
CUR, PHASE, TOP, SUIT, PEND, DRAWN, DIR, DEALER, OPENED, TURNS = range(10)
OVER, MOVER, REASON, SPOS, SLEN, PILE, LEGAL, DEAL, NSTACK, NEXTDECK = range(10, 20)
LAST = 20          # the seat that made the last decision (for terminal observations)
HAND = 21          # 7 seats
DREW = HAND + MAX_PLAYERS    # 7 seats: suits (bits) active when the seat drew
TOTAL = DREW + MAX_PLAYERS   # 7 seats: match totals
NF = TOTAL + MAX_PLAYERS
FIELDS = {
    "current": CUR, "phase": PHASE, "top": TOP, "active_suit": SUIT,
    "pending_sevens": PEND, "has_drawn": DRAWN, "direction": DIR, "dealer": DEALER,
    "opened": OPENED, "turns": TURNS, "deal_over": OVER, "match_over": MOVER,
    "end_reason": REASON, "stock_pos": SPOS, "stock_end": SLEN, "pile": PILE,
    "legal": LEGAL, "deal_index": DEAL, "stacked": NSTACK, "next_deck": NEXTDECK,
    "last": LAST, "hands": HAND, "drew_on": DREW, "totals": TOTAL,
}

# Entries of ``cfg``: the rules, then the starts of the observation segments whose place
# depends on the table size (``Layout.of(n, num_deals)``; -1 when absent).
C_N, C_DRAW, C_DOUBLE, C_CONTINUE, C_OTHER, C_FIRST_ROUND, C_RESHUFFLE = range(7)
C_DEALS, C_MAX_TURNS, C_WIN, C_TERMINATE = range(7, 11)
C_O_STOCK, C_O_DISCARD, C_O_DREW, C_O_DEAL, C_O_SCORES = range(11, 16)
NCFG = 16
CFG = ("num_players", "draw_rule", "seven_penalty", "after_penalty", "nominate", "opening",
       "empty_stock", "num_deals", "max_turns", "reward", "illegal_action")
#: The segments whose start ``cfg`` holds, in the order of ``C_O_STOCK`` ...
CFG_SEGMENTS = ("stock_size", "discard", "drew_on_suit", "deal", "scores")

DRAW_BIT = np.int64(_actions.DRAW_BIT)
PASS_BIT = np.int64(_actions.PASS_BIT)
NOMINATE_BITS = np.int64(_actions.NOMINATE_BITS)
SUIT_MASKS = np.array(_cards.SUIT_MASKS, dtype=np.int64)
RANK_MASKS = np.array(_cards.RANK_MASKS, dtype=np.int64)
JACKS = RANK_MASKS[JACK]
SEVENS = RANK_MASKS[SEVEN]
ACE_EXTRA = RANK_MASKS[ACE] | JACKS
RANK_POINTS = np.array(_cards.RANK_POINTS, dtype=np.int64)
CARD_POINTS = np.array(_cards.CARD_POINTS, dtype=np.int64)
# Points of every 13-bit suit chunk: a hand's points are four look-ups.
CHUNK_POINTS = np.array([_cards.points_of(m) for m in range(1 << 13)], dtype=np.int64)
CHUNK = np.int64((1 << 13) - 1)

# Starts of the observation segments that come before ``hand_sizes``: their place does not
# depend on the table size, so they are compile-time constants.
_FIXED = _observation.Layout.of(2).offsets
O_HAND, O_TOP, O_SUIT, O_PEND, O_PHASE, O_DRAWN, O_DIR, O_SIZES = (
    _FIXED[name].start for name in ("hand", "top_card", "active_suit", "pending_sevens",
                                    "phase", "has_drawn", "direction", "hand_sizes"))
MAX_PENDING_SEVENS = _observation.MAX_PENDING_SEVENS
SCORE_SCALE = _observation.SCORE_SCALE


def layout_starts(n: int, num_deals: int) -> list[int]:
    """The ``cfg`` entries ``C_O_STOCK`` ... : where :data:`CFG_SEGMENTS` start."""
    offsets = _observation.Layout.of(n, num_deals).offsets
    return [offsets[name].start if name in offsets else -1 for name in CFG_SEGMENTS]


def obs_size(n: int, num_deals: int) -> int:
    """Observation length for ``n`` players and ``num_deals`` deals (``Layout.size``)."""
    return _observation.Layout.of(n, num_deals).size


# ---------------------------------------------------------------------- state bundles
class Batch(NamedTuple):
    """The arrays of a batch of matches, passed to the stepping kernels as one value (as
    pgx passes one ``State``): the rows of :data:`FIELDS`, the stocks, the stacked decks,
    the RNG streams, the rules vector and the observation value table (``size_tab[k]`` is
    what a count ``k`` is written as)."""

    st: np.ndarray
    stock: np.ndarray
    decks: np.ndarray
    rng: np.ndarray
    cfg: np.ndarray
    size_tab: np.ndarray


class StepOut(NamedTuple):
    """Where a step writes its per-game results: why a deal ended, whether the match
    did, the ended deal's charges, winners and rewards, and the observations and masks of
    the players to move (zero-row arrays: not written)."""

    reason: np.ndarray
    done: np.ndarray
    charges: np.ndarray
    winners: np.ndarray
    rewards: np.ndarray
    obs: np.ndarray
    masks: np.ndarray


class LearnerSeats(NamedTuple):
    """``BatchedEnv``'s side of ``stepping.env_advance``: the learner's seat per game
    (``learner[b]``: seat, redraw, fresh), the opponents' kinds and RNG streams, the
    rewards owed to the learner, which games wait on an outside policy, the decision
    counters, the record of every finished match (``term_*``), the opponent mix
    (``mix_cum`` / ``mix_table``, empty: none) and ``skip_forced``."""

    learner: np.ndarray
    kinds: np.ndarray
    opp_rng: np.ndarray
    seat_rng: np.ndarray
    reward: np.ndarray
    carry: np.ndarray
    wait: np.ndarray
    decisions: np.ndarray
    term_obs: np.ndarray
    term_totals: np.ndarray
    term_kinds: np.ndarray
    term_st: np.ndarray
    term_stock: np.ndarray
    mix_cum: np.ndarray
    mix_table: np.ndarray
    mix_per_game: bool
    mix_rng: np.ndarray
    skip_forced: bool


# ---------------------------------------------------------------------- bit helpers
@intrinsic
def popcount(typingctx, x):
    """Number of set bits of an integer (LLVM ``ctpop``), as int64."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        res = builder.ctpop(args[0])
        return context.cast(builder, res, x, types.int64)

    return types.int64(x), codegen


@intrinsic
def lowbit_index(typingctx, x):
    """Index of the lowest set bit (LLVM ``cttz``), as int64; ``x`` must be non-zero."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        from llvmlite import ir

        res = builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
        return context.cast(builder, res, x, types.int64)

    return types.int64(x), codegen


@njit(cache=True, inline="always")
def points_of(hand):
    return (CHUNK_POINTS[hand & CHUNK] + CHUNK_POINTS[(hand >> 13) & CHUNK]
            + CHUNK_POINTS[(hand >> 26) & CHUNK] + CHUNK_POINTS[(hand >> 39) & CHUNK])


@njit(cache=True, inline="always")
def nth_bit(mask, k):
    """Index of the ``k``-th (0-based, ascending) set bit of ``mask``."""
    for _ in range(k):
        mask &= mask - 1
    return lowbit_index(mask)


# ---------------------------------------------------------------------- RNG
@njit(cache=True, inline="always")
def rand_u64(rng, b):
    """splitmix64: the next 64 random bits of game ``b``'s stream."""
    z = rng[b] + np.uint64(0x9E3779B97F4A7C15)
    rng[b] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def rand_unit(rng, b):
    """A uniform float in ``[0, 1)`` from game ``b``'s stream (53 random bits)."""
    return np.float64(rand_u64(rng, b) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def rand_below(rng, b, n):
    """A uniform int in ``[0, n)`` (Lemire's multiply-shift on 32 random bits)."""
    z = rand_u64(rng, b) >> np.uint64(32)
    return np.int64((z * np.uint64(n)) >> np.uint64(32))


@njit(cache=True)
def seed_streams(rng, seeds):
    """``rng[i]`` from ``seeds[i]`` (hashed, so that nearby seeds give unrelated streams)."""
    for i in range(seeds.shape[0]):
        rng[i] = np.uint64(seeds[i])
        rand_u64(rng, i)
        rng[i] = rand_u64(rng, i)


# ---------------------------------------------------------------------- rules
@njit(cache=True, inline="always")
def legal_of(st, b, cfg):
    """The legal action mask of game ``b`` (``GameState.legal_mask``)."""
    if st[b, OVER]:
        return np.int64(0)
    phase = st[b, PHASE]
    hand = st[b, HAND + st[b, CUR]]
    if phase == PLAY:
        if st[b, PEND] > 0:
            return (hand & SEVENS) | DRAW_BIT
        top_rank = st[b, TOP] % 13
        if top_rank == JACK:
            cards = hand & SUIT_MASKS[st[b, SUIT]] & ~JACKS
        else:
            cards = hand & (SUIT_MASKS[st[b, SUIT]] | RANK_MASKS[top_rank] | JACKS)
        rule = cfg[C_DRAW]
        if rule == 0:
            legal = cards | DRAW_BIT
            if st[b, DRAWN]:
                legal |= PASS_BIT
            return legal
        if rule == 1:
            return cards | (PASS_BIT if st[b, DRAWN] else DRAW_BIT)
        return cards if cards != 0 else DRAW_BIT
    if phase == OPENING:
        clubs = hand & SUIT_MASKS[0]
        return clubs if clubs != 0 else DRAW_BIT
    if phase == NOMINATE:
        if cfg[C_OTHER]:
            return NOMINATE_BITS & ~(np.int64(1) << (NOMINATE_BASE + st[b, SUIT]))
        return NOMINATE_BITS
    return (hand & (SUIT_MASKS[st[b, SUIT]] | ACE_EXTRA)) | PASS_BIT


@njit(cache=True)
def _shuffle_deck(stock, rng, b):
    for i in range(NUM_CARDS):
        stock[b, i] = i
    for i in range(NUM_CARDS - 1, 0, -1):
        j = rand_below(rng, b, i + 1)
        t = stock[b, i]
        stock[b, i] = stock[b, j]
        stock[b, j] = t


@njit(cache=True)
def start_deal(st, stock, decks, rng, cfg, b, dealer):
    """Deal the next deal of game ``b`` (``GameState._start_deal``); ``dealer < 0``
    draws the dealer from the game's RNG."""
    n = cfg[C_N]
    k = st[b, NEXTDECK]
    if k < st[b, NSTACK]:
        for i in range(NUM_CARDS):
            stock[b, i] = decks[b, k, i]
        st[b, NEXTDECK] = k + 1
    else:
        _shuffle_deck(stock, rng, b)
    if dealer < 0:
        dealer = rand_below(rng, b, n)
    st[b, DEAL] += 1
    st[b, DEALER] = dealer
    for i in range(MAX_PLAYERS):
        st[b, HAND + i] = 0
        st[b, DREW + i] = 0
    seat = (dealer + 1) % n
    for i in range(CARDS_PER_HAND * n):
        st[b, HAND + seat] |= np.int64(1) << np.int64(stock[b, i])
        seat += 1
        if seat == n:
            seat = 0
    st[b, SPOS] = CARDS_PER_HAND * n
    st[b, SLEN] = NUM_CARDS
    st[b, PILE] = 0
    st[b, TOP] = -1
    st[b, SUIT] = 0
    st[b, PEND] = 0
    st[b, PHASE] = OPENING
    st[b, DRAWN] = 0
    st[b, DIR] = 1
    st[b, CUR] = (dealer + 1) % n
    st[b, LAST] = st[b, CUR]
    st[b, OPENED] = 0
    st[b, TURNS] = 0
    st[b, OVER] = 0
    st[b, REASON] = NOT_OVER
    st[b, LEGAL] = legal_of(st, b, cfg)


@njit(cache=True)
def new_match(st, stock, decks, rng, cfg, b, dealer):
    """Start a new match in game ``b``: totals zero, the first deal dealt."""
    st[b, DEAL] = -1
    st[b, MOVER] = 0
    st[b, NEXTDECK] = 0
    for i in range(MAX_PLAYERS):
        st[b, TOTAL + i] = 0
    start_deal(st, stock, decks, rng, cfg, b, dealer)


@njit(cache=True)
def reset_games(st, stock, decks, rng, cfg, games, dealers):
    """New matches in ``games`` (indices); ``dealers[i] < 0`` draws the dealer."""
    for i in range(games.shape[0]):
        new_match(st, stock, decks, rng, cfg, games[i], dealers[i])


@njit(cache=True, inline="always")
def _advance(st, b, steps, cfg):
    n = cfg[C_N]
    p = (st[b, CUR] + steps * st[b, DIR]) % n
    if p < 0:
        p += n
    st[b, CUR] = p
    st[b, DRAWN] = 0
    if cfg[C_FIRST_ROUND]:
        st[b, PHASE] = PLAY if (st[b, OPENED] >> p) & 1 else OPENING
    else:
        st[b, PHASE] = PLAY if st[b, OPENED] != 0 else OPENING


@njit(cache=True)
def _end_deal(st, b, cfg, reason, out_charges, out_winners, out_rewards):
    """Record the end of a deal whose charges and winners the caller wrote into
    ``out_charges[b]`` / ``out_winners[b]``: totals, rewards (``deal_rewards``). (In place,
    with no array of its own: the stepping loops are compiled without numba's reference
    counting, ``stepping``, and so is everything they call.)"""
    n = cfg[C_N]
    st[b, OVER] = 1
    st[b, REASON] = reason
    st[b, LEGAL] = 0
    total = 0
    num_winners = 0
    for i in range(n):
        st[b, TOTAL + i] += out_charges[b, i]
        total += out_charges[b, i]
        num_winners += out_winners[b, i]
    if reason == ILLEGAL or reason == TRUNCATED or st[b, DEAL] >= cfg[C_DEALS] - 1:
        st[b, MOVER] = 1
    for i in range(n):
        if reason == TRUNCATED:
            out_rewards[b, i] = 0.0
        elif cfg[C_WIN] == 0:
            c = out_charges[b, i]
            out_rewards[b, i] = ((total - c) / (n - 1) - c) / POINTS_SCALE
        elif num_winners == 0 or num_winners == n:
            out_rewards[b, i] = 0.0
        elif out_winners[b, i]:
            out_rewards[b, i] = 1.0 / num_winners
        else:
            out_rewards[b, i] = -1.0 / (n - num_winners)


@njit(cache=True)
def _end_by_empty_stock(st, b, cfg, out_charges, out_winners, out_rewards):
    n = cfg[C_N]
    low = np.int64(1) << 40
    for i in range(n):
        low = min(low, points_of(st[b, HAND + i]))
    for i in range(n):
        points = points_of(st[b, HAND + i])
        out_winners[b, i] = points == low
        out_charges[b, i] = 0 if points == low else points
    _end_deal(st, b, cfg, np.int64(EMPTY_STOCK), out_charges, out_winners, out_rewards)


@njit(cache=True)
def _refill_stock(st, stock, rng, b):
    """The reshuffle variant: the pile but its top card becomes the new stock."""
    top = st[b, TOP]
    rest = st[b, PILE] & ~(np.int64(1) << top)
    k = 0
    while rest:
        stock[b, k] = lowbit_index(rest)
        rest &= rest - 1
        k += 1
    for i in range(k - 1, 0, -1):
        j = rand_below(rng, b, i + 1)
        t = stock[b, i]
        stock[b, i] = stock[b, j]
        stock[b, j] = t
    st[b, SPOS] = 0
    st[b, SLEN] = k
    st[b, PILE] = np.int64(1) << top


@njit(cache=True, inline="always")
def _take(st, stock, rng, cfg, b, p, count, out_charges, out_winners, out_rewards):
    """Move ``count`` cards from the stock to seat ``p``; False when the deal ended."""
    hand = st[b, HAND + p]
    for _ in range(count):
        pos = st[b, SPOS]
        hand |= np.int64(1) << np.int64(stock[b, pos])
        st[b, SPOS] = pos + 1
        if pos + 1 == st[b, SLEN]:
            if cfg[C_RESHUFFLE] and popcount(st[b, PILE]) >= 2:
                _refill_stock(st, stock, rng, b)
            else:
                st[b, HAND + p] = hand
                _end_by_empty_stock(st, b, cfg, out_charges, out_winners, out_rewards)
                return False
    st[b, HAND + p] = hand
    return True


@njit(cache=True)
def _end_by_going_out(st, b, cfg, p, mult, out_charges, out_winners, out_rewards):
    for i in range(cfg[C_N]):
        out_charges[b, i] = points_of(st[b, HAND + i]) * mult
        out_winners[b, i] = i == p
    _end_deal(st, b, cfg, np.int64(GOING_OUT), out_charges, out_winners, out_rewards)


@njit(cache=True)
def _end_by_truncation(st, b, cfg, out_charges, out_winners, out_rewards):
    for i in range(cfg[C_N]):
        out_charges[b, i] = 0
        out_winners[b, i] = 0
    _end_deal(st, b, cfg, np.int64(TRUNCATED), out_charges, out_winners, out_rewards)


@njit(cache=True)
def _forfeit(st, b, cfg, out_charges, out_winners, out_rewards):
    p = st[b, CUR]
    for i in range(cfg[C_N]):
        out_charges[b, i] = 0
        out_winners[b, i] = i != p
    out_charges[b, p] = FORFEIT_FACTOR * points_of(st[b, HAND + p]) + FORFEIT_FINE
    _end_deal(st, b, cfg, np.int64(ILLEGAL), out_charges, out_winners, out_rewards)


@njit(cache=True, inline="always")
def apply_action(st, stock, rng, cfg, b, a, out_charges, out_winners, out_rewards):
    """Apply action ``a`` of the current player of game ``b`` (``GameState.apply``; an
    illegal action forfeits as ``GameState.forfeit``). The deal may end here."""
    p = st[b, CUR]
    st[b, LAST] = p
    if a < 0 or a >= NUM_ACTIONS or not (st[b, LEGAL] >> a) & 1:
        _forfeit(st, b, cfg, out_charges, out_winners, out_rewards)
        return
    st[b, TURNS] += 1
    steps = 0  # how far play moves on after the action (one call site: inlined once)
    if a < NUM_CARDS:
        bit = np.int64(1) << a
        hand = st[b, HAND + p] ^ bit
        st[b, HAND + p] = hand
        st[b, PILE] |= bit
        st[b, TOP] = a
        suit = a // 13
        rank = a - 13 * suit
        st[b, DREW + p] &= ~(np.int64(1) << suit)
        if st[b, PHASE] == OPENING:
            st[b, OPENED] |= np.int64(1) << p
            st[b, SUIT] = suit
            steps = 1
        elif hand == 0:
            if rank != JACK:
                st[b, SUIT] = suit
            mult = (SEVEN_MULTIPLIER if rank == SEVEN else JACK_MULTIPLIER if rank == JACK
                    else 1)
            _end_by_going_out(st, b, cfg, p, mult, out_charges, out_winners, out_rewards)
        elif rank == JACK:
            st[b, PHASE] = NOMINATE
        else:
            st[b, SUIT] = suit
            if rank == SEVEN:
                st[b, PEND] += 1
                steps = 1
            elif rank == EIGHT:
                steps = 2
            elif rank == TEN:
                st[b, DIR] = -st[b, DIR]
                steps = 1
            elif rank == ACE:
                st[b, PHASE] = ACE_PHASE
            else:
                steps = 1
    elif a == DRAW:
        penalty = st[b, PHASE] == PLAY and st[b, PEND] > 0
        if penalty:
            k = st[b, PEND]
            count = 3 * (np.int64(1) << (k - 1)) if cfg[C_DOUBLE] else 3 * k
            st[b, PEND] = 0
        else:
            count = np.int64(1)
            st[b, DREW + p] |= np.int64(1) << st[b, SUIT]
        if _take(st, stock, rng, cfg, b, p, count, out_charges, out_winners, out_rewards):
            if penalty and not cfg[C_CONTINUE]:
                steps = 1
            else:
                st[b, DRAWN] = 1
    elif a == PASS:
        steps = 1
    else:
        st[b, SUIT] = a - NOMINATE_BASE
        steps = 1
    if steps:
        _advance(st, b, steps, cfg)
    if st[b, OVER] == 0:
        if cfg[C_MAX_TURNS] > 0 and st[b, TURNS] >= cfg[C_MAX_TURNS]:
            _end_by_truncation(st, b, cfg, out_charges, out_winners, out_rewards)
        else:
            st[b, LEGAL] = legal_of(st, b, cfg)


# ---------------------------------------------------------------------- observations
@njit(cache=True, inline="always")
def _write_bits(row, start, mask):
    # Through a slice, so that the index is a plain range (no negative-index wraparound
    # test per element) and LLVM vectorises the loop.
    sub = row[start:start + NUM_CARDS]
    for i in range(NUM_CARDS):
        sub[i] = (mask >> i) & 1


@njit(cache=True, inline="always")
def write_obs(st, cfg, b, observer, row, size_tab):
    """``ObservationEncoder.encode(state, observer)`` of game ``b`` into ``row``.

    ``size_tab[k]`` is the value written for a count ``k`` (``k / 52`` in float
    observations, ``k`` in uint8 ones); match scores are ``t / (t + 100)`` (float) or
    ``round(255 t / (t + 100))`` (uint8)."""
    n = cfg[C_N]
    deals = cfg[C_DEALS]
    # The layout's starts, read before the first store into ``row`` (after it, LLVM would
    # reload them from ``cfg`` for every write: it cannot tell the two arrays apart).
    o_stock = cfg[C_O_STOCK]
    o_discard = cfg[C_O_DISCARD]
    o_drew = cfg[C_O_DREW]
    o_deal = cfg[C_O_DEAL]
    o_scores = cfg[C_O_SCORES]
    row[:] = 0
    _write_bits(row, O_HAND, st[b, HAND + observer])
    top = st[b, TOP]
    if top >= 0:
        row[O_TOP + top] = 1
    row[O_SUIT + st[b, SUIT]] = 1
    row[O_PEND + st[b, PEND]] = 1
    row[O_PHASE + st[b, PHASE]] = 1
    if st[b, DRAWN] and st[b, CUR] == observer:
        row[O_DRAWN] = 1
    if st[b, DIR] == 1:
        row[O_DIR] = 1
    seat = observer
    for k in range(n):
        row[O_SIZES + k] = size_tab[popcount(st[b, HAND + seat])]
        if k:
            suits = st[b, DREW + seat]
            base = o_drew + 4 * (k - 1)
            for s in range(4):
                if (suits >> s) & 1:
                    row[base + s] = 1
        seat += 1
        if seat == n:
            seat = 0
    row[o_stock] = size_tab[st[b, SLEN] - st[b, SPOS]]
    _write_bits(row, o_discard, st[b, PILE])
    if deals > 1:
        row[o_deal + st[b, DEAL]] = 1
        seat = observer
        for k in range(n):
            t = st[b, TOTAL + seat]
            v = t / (t + SCORE_SCALE)
            if size_tab[1] == 1:  # uint8 observations
                row[o_scores + k] = np.int64(v * 255.0 + 0.5)
            else:
                row[o_scores + k] = v
            seat += 1
            if seat == n:
                seat = 0


@njit(cache=True, inline="always")
def write_mask(legal, row):
    for i in range(NUM_ACTIONS):
        row[i] = (legal >> i) & 1


@njit(cache=True)
def observe_games(st, cfg, games, seats, obs, size_tab):
    """Observations of ``games[i]`` seen by ``seats[i]`` (``< 0``: the current player)
    into ``obs[i]``."""
    for i in range(games.shape[0]):
        b = games[i]
        seat = seats[i]
        write_obs(st, cfg, b, st[b, CUR] if seat < 0 else seat, obs[i], size_tab)


@njit(cache=True)
def masks_of(st, games, masks):
    """Legal action masks of the current players of ``games`` into ``masks[i]``."""
    for i in range(games.shape[0]):
        write_mask(st[games[i], LEGAL], masks[i])


# ---------------------------------------------------------------------- stepping
@njit(cache=True)
def check_actions(st, actions, allow_illegal):
    """0 when every action can be applied (``< 0``: skip the game); else ``1 + b`` for
    the first game ``b`` whose action is illegal (unless ``allow_illegal``), or
    ``-(1 + b)`` for one whose match is over."""
    for b in range(actions.shape[0]):
        a = actions[b]
        if a < 0:
            continue
        if st[b, MOVER]:
            return -(b + 1)
        if not allow_illegal and (a >= NUM_ACTIONS or not (st[b, LEGAL] >> a) & 1):
            return b + 1
    return 0


# ---------------------------------------------------------------------- policies
@njit(cache=True, inline="always")
def random_action(legal, rng, b):
    if legal == 0:
        return -1
    return nth_bit(legal, rand_below(rng, b, popcount(legal)))


@njit(cache=True)
def random_actions(st, rng, out):
    """A uniformly random legal action per game (``-1`` where the match is over)."""
    for b in range(out.shape[0]):
        out[b] = random_action(st[b, LEGAL], rng, b)




# ---------------------------------------------------------------------- learner env
# What ``BatchedEnv``'s loop reads (``stepping.env_advance``, with the public record it keeps
# at layout 1). ``learner[b]``: (seat, redraw the seat for every new match, fresh).
# ``fresh``: the learner has not decided yet in the current match.
L_SEAT, L_REDRAW, L_FRESH = 0, 1, 2
# Opponent kinds: 0 random legal play (in the kernel); >= EXTERNAL a policy outside the
# kernel (the bots live above this package: ``BatchedEnv`` calls them between rounds).
RANDOM, EXTERNAL = 0, 1


@njit(cache=True)
def draw_learner_seats(learner, seat_rng, n):
    """A new match for every game: seats redrawn where ``learner[b, L_REDRAW]``."""
    for b in range(learner.shape[0]):
        if learner[b, L_REDRAW]:
            learner[b, L_SEAT] = rand_below(seat_rng, b, n)
        learner[b, L_FRESH] = 1


@njit(cache=True, inline="always")
def draw_opponents(kinds, b, n, cum, table, per_game, rng):
    """Opponent kinds of game ``b`` for a new match, drawn from a mix (``table[j]`` with
    cumulative probability ``cum[j]``): one draw per seat, or one for all seats when
    ``per_game`` (the learner's entry is drawn too but never read)."""
    k = table[0]
    for seat in range(n):
        if seat == 0 or not per_game:
            u = rand_unit(rng, b)
            j = 0
            while j < cum.shape[0] - 1 and u >= cum[j]:
                j += 1
            k = table[j]
        kinds[b, seat] = k


@njit(cache=True)
def draw_all_opponents(kinds, n, cum, table, per_game, rng):
    """:func:`draw_opponents` for every game."""
    for b in range(kinds.shape[0]):
        draw_opponents(kinds, b, n, cum, table, per_game, rng)

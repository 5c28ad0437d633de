"""The model set's styles (``agents.panel.styles``) ported to numba: one kernel call
decides for every game of a ``pis_env.batched.BatchedGame`` (or every state row of the
particle filter's worlds).

``choose`` is ``agents.panel.styles.choose`` on int64 bit masks, dispatching on the style
id, with the same tie-breaks (the lowest card id); ``mix`` is ``styles.mixed_action``.
``tests/agents/panel/test_panel.py`` holds every style equal to its Python bot on positions of
random and self-play deals.

``PanelPolicy(num_games, style, epsilon=0.0, seed=None)`` is the batched bot:

* ``policy(game)`` / ``policy.from_game(game)``: actions [B] for the current players of a
  ``BatchedGame`` (``-1`` where the match is over), the form the search's rollouts call;
* ``policy.state_actions(game, games)``: the form ``BatchedEnv`` calls for an external
  opponent (no observation is built);
* ``policy.base_actions(rows)``: the style's deterministic choice in state rows
  ``[K, kernels.NF]`` (what an opponent model compares an observed move with).

With ``epsilon > 0`` a share ``epsilon`` of the moves is uniformly random (its own numpy
generator, seeded by ``seed``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.panel.styles import CAUTIOUS_HAND, DRAWER_STOCK, STYLES
from pis_env.batched import kernels as K
from pis_env.batched.kernels import lowbit_index, points_of, popcount

FULL_DECK = (np.int64(1) << np.int64(K.NUM_CARDS)) - np.int64(1)
NOT_JACKS = FULL_DECK & ~K.JACKS
EIGHTS_ACES = K.RANK_MASKS[K.EIGHT] | K.RANK_MASKS[K.ACE]
(GREEDY, HIGH_SHEDDER, HOARDER, SEVENS, CAUTIOUS, MISER, SUIT_KEEPER, DRAWER,
 JACK_HAPPY) = (STYLES[n] for n in ("greedy", "high_shedder", "hoarder", "sevens",
                                    "cautious", "miser", "suit_keeper", "drawer",
                                    "jack_happy"))
_NEG = -(np.int64(1) << np.int64(60))


@njit(cache=True, inline="always")
def _bit(c):
    return np.int64(1) << np.int64(c)


@njit(cache=True)
def _key(style, hand, c):
    """The style's ranking of card ``c`` (higher plays first)."""
    r = c % 13
    pts = K.CARD_POINTS[c]
    is_jack = (K.JACKS >> c) & 1
    if style == HIGH_SHEDDER:
        return np.int64(r)
    if style == HOARDER:
        return np.int64(1) if r == K.SEVEN else np.int64(0)
    if style == SEVENS:
        cls = 3 if r == K.SEVEN else 2 if r == K.EIGHT else 0 if is_jack else 1
        return np.int64(cls * 100 + pts)
    if style == CAUTIOUS:
        return np.int64((0 if is_jack else 100) + pts)
    if style == MISER:
        return -pts
    if style == SUIT_KEEPER:
        if is_jack:
            return pts
        rest = hand & ~_bit(c) & NOT_JACKS
        follow = popcount(rest & (K.SUIT_MASKS[c // 13] | K.RANK_MASKS[r]))
        return np.int64(10_000 + 64 * follow + pts)
    if style == JACK_HAPPY:
        if is_jack:
            return np.int64(100_000 + pts)
        suit_count = popcount(hand & K.SUIT_MASKS[c // 13] & NOT_JACKS)
        return np.int64(100 * (13 - suit_count) + pts)
    return pts  # GREEDY, DRAWER, HOARDER's other cards


@njit(cache=True)
def _best(style, hand, cards):
    """The card of ``cards`` with the highest key; ties go to the lowest id."""
    best = -1
    best_key = _NEG
    m = cards
    while m:
        c = lowbit_index(m)
        m &= m - 1
        k = _key(style, hand, c)
        if k > best_key:
            best = c
            best_key = k
    return best


@njit(cache=True)
def _best_points(cards):
    return _best(GREEDY, np.int64(0), cards)


@njit(cache=True)
def nominate(hand, legal, by_points):
    """``agents.panel.styles.nominate``."""
    best = -1
    best_key = _NEG
    for s in range(4):
        if (legal >> (K.NOMINATE_BASE + s)) & 1:
            suited = hand & K.SUIT_MASKS[s] & NOT_JACKS
            count = popcount(suited)
            pts = points_of(suited)
            k = pts * 64 + count if by_points else count * 4096 + pts
            if k > best_key:
                best = s
                best_key = k
    return K.NOMINATE_BASE + best


@njit(cache=True)
def choose(style, hand, legal, pending, phase, has_drawn, stock):
    """``agents.panel.styles.choose`` (see there)."""
    cards = legal & FULL_DECK
    can_draw = (legal >> K.DRAW) & 1
    can_pass = (legal >> K.PASS) & 1
    if phase == K.NOMINATE:
        return nominate(hand, legal, style == JACK_HAPPY)
    if cards == 0:
        if can_draw and (style == GREEDY or not has_drawn or not can_pass):
            return K.DRAW
        return K.PASS
    size = popcount(hand)
    if style == HOARDER:
        if pending:
            if popcount(hand & K.SEVENS) >= 2 or size == 1 or not can_draw:
                return lowbit_index(cards)
            return K.DRAW
        others = cards & ~K.SEVENS & NOT_JACKS
        if others:
            return _best_points(others)
        if size > 1:
            if phase == K.ACE_PHASE and can_pass:
                return K.PASS
            if can_draw and not has_drawn:
                return K.DRAW
        return _best(HOARDER, hand, cards)
    if style == CAUTIOUS:
        allowed = cards & ~EIGHTS_ACES if size > CAUTIOUS_HAND else cards
        if allowed:
            return _best(CAUTIOUS, hand, allowed)
        if phase == K.ACE_PHASE and can_pass:
            return K.PASS
        if can_draw and not has_drawn:
            return K.DRAW
        return _best(CAUTIOUS, hand, cards)
    if style == DRAWER:
        if pending:
            if size <= 3 or not can_draw:
                return lowbit_index(cards)
            return K.DRAW
        if phase == K.PLAY and can_draw and not has_drawn and stock >= DRAWER_STOCK:
            return K.DRAW
        return _best_points(cards)
    return _best(style, hand, cards)


@njit(cache=True)
def actions_state(st, style, out):
    """The style's action for the current player of every state row (``-1`` where nothing
    is legal: the match is over)."""
    for b in range(out.shape[0]):
        legal = st[b, K.LEGAL]
        if legal == 0:
            out[b] = -1
            continue
        if legal & (legal - 1) == 0:
            out[b] = lowbit_index(legal)
            continue
        out[b] = choose(style, st[b, K.HAND + st[b, K.CUR]], legal, st[b, K.PEND],
                        st[b, K.PHASE], st[b, K.DRAWN] != 0, st[b, K.SLEN] - st[b, K.SPOS])


@njit(cache=True)
def mix(base, legal, epsilon, u, v, out):
    """``agents.panel.styles.mixed_action`` for every row (``-1`` stays ``-1``)."""
    for b in range(out.shape[0]):
        a = base[b]
        if a >= 0 and u[b] < epsilon:
            count = popcount(legal[b])
            k = min(np.int64(v[b] * count), count - 1)
            m = legal[b]
            for _ in range(k):
                m &= m - 1
            a = lowbit_index(m)
        out[b] = a


class PanelPolicy:
    """A model-set style for a batch of games; see the module docstring. ``style``: a
    name or id of ``agents.panel.styles.STYLES``."""

    layout_version = 0  # reads no observation; BatchedEnv calls state_actions

    def __init__(self, num_games: int = 1, style: str | int = "greedy", epsilon: float = 0.0,
                 seed: int | None = None):
        if isinstance(style, str):
            if style not in STYLES:
                raise ValueError(f"style {style!r}: one of {', '.join(STYLES)}")
            style = STYLES[style]
        if style not in STYLES.values():
            raise ValueError(f"style id {style!r}: one of {sorted(STYLES.values())}")
        epsilon = float(epsilon)
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon={epsilon!r}: must be in [0, 1]")
        self.style = int(style)
        self.name = next(n for n, i in STYLES.items() if i == self.style)
        self.epsilon = epsilon
        self.rng = np.random.default_rng(seed)
        self.out = np.empty(int(num_games), dtype=np.int64)

    def base_actions(self, rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The style's deterministic choice in every state row (``-1``: nothing legal)."""
        if out is None:
            out = np.empty(rows.shape[0], dtype=np.int64)
        actions_state(rows, self.style, out)
        return out

    def _actions(self, rows: np.ndarray, out: np.ndarray) -> np.ndarray:
        self.base_actions(rows, out)
        if self.epsilon > 0.0:
            u = self.rng.random(rows.shape[0])
            v = self.rng.random(rows.shape[0])
            mix(out, np.ascontiguousarray(rows[:, K.LEGAL]), self.epsilon, u, v, out)
        return out

    def from_game(self, game) -> np.ndarray:
        """Actions [B] for every game (``-1`` where the match is over); a reused buffer."""
        if self.out.shape[0] != game.num_games:
            self.out = np.empty(game.num_games, dtype=np.int64)
        return self._actions(game.st, self.out)

    __call__ = from_game

    def state_actions(self, game, games: np.ndarray) -> np.ndarray:
        """Actions for the current players of ``games`` (a new array)."""
        rows = game.st[np.asarray(games, dtype=np.int64)]
        return self._actions(rows, np.empty(rows.shape[0], dtype=np.int64))

    def __repr__(self) -> str:
        return f"PanelPolicy({self.name!r}, epsilon={self.epsilon})"


__all__ = ["PanelPolicy", "actions_state", "choose", "mix", "nominate"]

"""The greedy bot (``agents.greedy.bot``) ported to numba: one call decides for a batch.

It reads a ``pis_env.batched.BatchedGame``'s state arrays (the current player's hand and
legal set), so it needs no observation; ``tests/pis_env/batched/test_differential.py``
holds it equal to the reference move by move. ``GreedyPolicy`` is the batch bot:
``policy(game)`` for every game, and ``policy.state_actions(game, games)``, the form
``BatchedEnv`` calls for the games waiting on it (no observation built).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pis_env.batched.kernels import (
    CARD_POINTS,
    CUR,
    DRAW,
    DRAW_BIT,
    HAND,
    JACKS,
    LEGAL,
    NOMINATE_BASE,
    NOMINATE_BITS,
    NUM_CARDS,
    PASS,
    SUIT_MASKS,
    lowbit_index,
    points_of,
    popcount,
)


@njit(cache=True)
def greedy_action(st, b):
    """The greedy bot (``agents.greedy.greedy_action``): the legal card with the most
    penalty points (lowest id on ties); after a Jack the legal suit with the most
    non-Jack cards in hand (ties: more points in it, then the lower suit); else draw;
    else pass. ``-1`` when nothing is legal."""
    legal = st[b, LEGAL]
    if legal == 0:
        return -1
    cards = legal & ((np.int64(1) << NUM_CARDS) - 1)
    if cards:
        best = -1
        best_pts = -1
        while cards:
            c = lowbit_index(cards)
            cards &= cards - 1
            if CARD_POINTS[c] > best_pts:
                best_pts = CARD_POINTS[c]
                best = c
        return best
    if legal & NOMINATE_BITS:
        hand = st[b, HAND + st[b, CUR]] & ~JACKS
        best = -1
        best_key = -1
        for s in range(4):
            if (legal >> (NOMINATE_BASE + s)) & 1:
                suited = hand & SUIT_MASKS[s]
                key = popcount(suited) * 1024 + points_of(suited)
                if key > best_key:
                    best_key = key
                    best = NOMINATE_BASE + s
        return best
    if legal & DRAW_BIT:
        return DRAW
    return PASS


@njit(cache=True)
def greedy_actions(st, games, out):
    """``out[i]``: the greedy action in game ``games[i]``."""
    for i in range(games.shape[0]):
        out[i] = greedy_action(st, games[i])


class GreedyPolicy:
    """The greedy bot for a batch of games: the legal card with the most penalty points
    (lowest id on ties); when nominating, the legal suit with the most non-Jack cards in
    hand (ties: more points in it, then the lower suit); else draw; else pass."""

    name = "greedy"

    def __init__(self, num_games: int = 1):
        self.out = np.empty(num_games, dtype=np.int64)
        self.all = np.arange(num_games, dtype=np.int64)

    def __call__(self, game) -> np.ndarray:
        """Actions [B] for every game (``-1`` where the match is over); a reused buffer."""
        if self.out.shape[0] != game.num_games:
            self.out = np.empty(game.num_games, dtype=np.int64)
            self.all = np.arange(game.num_games, dtype=np.int64)
        greedy_actions(game.st, self.all, self.out)
        return self.out

    def state_actions(self, game, games: np.ndarray) -> np.ndarray:
        """Actions for the current players of ``games`` (a new array)."""
        out = np.empty(games.shape[0], dtype=np.int64)
        greedy_actions(game.st, np.asarray(games, dtype=np.int64), out)
        return out

    def __repr__(self) -> str:
        return "GreedyPolicy()"


__all__ = ["GreedyPolicy", "greedy_action", "greedy_actions"]

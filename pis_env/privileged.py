"""The hidden cards of a position, as the privileged critic sees them.

A critic trained with ``policy.privileged_critic`` (``train.sb3.policy``) reads, after the
policy input, what the player cannot see: every opponent's hand (clockwise from the
seat's left), the stock as a set, and the next ``STOCK_LOOKAHEAD`` stock cards in draw
order. One encoder (:func:`privileged_rows`) builds it for a ``GameState``
(:func:`privileged_features`) and for the rows of the batched engine
(``train.vector.sb3_vec_env.privileged_rows_of_batch``); it is a view of the engine
state, so it lives here, below the training code and the served policies that use it.
"""

from __future__ import annotations

import numpy as np

#: Stock cards shown to the critic in draw order (one-hot each).
STOCK_LOOKAHEAD = 4
_BIT = np.arange(52, dtype=np.int64)


def privileged_size(num_players: int) -> int:
    """Hands of the n-1 opponents, the stock as a set, the next stock cards."""
    return 52 * (num_players - 1) + 52 + 52 * STOCK_LOOKAHEAD


def privileged_rows(hands: np.ndarray, stock: np.ndarray, stock_len: np.ndarray) -> np.ndarray:
    """float32 [K, privileged_size(n)]: the hidden cards of K positions, the one encoder
    of the privileged critic's input. ``hands`` int64 [K, n-1]: the opponents' hand masks
    clockwise from the seat's left; ``stock`` [K, 52] the stock cards in draw order (the
    next card first), ``stock_len`` [K] how many of them are real. Out: each opponent's
    hand, the stock as a set, then the next ``STOCK_LOOKAHEAD`` stock cards one-hot."""
    k_games, opponents = hands.shape
    out = np.zeros((k_games, privileged_size(opponents + 1)), np.float32)
    for k in range(opponents):
        out[:, 52 * k:52 * (k + 1)] = (hands[:, k, None] >> _BIT) & 1
    cards = stock.astype(np.int64)
    base = 52 * opponents
    r, c = np.nonzero(_BIT < stock_len[:, None])
    out[r, base + cards[r, c]] = 1.0
    base += 52
    rows = np.arange(k_games)
    for j in range(STOCK_LOOKAHEAD):
        ok = j < stock_len
        out[rows[ok], base + 52 * j + cards[ok, j]] = 1.0
    return out


def privileged_features(game, seat: int) -> np.ndarray:
    """The hidden information of ``game`` (a ``GameState``) seen from ``seat``
    (:func:`privileged_rows` of one position)."""
    n = game.num_players
    hands = np.array([[game.hands[(seat + k) % n] for k in range(1, n)]], dtype=np.int64)
    stock = np.zeros((1, 52), dtype=np.int64)
    order = game.stock[::-1]  # stock[-1] is drawn next
    stock[0, :len(order)] = order
    return privileged_rows(hands, stock, np.array([len(order)]))[0]

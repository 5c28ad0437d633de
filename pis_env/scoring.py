"""Scoring (RULES.md): what a finished deal charges each player, and its rewards.

The engine charges through these functions and the numba kernels use their constants, so
a change of the scoring rules is made here once; the kernels' differential tests compare
their rewards with :func:`deal_rewards`.

* Going out: every other player is charged the points in hand, times 3 when the last card
  was a 7 and times 2 when it was a Jack.
* The stock runs out: the lowest hand points win (charged 0), the others their points.
* An illegal move that ends the match: 3 times the hand points plus 100, others win.
"""

from __future__ import annotations

from .cards import JACK, SEVEN

#: Going out on a 7 or a Jack multiplies the others' charges.
SEVEN_MULTIPLIER, JACK_MULTIPLIER = 3, 2
#: The forfeit of an illegal move: ``FORFEIT_FACTOR * points + FORFEIT_FINE``.
FORFEIT_FACTOR, FORFEIT_FINE = 3, 100
#: ``reward="points"`` rewards are charges in units of this many points.
POINTS_SCALE = 100.0


def going_out_multiplier(rank: int) -> int:
    """The factor on the others' charges when a player goes out on a card of ``rank``."""
    return SEVEN_MULTIPLIER if rank == SEVEN else JACK_MULTIPLIER if rank == JACK else 1


def going_out(points: list[int], winner: int, rank: int) -> tuple[list[int], list[bool]]:
    """(charges, winners) when ``winner`` goes out on a card of ``rank``; ``points[i]`` is
    player i's hand points (the winner's are 0)."""
    multiplier = going_out_multiplier(rank)
    return ([pt * multiplier for pt in points], [i == winner for i in range(len(points))])


def empty_stock(points: list[int]) -> tuple[list[int], list[bool]]:
    """(charges, winners) when the stock runs out: the lowest hand points win."""
    low = min(points)
    winners = [pt == low for pt in points]
    return [0 if w else pt for pt, w in zip(points, winners)], winners


def forfeit(points: list[int], player: int) -> tuple[list[int], list[bool]]:
    """(charges, winners) when ``player`` forfeits the match by an illegal move."""
    charges = [0] * len(points)
    charges[player] = FORFEIT_FACTOR * points[player] + FORFEIT_FINE
    return charges, [i != player for i in range(len(points))]


def deal_rewards(charges: list[int], winners: list[bool], mode: str) -> list[float]:
    """Zero-sum rewards of a finished deal (RULES.md, Rewards): ``"points"``, each player's charge
    against the mean of the others' (in units of 100 points); ``"win"``, +1 split among
    the winners and -1 among the others (0 when all or none win)."""
    n = len(charges)
    if mode == "points":
        total = sum(charges)
        return [((total - c) / (n - 1) - c) / POINTS_SCALE for c in charges]
    num_winners = sum(winners)
    if num_winners in (0, n):
        return [0.0] * n
    return [1.0 / num_winners if w else -1.0 / (n - num_winners) for w in winners]


__all__ = ["FORFEIT_FACTOR", "FORFEIT_FINE", "JACK_MULTIPLIER", "POINTS_SCALE",
           "SEVEN_MULTIPLIER", "deal_rewards", "empty_stock", "forfeit", "going_out",
           "going_out_multiplier"]

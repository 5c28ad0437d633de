"""Match values (``agents.match_value``) against a brute-force enumeration of the charge
model on small tables.

The search and Monte Carlo bots steer by these numbers at a match table; a wrong share,
a future that forgets a seat or a winner drawn from too few seats picks other moves and
raises nothing. ``test_match_value.py`` checks two players with one deal left by hand;
here every outcome of the model (which seat wins each deal left, each other seat's charge
from the shipped histogram) is enumerated with its probability, for three players and
for two deals left, and the seat-by-seat law of the sampled futures is counted against
it. The win share is restated in plain Python (the lowest total wins, a tie of ``w``
seats gets ``1/w``).
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.match_value import (
    charge_model,
    future_charges,
    match_scores,
    settled_charges,
    win_share,
)


def plain_share(totals: list[int]) -> float:
    """Seat 0's share of the win: 0 unless its total is the lowest, else 1 / (number of
    seats on that total)."""
    low = min(totals)
    return 0.0 if totals[0] > low else 1.0 / totals.count(low)


def exact_share(standing: np.ndarray, deals_left: int) -> float:
    """100 x seat 0's expected share over every outcome of ``deals_left`` model deals:
    each deal one seat (chance 1/n) pays 0, every other seat an independent charge of the
    histogram."""
    n = standing.size
    values, p = charge_model(n)
    # the law of one deal's charge vector, as (charges [k, n], probabilities [k])
    outcomes = []
    for winner in range(n):
        vecs, probs = np.zeros((1, n), np.int64), np.full(1, 1.0 / n)
        for s in range(n):
            if s == winner:
                continue
            vecs = np.repeat(vecs, values.size, axis=0)
            vecs[:, s] = np.tile(values, vecs.shape[0] // values.size)
            probs = np.repeat(probs, values.size) * np.tile(p, probs.size)
        outcomes.append((vecs, probs))
    deal_v = np.concatenate([v for v, _ in outcomes])
    deal_p = np.concatenate([q for _, q in outcomes])
    total_v, total_p = standing[None, :], np.ones(1)
    for left in range(deals_left, 0, -1):
        total_v = (total_v[:, None, :] + deal_v[None, :, :]).reshape(-1, n)
        total_p = (total_p[:, None] * deal_p[None, :]).ravel()
        if left > 1:  # merge equal standings before the next deal
            total_v, inverse = np.unique(total_v, axis=0, return_inverse=True)
            total_p = np.bincount(inverse.ravel(), weights=total_p)
    own, low = total_v[:, 0], total_v.min(axis=1)
    ties = (total_v == low[:, None]).sum(axis=1)
    share = np.where(own > low, 0.0, 1.0 / ties)
    assert abs(total_p.sum() - 1) < 1e-9
    return 100.0 * float((share * total_p).sum())


def test_the_win_share_is_the_plain_rule_on_random_totals():
    """Reference: :func:`plain_share` on every row (ties of every size, 2 to 6 seats)."""
    rng = np.random.default_rng(0)
    for n in range(2, 7):
        totals = rng.integers(0, 5, size=(400, n))
        np.testing.assert_array_equal(win_share(totals),
                                      [plain_share(t) for t in totals.tolist()])


@pytest.mark.parametrize("totals,charges", [([0, 0, 0], [0, 30, 12]),
                                            ([40, 0, 10], [0, 25, 0]),
                                            ([0, 90, 95], [15, 0, 0])])
def test_one_deal_left_at_three_players_is_the_enumerated_chance(totals, charges):
    """Reference: :func:`exact_share` over every winner and every pair of charges."""
    got = match_scores(np.array([charges]), totals, deal=1, num_deals=3, samples=40000)[0]
    want = exact_share(np.add(totals, charges), 1)
    assert abs(got - want) < 1.2, (got, want)  # sampling sd about 0.25


@pytest.mark.parametrize("totals,charges", [([0, 0], [0, 20]), ([60, 0], [0, 10])])
def test_two_deals_left_at_two_players_is_the_enumerated_chance(totals, charges):
    """Reference: :func:`exact_share` over every outcome of two model deals."""
    got = match_scores(np.array([charges]), totals, deal=1, num_deals=4, samples=40000)[0]
    want = exact_share(np.add(totals, charges), 2)
    assert abs(got - want) < 1.2, (got, want)


def test_each_seat_of_a_sampled_future_follows_the_model():
    """Reference: seat by seat, one model deal charges 0 with chance ``1/n`` plus the
    histogram's own zeros, else the histogram's value: the sampled futures of one deal
    at four players, per seat, match that law (a winner drawn from too few seats, or a
    seat never charged, fails)."""
    n, samples = 4, 40000
    values, p = charge_model(n)
    one = future_charges(n, 1, samples)
    zero = 1 / n + (n - 1) / n * p[values == 0].sum()
    high = values >= np.median(values)
    above = (n - 1) / n * p[high].sum()
    for seat in range(n):
        col = one[:, seat]
        assert abs((col == 0).mean() - zero) < 0.015, (seat, (col == 0).mean(), zero)
        assert abs(np.isin(col, values[high]).mean() - above) < 0.015, seat
        assert abs(col.mean() - (n - 1) / n * float(values @ p)) < 0.03 * col.mean()


def test_a_truncated_rollout_is_charged_its_hand_points_the_lowest_paying_nothing():
    """Reference: per truncated row, each seat its points unless its points are the
    lowest (then 0, ties included); other rows keep their charges."""
    rng = np.random.default_rng(3)
    charges = rng.integers(0, 50, size=(200, 3))
    points = rng.integers(0, 8, size=(200, 3))
    truncated = rng.random(200) < 0.5
    got = settled_charges(charges, None, points, truncated)
    for b in range(200):
        pts = points[b].tolist()
        want = [0 if x == min(pts) else x for x in pts] if truncated[b] else charges[b].tolist()
        assert got[b].tolist() == want

"""agents.tournament.stats against values computed here by other means (the normal
quantile's table value, Wilson's bounds in closed form, numpy's own moments): the
figures every tournament and every docs/results.md row rest on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.tournament.stats import mean_ci, wilson_interval, z_value


def test_z_value_is_the_two_sided_normal_quantile():
    assert z_value() == pytest.approx(1.959964, abs=1e-6)  # the table value for 95%
    assert z_value(0.99) == pytest.approx(2.575829, abs=1e-6)
    for bad in (0.0, 1.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="confidence"):
            z_value(bad)


def test_wilson_interval_refuses_impossible_counts():
    for successes, trials in ((-1, 5), (6, 5), (0, -1), (-1, -1)):
        with pytest.raises(ValueError, match="successes"):
            wilson_interval(successes, trials)
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("n", [3, 7, 10, 77, 1000, 99995])
def test_an_all_wins_interval_ends_at_one_exactly(n):
    """At p = 1 Wilson's bounds are n / (n + z^2) and 1 in exact arithmetic, but the
    upper one's floating-point value overshoots 1 for many n: the interval is clamped."""
    low, high = wilson_interval(n, n)
    assert high == 1.0
    z2 = z_value() ** 2
    assert low == pytest.approx(n / (n + z2), rel=1e-12)


def test_mean_ci_takes_any_iterable_and_needs_two_values_for_an_interval():
    values = [0.0, 1.0, 1.0, 0.0, 1.0]
    want_half = z_value() * np.std(values, ddof=1) / math.sqrt(len(values))
    for given in (values, tuple(values), np.array(values), (v for v in values)):
        mean, low, high = mean_ci(given)
        assert mean == pytest.approx(0.6)
        assert (low, high) == pytest.approx((0.6 - want_half, 0.6 + want_half))
    two = mean_ci([1.0, 3.0])
    assert two[0] == 2.0 and all(math.isfinite(x) for x in two)
    assert two[1] == pytest.approx(2.0 - z_value() * math.sqrt(2.0) / math.sqrt(2.0))
    one = mean_ci([4.0])
    assert one[0] == 4.0 and math.isnan(one[1]) and math.isnan(one[2])
    assert all(math.isnan(x) for x in mean_ci([]))

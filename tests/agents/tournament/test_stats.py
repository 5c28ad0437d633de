"""agents.tournament.stats against values computed here by other means (the normal
quantile's table value, Wilson's bounds in closed form, numpy's own moments): the
figures every tournament and every docs/results.md row rest on."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from agents.tournament.stats import bootstrap_mean_ci, mean_ci, wilson_interval, z_value


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
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no "Mean of empty slice" from numpy
        assert all(math.isnan(x) for x in mean_ci([]))


def _plain_bootstrap(values, resamples, seed, confidence=0.95):
    """The documented bootstrap in plain Python: resample ``b`` is the ``b``-th draw of
    ``n`` indices, its mean summed here, the quantiles interpolated here (numpy's
    default: position ``(B - 1) q`` between the sorted means)."""
    rng = np.random.default_rng(seed)
    n = len(values)
    means = sorted(sum(values[int(i)] for i in rng.integers(0, n, size=n)) / n
                   for _ in range(resamples))

    def quantile(q):
        h = (resamples - 1) * q
        k = math.floor(h)
        upper = means[min(k + 1, resamples - 1)]
        return means[k] + (h - k) * (upper - means[k])

    tail = (1 - confidence) / 2
    return sum(values) / n, quantile(tail), quantile(1 - tail)


@pytest.mark.parametrize("values, resamples, seed", [
    ([0, 0, 0, 30, 0, 2, 0, 0, 25, 1], 2000, 0),   # skewed charges: mean_ci goes below 0
    ([4, 9, 0, 13, 7], 999, 5),
    (list(range(0, 60, 3)), 301, 11),             # 20 values: 50,000 indices a block
])
def test_the_charge_interval_is_the_documented_percentile_bootstrap(values, resamples, seed,
                                                                     monkeypatch):
    import agents.tournament.stats as stats

    monkeypatch.setattr(stats, "_BOOTSTRAP_BLOCK", 7 * len(values))  # blocks of 7 rows
    got = bootstrap_mean_ci(values, resamples=resamples, seed=seed)
    assert got == pytest.approx(_plain_bootstrap(values, resamples, seed), rel=1e-12)
    monkeypatch.undo()
    assert bootstrap_mean_ci(np.array(values, float), resamples=resamples, seed=seed) == \
        pytest.approx(got, rel=1e-12)  # one block or many: the same draws


def test_a_charge_interval_stays_within_the_charges_seen():
    skewed = [0, 0, 0, 30, 0, 2, 0, 0, 25, 1]
    assert mean_ci(skewed)[1] < 0  # the normal interval: what a charge cannot be
    mean, low, high = bootstrap_mean_ci(skewed)
    assert 0 <= min(skewed) <= low < mean < high <= max(skewed)
    assert bootstrap_mean_ci(skewed) == (mean, low, high)  # seeded: the same every time
    assert bootstrap_mean_ci([0.0] * 12) == (0.0, 0.0, 0.0)
    assert bootstrap_mean_ci(v for v in [5.0, 5.0]) == (5.0, 5.0, 5.0)
    one = bootstrap_mean_ci([4.0])
    assert one[0] == 4.0 and math.isnan(one[1]) and math.isnan(one[2])
    assert all(math.isnan(x) for x in bootstrap_mean_ci([]))
    for bad, message in [
            ({"confidence": 1.0}, "confidence must be in (0, 1), got 1.0"),
            ({"confidence": 0.0}, "confidence must be in (0, 1), got 0.0"),
            ({"resamples": 0}, "resamples must be an int >= 1, got 0"),
            ({"resamples": 2.0}, "resamples must be an int >= 1, got 2.0")]:
        with pytest.raises(ValueError) as refused:
            bootstrap_mean_ci(skewed, **bad)
        assert str(refused.value) == message


def test_the_charge_intervals_defaults_are_seed_0_and_2000_resamples_and_one_resample_is_a_point():
    from agents.tournament.stats import BOOTSTRAP_RESAMPLES

    values = [4, 9, 0, 13, 7, 0, 2]
    assert BOOTSTRAP_RESAMPLES == 2000
    assert bootstrap_mean_ci(values) == pytest.approx(
        _plain_bootstrap(values, 2000, seed=0), rel=1e-12)
    point = bootstrap_mean_ci(values, resamples=1)
    assert point == pytest.approx(_plain_bootstrap(values, 1, seed=0), rel=1e-12)
    assert point[1] == point[2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no "Mean of empty slice" from numpy
        assert all(math.isnan(x) for x in bootstrap_mean_ci([]))

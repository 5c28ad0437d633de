"""Small statistics helpers for tournaments: confidence intervals and OpenSkill ratings.

Everything here is plain Python/numpy (the ``openskill`` package only for
``openskill_ratings``) and deterministic: the same inputs in the same order give the same
numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np


def z_value(confidence: float = 0.95) -> float:
    """The two-sided standard normal quantile: 1.959964 for 95%."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(
    successes: float, trials: float, confidence: float = 0.95
) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``successes / trials``.

    ``successes`` may be fractional (a shared win counted as ``1/k``); the formula is
    then applied as is, a standard approximation. With no trials the interval is
    ``(0.0, 1.0)``, i.e. nothing is known.

    >>> [round(x, 4) for x in wilson_interval(5, 10)]
    [0.2366, 0.7634]
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes!r}/{trials!r}")
    if trials == 0:
        return 0.0, 1.0
    z = z_value(confidence)
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denom
    half = z * math.sqrt(p * (1.0 - p) / trials + z2 / (4.0 * trials * trials)) / denom
    # Clamp rounding noise so the interval always contains p and stays within [0, 1].
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


def _sample(values: Iterable[float]) -> np.ndarray:
    """The values as one flat float array."""
    return np.asarray(list(values) if not isinstance(values, np.ndarray) else values,
                      float).ravel()


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean and its normal-approximation interval
    ``mean ± z · s / sqrt(n)`` with the sample standard deviation ``s`` (ddof=1).

    With fewer than two values the interval is ``(nan, nan)``; an empty input gives
    ``(nan, nan, nan)``.
    """
    x = _sample(values)
    if x.size < 2:  # no spread to read an interval from
        return (float(x.mean()) if x.size else math.nan), math.nan, math.nan
    mean = float(x.mean())
    half = z_value(confidence) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, mean - half, mean + half


#: Resamples of ``bootstrap_mean_ci`` (its percentiles move by well under a tenth of the
#: interval's width from one seed to another at this count).
BOOTSTRAP_RESAMPLES = 2000
#: Indices drawn at once by ``bootstrap_mean_ci`` (bounds its memory at 8 MB).
_BOOTSTRAP_BLOCK = 1_000_000


def bootstrap_mean_ci(values: Iterable[float], confidence: float = 0.95,
                      resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = 0) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean and its percentile bootstrap interval, for values
    with a bound the normal interval ignores (a deal's charge is never below zero, and
    charges are skewed: ``mean_ci`` of a few deals can reach below zero).

    Resample ``b`` (of ``resamples``) is the mean of ``values[i]`` for the ``n`` indices
    ``numpy.random.default_rng(seed).integers(0, n, size=n)`` draws ``b``-th; ``low`` and
    ``high`` are the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of
    the resample means (numpy's default, linear interpolation). A resample mean lies
    between the smallest and largest value, so the interval does too: charges of zero
    give ``[0, 0]``. The fixed seed makes it deterministic (the same values give the same
    interval). With fewer than two values the interval is ``(nan, nan)``; an empty input
    gives ``(nan, nan, nan)``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not isinstance(resamples, int) or resamples < 1:
        raise ValueError(f"resamples must be an int >= 1, got {resamples!r}")
    x = _sample(values)
    if x.size < 2:  # no spread to read an interval from
        return (float(x.mean()) if x.size else math.nan), math.nan, math.nan
    mean = float(x.mean())
    n = x.size
    rng = np.random.default_rng(seed)
    rows = max(1, _BOOTSTRAP_BLOCK // n)
    means = np.empty(resamples)
    for start in range(0, resamples, rows):  # the same draws as one row at a time
        stop = min(start + rows, resamples)
        means[start:stop] = np.take(x, rng.integers(0, n, size=(stop - start, n))).sum(axis=1)
    means /= n
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return mean, float(low), float(high)


def ranks_from_scores(charges: Sequence[float]) -> list[int]:
    """Competition ranks (0 = best) from charges where lower is better; equal charges
    share a rank: ``[0, 30, 0, 12] -> [0, 3, 0, 2]``."""
    return [sum(1 for other in charges if other < c) for c in charges]


@dataclass(frozen=True)
class Rating:
    """An OpenSkill rating: ``mu``, ``sigma`` and the conservative ``ordinal``
    (``mu - 3 sigma``)."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma


def openskill_ratings(
    games: Iterable[tuple[Sequence[str], Sequence[float]]],
    players: Sequence[str] | None = None,
) -> dict[str, Rating]:
    """Rate players with OpenSkill's Plackett-Luce model from a sequence of games.

    Each game is ``(names, ranks)``: one name per team of one player and its rank
    (lower is better, equal ranks tie). A name must appear at most once in a game.
    Games are applied in the given order (ratings are order-dependent), so a fixed order
    gives fixed ratings. ``players`` lists names to report even if they never played.

    The model has no skill dynamics (``tau=0``): the bots of a tournament do not change
    while it runs, so every game should count alike. With OpenSkill's default ``tau``
    (a little variance added before each game) sigma never shrinks and the last few
    hundred games decide the ratings: a bot winning 53.8% of 10,000 deals could end up
    rated below its opponent.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    current: dict[str, Any] = {}  # openskill's rating objects
    for name in players or ():
        current[name] = model.rating(name=name)
    for names, ranks in games:
        if len(set(names)) != len(names):
            raise ValueError(f"a player appears twice in one game: {list(names)}")
        teams: list[Any] = []
        for name in names:
            if name not in current:
                current[name] = model.rating(name=name)
            teams.append([current[name]])
        rated = model.rate(teams, ranks=list(ranks))
        for name, team in zip(names, rated):
            current[name] = team[0]
    return {name: Rating(float(r.mu), float(r.sigma)) for name, r in current.items()}


__all__ = [
    "BOOTSTRAP_RESAMPLES", "Rating", "bootstrap_mean_ci", "mean_ci", "openskill_ratings",
    "ranks_from_scores", "wilson_interval", "z_value",
]

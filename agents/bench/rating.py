"""The benchmark card's fixed rating scale: a maximum-likelihood fit against reference
bots whose ratings are stored, so that cards made on different days, machines or
clusters compare directly (a tournament's OpenSkill ratings rate only its own field, in
the order its games were played).

**The scale** is Elo's: ``heuristic`` is 1,000 by definition and 400 points are a factor
of 10 in strength. A bot of rating ``R`` has strength ``10**(R / 400)``.

**The model.** At a table of ``n`` seats holding the bot (rating ``R``) and ``n - 1``
copies of a reference bot (rating ``r``), the bot wins a deal with the Plackett–Luce
first-place probability

    p(R; r, n) = 10**(R/400) / (10**(R/400) + (n - 1) · 10**(r/400))
               = 1 / (1 + (n - 1) · 10**((r - R)/400)),

which at two players is Bradley–Terry (Elo's expected score). Equal bots win ``1/n``.
The data are the bot's win shares: ``W`` wins (a win shared by ``w`` players counts
``1/w``) in ``G`` valid seat-deals per reference bot, and the log-likelihood

    L(R) = Σ_refs  W · log p + (G - W) · log(1 - p)

is concave in ``R`` (``-log(1 + c·e^(-x))`` is concave), its derivative
``ln(10)/400 · Σ (W - G·p)`` falls from ``+`` to ``-``: :func:`fit_rating` finds its root by
bisection, a fixed number of halvings from a fixed bracket, so the same win shares give
the same rating to the last bit. A bot that won every deal (or none) has no finite rating
(``±inf``). The interval is Wald's from the Fisher information
``(ln 10/400)² · Σ G·p·(1-p)``: it treats seat-deals as independent, which the rotations
of one duplicate deck are not, so read it as a guide, not a test.

**The stored ratings** (``agents/data/reference_ratings.json``, written by ``python -m
agents.bench.calibrate``) are the same model fitted jointly (:func:`fit_field`) to a round
robin of the reference bots: every bot against ``n - 1`` copies of every other, per table
size, with ``heuristic`` held at 1,000.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.tournament.stats import z_value

#: The anchor of the scale and its rating, by definition.
ANCHOR = "heuristic"
ANCHOR_RATING = 1000.0
#: Elo points per factor of 10 in strength.
ELO_SCALE = 400.0
#: d(natural log of strength) / d(rating).
_C = math.log(10.0) / ELO_SCALE
#: The stored reference ratings (package data).
REFERENCE_PATH = Path(__file__).resolve().parents[1] / "data" / "reference_ratings.json"
#: Bisection: the bracket around the reference ratings, in rating points, and the halvings
#: (6000 / 2**60 is far below any printed digit).
_BRACKET = 3000.0
_HALVINGS = 60


def win_probability(rating: float | np.ndarray, opponent: float | np.ndarray,
                    num_players: int) -> np.ndarray:
    """``p(R; r, n)``: the chance that a bot rated ``rating`` wins a deal against
    ``num_players - 1`` copies of a bot rated ``opponent`` (see the module docstring)."""
    if num_players < 2:
        raise ValueError(f"a table has at least 2 seats, got {num_players}")
    x = (np.asarray(opponent, float) - np.asarray(rating, float)) * _C \
        + math.log(num_players - 1)
    return 1.0 / (1.0 + np.exp(np.clip(x, -700.0, 700.0)))


@dataclass(frozen=True)
class RatingFit:
    """A fitted rating with its approximate 95% interval (``±inf`` when the bot won every
    deal or none)."""

    rating: float
    low: float
    high: float


def fit_rating(results: Sequence[tuple[float, float, float]], num_players: int,
               confidence: float = 0.95) -> RatingFit:
    """The maximum-likelihood rating of a bot from ``(reference rating, wins, games)`` per
    reference bot at tables of ``num_players`` (the bot and ``num_players - 1`` copies of
    the reference bot); ``wins`` may be fractional (shared wins). Deterministic."""
    rows = [(float(r), float(w), float(g)) for r, w, g in results if g > 0]
    if not rows:
        raise ValueError("no games to fit a rating from")
    for r, w, g in rows:
        if not (0.0 <= w <= g) or not math.isfinite(r):
            raise ValueError(f"need 0 <= wins <= games and a finite reference rating, "
                             f"got {(r, w, g)}")
    refs = np.array([r for r, _, _ in rows])
    wins = np.array([w for _, w, _ in rows])
    games = np.array([g for _, _, g in rows])
    if wins.sum() == 0:
        return RatingFit(-math.inf, -math.inf, -math.inf)
    if wins.sum() == games.sum():
        return RatingFit(math.inf, math.inf, math.inf)

    def score(rating: float) -> float:
        return float(np.sum(wins - games * win_probability(rating, refs, num_players)))

    lo, hi = float(refs.min()) - _BRACKET, float(refs.max()) + _BRACKET
    while score(lo) < 0:  # extreme shares: widen until the root is bracketed
        lo -= _BRACKET
    while score(hi) > 0:
        hi += _BRACKET
    for _ in range(_HALVINGS):
        mid = 0.5 * (lo + hi)
        if score(mid) > 0:
            lo = mid
        else:
            hi = mid
    rating = 0.5 * (lo + hi)
    p = win_probability(rating, refs, num_players)
    info = _C * _C * float(np.sum(games * p * (1.0 - p)))
    half = z_value(confidence) / math.sqrt(info)
    return RatingFit(rating, rating - half, rating + half)


def fit_field(tables: Sequence[tuple[str, str, float, float]], num_players: int,
              anchor: str = ANCHOR, anchor_rating: float = ANCHOR_RATING,
              tol: float = 1e-9, max_iter: int = 200) -> dict[str, float]:
    """Joint maximum-likelihood ratings of a field from ``(bot, opponent, wins, games)``
    per table (the bot and ``num_players - 1`` copies of the opponent; ``wins`` the bot's),
    with ``anchor`` held at ``anchor_rating``: Newton's method with step halving on the
    concave log-likelihood, from every bot at the anchor's rating. Names keep their order
    of first appearance. ``ValueError`` when the anchor is missing or a rating runs off
    (a bot that won or lost everything against the rest of the field)."""
    names: list[str] = []
    for a, b, _, _ in tables:
        for x in (a, b):
            if x not in names:
                names.append(x)
    if anchor not in names:
        raise ValueError(f"the anchor {anchor!r} is not in the field {names}")
    free = [x for x in names if x != anchor]
    index = {x: i for i, x in enumerate(free)}
    rows = [(index.get(a, -1), index.get(b, -1), float(w), float(g))
            for a, b, w, g in tables if g > 0]

    def ratings_of(theta: np.ndarray) -> dict[str, float]:
        out = {x: float(theta[index[x]]) for x in free}
        out[anchor] = anchor_rating
        return {x: out[x] for x in names}

    def loglik(theta: np.ndarray) -> float:
        total = 0.0
        for i, j, w, g in rows:
            ri = anchor_rating if i < 0 else theta[i]
            rj = anchor_rating if j < 0 else theta[j]
            p = float(win_probability(ri, rj, num_players))
            total += w * math.log(max(p, 1e-300)) + (g - w) * math.log(max(1 - p, 1e-300))
        return total

    theta = np.full(len(free), anchor_rating)
    current = loglik(theta)
    for _ in range(max_iter):
        grad = np.zeros(len(free))
        hess = np.zeros((len(free), len(free)))
        for i, j, w, g in rows:
            ri = anchor_rating if i < 0 else theta[i]
            rj = anchor_rating if j < 0 else theta[j]
            p = float(win_probability(ri, rj, num_players))
            resid, curv = _C * (w - g * p), _C * _C * g * p * (1 - p)
            for k, sign in ((i, 1.0), (j, -1.0)):
                if k >= 0:
                    grad[k] += sign * resid
            for k, sk in ((i, 1.0), (j, -1.0)):
                for m, sm in ((i, 1.0), (j, -1.0)):
                    if k >= 0 and m >= 0:
                        hess[k, m] -= sk * sm * curv
        try:
            step = np.linalg.solve(-hess, grad)
        except np.linalg.LinAlgError:
            raise ValueError("the field's ratings are not identified: some bot shares no "
                             "table with the rest") from None
        t = 1.0
        while t > 1e-12:
            trial = theta + t * step
            value = loglik(trial)
            if value >= current - 1e-12:
                break
            t *= 0.5
        theta, current = trial, value
        if float(np.max(np.abs(t * step), initial=0.0)) < tol:
            break
        if float(np.max(np.abs(theta - anchor_rating), initial=0.0)) > 20 * _BRACKET:
            raise ValueError("a rating runs off: some bot won or lost every deal against "
                             "the rest of the field")
    return ratings_of(theta)


def load_reference(path: str | Path | None = None) -> dict[str, Any]:
    """The stored reference ratings (``REFERENCE_PATH`` by default): ``{"ratings": {"2":
    {bot: rating}, ...}, "measured": date, "seed": ..., "decks": {...}, "command": ...}``."""
    path = Path(path) if path is not None else REFERENCE_PATH
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("ratings"), dict):
        raise ValueError(f"{path}: not a reference ratings file (no 'ratings')")
    return data


def reference_ratings(num_players: int, reference: Mapping[str, Any] | None = None
                      ) -> dict[str, float]:
    """``{bot: rating}`` of the stored reference field at ``num_players`` seats."""
    data = reference if reference is not None else load_reference()
    table = data["ratings"].get(str(num_players))
    if table is None:
        sizes = ", ".join(sorted(data["ratings"], key=int))
        raise ValueError(f"no reference ratings for {num_players} players (stored: {sizes})")
    return {k: float(v) for k, v in table.items()}


__all__ = ["ANCHOR", "ANCHOR_RATING", "ELO_SCALE", "REFERENCE_PATH", "RatingFit", "fit_field",
           "fit_rating", "load_reference", "reference_ratings", "win_probability"]

"""The benchmark card: any bot against a fixed reference field, rated on a fixed scale.

    pis-bench heuristic --quick                   # python -m agents.bench heuristic --quick
    pis-bench mybot:MyBot --players 2,3,4 --json card.json --plot card.png

Modules: ``field`` (a bot against ``n - 1`` copies of each field member, on duplicate
decks; shared with ``python -m benchmarks.panel``), ``rating`` (the fixed Elo scale:
``heuristic`` = 1,000, the maximum-likelihood fit), ``card`` (playing and printing a
card), ``calibrate`` (measuring the stored reference ratings), ``cli`` (``pis-bench``).
docs/leaderboard.md publishes the cards.
"""

from agents.bench.field import REFERENCE_FIELD, TABLE_SIZES, play_field, table_shares
from agents.bench.rating import RatingFit, fit_field, fit_rating, win_probability

__all__ = ["REFERENCE_FIELD", "TABLE_SIZES", "RatingFit", "fit_field", "fit_rating",
           "play_field", "table_shares", "win_probability"]

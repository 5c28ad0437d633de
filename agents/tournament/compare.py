"""Paired comparison of two tournaments played on the same duplicate deals.

    python -m agents.tournament compare A/deals.csv B/deals.csv [--prefix search]

Why paired: two tournaments with the same ``--seed`` deal the same decks to the same
seats, so the difference in one agent's result between them, deal by deal, cancels the
luck of the cards that two separate win rates would each carry. That is how an ablation
at equal budget is measured (e.g. the search bot with and without its belief model
against the same heuristic).

Each file is a ``deals.csv`` of ``TournamentResult.save`` (one row per seat of every
deal). The agent compared is the one whose spec starts with ``prefix`` in each file
(``search`` matches ``search?rollouts=256`` too); its deal wins are paired by
``(deal, rotation)``, and the mean difference A - B gets a 95% normal interval
(``agents.tournament.stats.mean_ci``). A win shared by ``w`` seats counts ``1/w``, as in the
win rate. Two match-mode tournaments (``--option num_deals=4``) pair the same way, match
by match: their ``deals.csv`` rows are matches and ``winner`` marks the match winners (a
tie on totals marks every tied seat, so each counts a share).
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence

from agents.common.cli import program_name
from agents.tournament.stats import mean_ci


def seat_wins(path: str, prefix: str) -> dict[tuple[str, str], float]:
    """``{(deal, rotation): win share}`` of the agent whose spec starts with ``prefix``
    (``1/w`` of a win shared by ``w`` seats of that game)."""
    out: dict[tuple[str, str], float] = {}
    out_game: dict[tuple[str, str], tuple[str, str, str]] = {}
    winners: dict[tuple[str, str, str], int] = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"deal", "rotation", "agent", "winner"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: not a tournament deals.csv (no column "
                             f"{', '.join(sorted(missing))})")
        for row in reader:
            game = (row.get("table", ""), row["deal"], row["rotation"])
            won = float(row["winner"])
            winners[game] = winners.get(game, 0) + (won > 0)
            if row["agent"].startswith(prefix):
                out[(row["deal"], row["rotation"])] = won
                out_game[(row["deal"], row["rotation"])] = game
    return {k: (v / winners[out_game[k]] if v else 0.0) for k, v in out.items()}


def paired_difference(deals_a: str, deals_b: str, prefix: str = "search") -> tuple:
    """``(diff, low, high, n)``: the mean difference in deal wins (A minus B) of the agents
    whose spec starts with ``prefix``, over the ``n`` seat-deals both files hold, with a
    95% normal interval. No common seat-deal is a ``ValueError``."""
    a, b = seat_wins(deals_a, prefix), seat_wins(deals_b, prefix)
    keys = sorted(set(a) & set(b))
    if not keys:
        raise ValueError(f"no (deal, rotation) of an agent {prefix!r}* is in both "
                         f"{deals_a} and {deals_b}: same --seed, same agents?")
    mean, low, high = mean_ci([a[k] - b[k] for k in keys])
    return mean, low, high, len(keys)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=program_name("python -m agents.tournament") + " compare",
        description="The paired difference in win rate of one agent between two "
        "tournaments on the same duplicate deals (same --seed).")
    p.add_argument("deals", nargs=2, metavar="DEALS_CSV",
                   help="the deals.csv of tournament A, then of tournament B")
    p.add_argument("--prefix", default="search",
                   help="pair the agent whose spec starts with this (default search; e.g. "
                   "ppo for two policies against the same opponent)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from agents.common.cli import error_exit

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        deals_a, deals_b = args.deals
        diff, low, high, count = paired_difference(deals_a, deals_b, prefix=args.prefix)
    except (OSError, ValueError) as e:
        return error_exit(parser.prog, str(e))
    print(f"win rate A - B: {100 * diff:+.1f} points [95% CI {100 * low:+.1f}, "
          f"{100 * high:+.1f}] over {count} paired seat-deals")
    return 0


__all__ = ["main", "paired_difference", "seat_wins"]

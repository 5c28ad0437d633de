"""Measure the reference bots' stored ratings (``agents/data/reference_ratings.json``):

    python -m agents.bench.calibrate --decks 200 --seed 2026 --workers 1

At each table size (``--players``, default 2 to 7) every reference bot plays against
``n - 1`` copies of every other one (at two players each pair once: its rotations are the
other order's games), all on the same duplicate decks; the ratings are the joint
maximum-likelihood fit of ``agents.bench.rating`` with ``heuristic`` held at 1,000. The
file is rewritten after every size, so a long run that is stopped keeps the sizes it
finished.

Run it again, and commit the file, when a reference bot's play changes: every card's
rating is measured against these numbers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from agents.bench.field import REFERENCE_FIELD, TABLE_SIZES, play_field
from agents.bench.rating import ANCHOR, ANCHOR_RATING, REFERENCE_PATH, fit_field
from agents.common.cli import error_exit, positive_int

#: What the stored file says about itself.
ABOUT = ("Ratings of the reference field on the Elo scale of agents.bench.rating "
         "(heuristic = 1000 by definition; p = 1 / (1 + (n - 1) * 10**((r_ref - R) / 400)) "
         "for a bot against n - 1 copies of a reference bot). Measured with 'command'; "
         "'tables' holds [bot, opponent, bot's wins, seat-deals] per table.")


def round_robin(num_players: int, field: Sequence[str] = REFERENCE_FIELD
                ) -> list[tuple[str, str]]:
    """The (bot, opponent) tables: every ordered pair, or each pair once at 2 players."""
    if num_players == 2:
        return [(a, b) for i, a in enumerate(field) for b in field[i + 1:]]
    return [(a, b) for a in field for b in field if a != b]


def measure(num_players: int, decks: int, seed: int, workers: int | None,
            progress: bool = True, field: Sequence[str] = REFERENCE_FIELD) -> dict:
    """Play one size's round robin and fit it: ``{"ratings": ..., "tables": ...,
    "elapsed_s": ...}``."""
    pairs = round_robin(num_players, field)
    played = play_field(field, field, num_players, decks, seed, workers, progress,
                        pairs=pairs)
    tables = [(a, b, float(played.wins[a][b].sum()), float(played.games[a][b].sum()))
              for a, b in pairs]
    ratings = fit_field(tables, num_players, ANCHOR, ANCHOR_RATING)
    return {"ratings": {k: round(v, 1) for k, v in ratings.items()},
            "tables": [[a, b, round(w, 6), g] for a, b, w, g in tables],
            "truncated": played.truncated, "elapsed_s": round(played.elapsed_s, 1)}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agents.bench.calibrate",
                                description=__doc__.split("\n\n")[0],
                                epilog="See agents.bench.rating for the model.")
    p.add_argument("--decks", type=positive_int, default=200,
                   help="duplicate decks per table (default 200)")
    p.add_argument("--seed", type=int, default=0, help="the decks' seed (default 0)")
    p.add_argument("--players", default=",".join(map(str, TABLE_SIZES)),
                   help="table sizes (default %(default)s)")
    p.add_argument("--workers", type=positive_int, default=1, help="processes (default 1)")
    p.add_argument("--out", default=str(REFERENCE_PATH),
                   help="the file to write (default: the package's reference ratings)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        sizes = [int(x) for x in args.players.split(",") if x.strip()]
    except ValueError:
        return error_exit(parser.prog, f"--players expects sizes like 2,3,4, got "
                          f"{args.players!r}")
    bad = [n for n in sizes if n not in TABLE_SIZES]
    if bad or not sizes:
        return error_exit(parser.prog, f"--players {args.players}: table sizes run from "
                          f"{TABLE_SIZES[0]} to {TABLE_SIZES[-1]}")
    command = (f"python -m agents.bench.calibrate --decks {args.decks} --seed {args.seed} "
               f"--players {','.join(map(str, sizes))} --workers {args.workers}")
    out = {"about": ABOUT, "anchor": ANCHOR, "anchor_rating": ANCHOR_RATING,
           "field": list(REFERENCE_FIELD), "measured": datetime.date.today().isoformat(),
           "command": command, "seed": args.seed, "decks": args.decks,
           "ratings": {}, "tables": {}, "truncated": {}, "elapsed_s": {}}
    start = time.perf_counter()
    for n in sizes:
        got = measure(n, args.decks, args.seed, args.workers, not args.no_progress)
        for key in ("ratings", "tables", "truncated", "elapsed_s"):
            out[key][str(n)] = got[key]
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"{n} players: " + ", ".join(f"{k} {v:.0f}" for k, v in got["ratings"].items())
              + f" ({got['elapsed_s']:.0f} s)", flush=True)
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

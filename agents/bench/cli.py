"""``pis-bench BOT`` (``python -m agents.bench BOT``): the benchmark card of one bot.

Bad input (an unknown bot, a table size the bot cannot sit at, a size outside 2..7, no
decks, an output that cannot be written) is one line on stderr and exit code 2, before
anything is played: a card can take a quarter of an hour, and a typo should not cost it.
With ``--json OUT`` a killed card is resumed by running the same command again
(``OUT.partial`` keeps the finished tables; a partial card of other settings is an error).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.bench.card import (
    DEFAULT_BUDGET,
    MATCH_DEALS,
    QUICK_BUDGET,
    default_matches,
    format_card,
    make_card,
    plot_card,
)
from agents.bench.field import REFERENCE_FIELD, TABLE_SIZES
from agents.bench.rating import load_reference
from agents.common.cli import error_exit, positive_int, program_name

SIZES_TEXT = f"{TABLE_SIZES[0]} to {TABLE_SIZES[-1]}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=program_name("python -m agents.bench"),
        description="The benchmark card of a bot: its win share and mean charge against "
        "n - 1 copies of each reference bot (random, greedy, heuristic and the evaluation "
        "set) at one-deal tables and four-deal matches, on duplicate decks, and one rating "
        "per table size on a fixed Elo scale (heuristic = 1000).",
        epilog="BOT: a registered name (heuristic, mc?samples=8, search), ppo:PATH or "
        "module:Class, as a tournament takes it; {n} in it is the table size "
        "(ppo:models/ppo_{n}p.zip). docs/leaderboard.md publishes the cards.")
    p.add_argument("spec", metavar="BOT", help="the bot to put on the card")
    p.add_argument("--players", default="2,3,4",
                   help=f"table sizes, comma-separated, each {SIZES_TEXT} (default 2,3,4)")
    p.add_argument("--decks", type=int, default=None,
                   help=f"duplicate decks of the one-deal tables (default {DEFAULT_BUDGET[0]}, "
                   "the published budget)")
    p.add_argument("--matches", type=int, default=None,
                   help=f"duplicate {MATCH_DEALS}-deal matches (default decks / {MATCH_DEALS}; "
                   "0: none)")
    p.add_argument("--seed", type=int, default=0, help="the decks' seed (default 0)")
    p.add_argument("--quick", action="store_true",
                   help=f"a small budget: {QUICK_BUDGET[0]} decks and {QUICK_BUDGET[1]} matches "
                   "(a fast bot's card in under 2 minutes on 2 cores)")
    p.add_argument("--json", metavar="OUT", default=None,
                   help="also write the card's figures; while it plays, OUT.partial keeps "
                   "the finished tables, and the same command run again goes on from them")
    p.add_argument("--plot", metavar="PNG", default=None, help="also draw the card")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="processes, >= 1 (default: all cores; with --backend ray: tasks in "
                   "flight)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes, or chunks of deals as Ray tasks (same figures)")
    p.add_argument("--address", default=None,
                   help="Ray cluster address with --backend ray (default: RAY_ADDRESS, else "
                   "a local Ray)")
    p.add_argument("--field", default=None,
                   help="only these reference bots, comma-separated (a partial card, not "
                   "comparable with the published ones; for quick checks)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def parse_sizes(text: str) -> list[int]:
    """``"2,3,4"`` -> ``[2, 3, 4]``; anything else is a ``ValueError`` that says what fits."""
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--players expects table sizes like 2,3,4 (each {SIZES_TEXT}), got "
                         f"{text!r}") from None
    bad = [n for n in sizes if n not in TABLE_SIZES]
    if not sizes or bad:
        raise ValueError(f"--players {text}: table sizes run from {SIZES_TEXT} "
                         f"(e.g. --players 2,3,4)")
    return list(dict.fromkeys(sizes))


def check_bot(spec: str, sizes: Sequence[int], matches: int) -> None:
    """Build the bot once at every size asked (and for matches when there are any), in
    this process: a ``ValueError`` names the size that fails and the sizes that fit."""
    from agents.tournament.matches import build_seat

    def fails(n: int, num_deals: int) -> str | None:
        try:
            build_seat(spec.replace("{n}", str(n)), n, None, num_deals)
        except Exception as e:  # any bot's own error: reported, not raised
            return " ".join(str(e).split()) or type(e).__name__
        return None

    for n in sizes:
        error = fails(n, 1)
        if error is None:
            continue
        fit = [m for m in TABLE_SIZES if m != n and fails(m, 1) is None]
        if not fit:
            raise ValueError(f"bot {spec!r}: {error}")
        raise ValueError(f"bot {spec!r} cannot sit at {n} players ({error}); it sits at "
                         f"{','.join(map(str, fit))} (--players {','.join(map(str, fit))})")
    if matches:
        for n in sizes:
            error = fails(n, MATCH_DEALS)
            if error is not None:
                raise ValueError(f"bot {spec!r} cannot play {MATCH_DEALS}-deal matches at {n} "
                                 f"players ({error}); --matches 0 plays one-deal tables only")


def check_output(path: str | None, flag: str) -> None:
    """The folder of ``--json``/``--plot`` must exist and be writable, before any play."""
    if path is None:
        return
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        raise ValueError(f"{flag} {path}: no folder {folder}")
    if Path(path).is_dir():
        raise ValueError(f"{flag} {path}: is a folder, give a file name")


def partial_path(json_out: str | None) -> str | None:
    """Where a card written to ``--json OUT`` keeps its finished tables while it plays
    (``OUT.partial``): the same command, run again after a kill, goes on from there."""
    return None if json_out is None else json_out + ".partial"


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; see the module docstring."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        sizes = parse_sizes(args.players)
        budget = QUICK_BUDGET if args.quick else DEFAULT_BUDGET
        decks = budget[0] if args.decks is None else args.decks
        if decks < 1:
            raise ValueError(f"--decks {decks}: a card needs at least 1 deck (--quick plays "
                             f"{QUICK_BUDGET[0]}, the default {DEFAULT_BUDGET[0]})")
        matches = (budget[1] if args.decks is None else default_matches(decks)) \
            if args.matches is None else args.matches
        if matches < 0:
            raise ValueError(f"--matches {matches}: give 0 (no matches) or more")
        if args.seed < 0:
            raise ValueError(f"--seed {args.seed}: give a non-negative int")
        field = list(REFERENCE_FIELD)
        if args.field is not None:
            field = [f.strip() for f in args.field.split(",") if f.strip()]
            unknown = [f for f in field if f not in REFERENCE_FIELD]
            if not field or unknown:
                raise ValueError(f"--field {args.field}: the reference field is "
                                 f"{','.join(REFERENCE_FIELD)}")
        check_output(args.json, "--json")
        check_output(args.plot, "--plot")
        check_bot(args.spec, sizes, matches)
        reference = load_reference()
        for n in sizes:
            stored = reference["ratings"].get(str(n), {})
            missing = [f for f in field if f not in stored]
            if missing:
                raise ValueError(f"the stored reference ratings lack {', '.join(missing)} at "
                                 f"{n} players: run python -m agents.bench.calibrate")
        card = make_card(args.spec, sizes, decks, matches, args.seed, args.workers,
                         not args.no_progress, field, args.backend, args.address, reference,
                         checkpoint=partial_path(args.json))
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        return error_exit(parser.prog, str(e))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    print(format_card(card, reference))
    print(f"\n({card['elapsed_s']:.0f} s, {card['date']})")
    try:
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(card, f, indent=1)
                f.write("\n")
            print(f"wrote {args.json}")
            Path(partial_path(args.json)).unlink(missing_ok=True)
        if args.plot:
            plot_card(card, args.plot)
            print(f"wrote {args.plot}")
    except OSError as e:
        print(f"{parser.prog}: error: cannot write: {e}", file=sys.stderr)
        return 1
    return 0


__all__ = ["build_parser", "check_bot", "main", "parse_sizes", "partial_path"]

"""The command line: ``python -m agents.tournament`` (``pis-tournament``) plays a
tournament; ``python -m agents.tournament compare A/deals.csv B/deals.csv`` pairs two of
them deal by deal (``agents.tournament.compare``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.common.cli import (
    check_out_dir,
    error_exit,
    parse_options,
    positive_int,
    program_name,
    read_rules,
)
from agents.tournament.driver import run_tournament
from agents.tournament.record import record_games


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=program_name("python -m agents.tournament"),
        description="Duplicate-deal tournament between Pis Yedili bots.",
        epilog="Agent specs: a registered name (random, greedy, heuristic, held_out, mc, search, "
        "ppo:PATH), or module:Class; append ?key=value&... for keyword arguments. Two "
        "tournaments on the same deals, paired: "
        "python -m agents.tournament compare A/deals.csv B/deals.csv.",
    )
    p.add_argument("--agents", default="", help="comma-separated agent specs")
    p.add_argument("--players", type=int, default=None,
                   help="seats per table (default: the rules' num_players, else 2)")
    p.add_argument("--deals", type=int, default=1000, help="distinct duplicate deals")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", default=None, help="rules YAML file (configs/rules/*.yaml)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules option, e.g. --option seven_penalty=double (repeatable)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="processes, >= 1 (default: all cores)")
    p.add_argument("--out", default="runs/tournament",
                   help="output folder (checked before any game is played)")
    p.add_argument("--table", action="append", default=[], metavar="A,B,...",
                   help="an explicit lineup (repeatable); replaces the automatic tables")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes, or chunks of deals as Ray tasks (same results)")
    p.add_argument("--address", default=None,
                   help="Ray cluster address with --backend ray (default: RAY_ADDRESS, "
                   "else a local Ray)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-save", action="store_true", help="print the table only")
    p.add_argument("--record", type=int, default=0, metavar="N",
                   help="save the first N games as export_history() JSON in OUT/histories "
                   "(for the browser table's replay view)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; bad input is one line on stderr and exit code 2, before any game."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:
        from agents.tournament.compare import main as compare

        return compare(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        from pis_env import Rules

        options = parse_options(args.option)
        if args.players is not None:
            options["num_players"] = args.players
        rules = read_rules(args.rules, **options) if args.rules else Rules.from_options(**options)
        agents = [a for a in args.agents.split(",") if a.strip()]
        tables = [[a for a in t.split(",") if a.strip()] for t in args.table]
        if not agents and not tables:
            raise ValueError("give --agents A,B,... (or --table lineups)")
        if args.record < 0:
            raise ValueError(f"--record must be >= 0, got {args.record}")
        if not args.no_save or args.record:
            check_out_dir(args.out)
        result = run_tournament(
            agents, num_players=None, deals=args.deals, seed=args.seed, rules=rules,
            workers=args.workers, progress=not args.no_progress, tables=tables or None,
            backend=args.backend, address=args.address,
        )
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        return error_exit(parser.prog, str(e))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    print(result.table())
    print(f"\n{result.deals * len(result.tables) * result.num_players} games in "
          f"{result.elapsed_s:.1f} s on {result.workers} worker(s)")
    if not args.no_save:
        try:
            paths = result.save(args.out)
        except OSError as e:
            print(f"{parser.prog}: error: cannot write the results to {args.out}: {e}",
                  file=sys.stderr)
            return 1
        print("wrote " + ", ".join(str(p) for p in paths))
    if args.record:
        try:
            saved = record_games(result, args.record, Path(args.out) / "histories")
        except (OSError, RuntimeError) as e:
            return error_exit(parser.prog, f"--record: {e}")
        print(f"recorded {len(saved)} game(s) in {Path(args.out) / 'histories'}")
    return 0

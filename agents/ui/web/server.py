"""``pis-serve`` / ``python -m agents.ui.web``: the browser table on a local server.

::

    pis-serve                                        # you against heuristic, 2 players
    pis-serve --bots ppo:models/ppo_2p.zip --allow heuristic,mc --port 8001
    pis-serve --players 4 --bots heuristic,greedy,mc --deals 4 --delay 300
    pis-serve --rules configs/rules/strict.yaml --option seven_penalty=double --seed 7

Every bot that may sit at the table is named here (``--bots``: the default lineup, one
spec per other seat or one spec for all of them; ``--allow``: more specs a new game may
choose). A request only picks among these, so no request names code to import. Each bot
is built once at start-up (a policy file is read then and never again), so a bad spec or
policy file stops the server with a message before it serves anything; a game's bots are
copies of these.

Behind a reverse proxy, name the host and origin the browser uses (``--allow-host
cards.example.com --allow-origin https://cards.example.com``); the limits
(``--max-body-bytes``, ``--max-games``, ``--max-memory-mb``, ``--move-time-limit``) and
``--show-bot-policy`` are described in docs/browser-table.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agents.common.cli import error_exit, parse_options, read_rules

PROG = "pis-serve"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play Pis Yedili in the browser.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--players", type=int, default=None,
                   help="players at the table, you included (default: the rules', else 2)")
    p.add_argument("--bots", default="heuristic",
                   help="bots in the other seats: one spec for all, or one per seat "
                        "(random, greedy, heuristic, held_out, mc, search, ppo:PATH)")
    p.add_argument("--allow", default="",
                   help="more bot specs a new game may choose from the page")
    p.add_argument("--deals", type=int, default=None, help="deals in a match (default 1)")
    p.add_argument("--rules", default=None, help="rules YAML file (configs/rules/*.yaml)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules option, e.g. --option seven_penalty=double (repeatable)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed: game k of this server is seeded from it (default: random)")
    p.add_argument("--delay", type=int, default=600,
                   help="milliseconds between bot moves on the page (adjustable there)")
    p.add_argument("--max-games", type=int, default=200,
                   help="games kept in memory (the least recently used go first)")
    p.add_argument("--max-memory-mb", type=float, default=256.0,
                   help="the games' weight kept in memory, in MiB: 64 KiB a game plus the "
                        "size of each of its bots (a ppo bot about 0.55 MiB); the least "
                        "recently used go first (default 256)")
    p.add_argument("--max-body-bytes", type=int, default=2_000_000,
                   help="largest request body; bigger ones are refused before they are "
                        "read (default 2000000: a 100-deal history fits)")
    p.add_argument("--bot-workers", type=int, default=2,
                   help="worker processes where the bots think, off the request path; 0 "
                        "runs them in a thread of the server (no time limit; default 2)")
    p.add_argument("--move-time-limit", type=float, default=30.0,
                   help="seconds a bot may think about one move; past it its worker is "
                        "restarted and its games end with a message (default 30)")
    p.add_argument("--show-bot-policy", action="store_true",
                   help="show each ppo bot's probabilities over its legal moves in the move "
                        "log during play. They name cards in the bot's hand: off by default, "
                        "and the page says so when on")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="a Host name this server answers to besides 127.0.0.1, localhost, "
                        "::1 and --host (repeatable; '*' for any, behind a proxy that checks)")
    p.add_argument("--allow-origin", action="append", default=[], metavar="URL",
                   help="a page origin allowed to call the API besides the server's own, "
                        "e.g. https://cards.example.com (repeatable)")
    return p


def _specs(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def build(args: argparse.Namespace):
    """``(TableConfig, bots)`` from parsed arguments, ``bots`` mapping each spec offered
    to its prototype agent; ``ValueError`` with a message for anything wrong (rules, bot
    specs, policy files, limits)."""
    from agents import make_for_table
    from agents.ui.web.tables import TableConfig
    from pis_env import Rules

    options = parse_options(args.option)
    if args.players is not None:
        options["num_players"] = args.players
    if args.deals is not None:
        options["num_deals"] = args.deals
    rules = read_rules(args.rules, **options) if args.rules else Rules.from_options(**options)
    # Every decision at the table is someone's: an illegal move is refused, never forfeited.
    rules = rules.replace(illegal_action="raise")
    n = rules.num_players
    bots = _specs(args.bots)
    if len(bots) == 1:
        bots = bots * (n - 1)
    if len(bots) != n - 1:
        raise ValueError(f"--bots: a {n}-player table has {n - 1} other seat(s); give one spec "
                         f"for all or {n - 1}, got {len(bots)}")
    if "human" in bots or "human" in _specs(args.allow):
        raise ValueError("--bots/--allow name bots; the person at the page is seat 0")
    offered = tuple(dict.fromkeys(bots + _specs(args.allow)))
    if args.delay < 0 or args.max_games < 1:
        raise ValueError("--delay must be >= 0 and --max-games >= 1")
    if args.max_memory_mb <= 0 or args.max_body_bytes < 1024:
        raise ValueError("--max-memory-mb must be > 0 and --max-body-bytes >= 1024")
    if args.bot_workers < 0 or args.move_time_limit <= 0:
        raise ValueError("--bot-workers must be >= 0 and --move-time-limit > 0")
    prototypes = {}
    for spec in offered:
        try:
            prototypes[spec] = make_for_table(spec, rules.to_dict(), seed=0)
        except (ValueError, TypeError, OSError, ImportError) as e:
            raise ValueError(f"bot {spec!r}: {e}") from None
    config = TableConfig(rules=rules, bots=tuple(bots), offered=offered, seed=args.seed,
                         delay_ms=args.delay, max_games=args.max_games,
                         max_memory_mb=args.max_memory_mb,
                         show_bot_policy=args.show_bot_policy, bot_workers=args.bot_workers,
                         move_time_limit=args.move_time_limit)
    return config, prototypes


def app_from_args(args: argparse.Namespace):
    """The app ``pis-serve`` serves for parsed arguments (``ValueError`` as ``build``)."""
    from agents.ui.web.app import create_app

    config, prototypes = build(args)
    hosts = tuple(args.allow_host) + ((args.host,) if args.host not in ("0.0.0.0", "::")
                                      else ())
    return create_app(config, prototypes, allowed_hosts=hosts,
                      allowed_origins=tuple(args.allow_origin),
                      max_body_bytes=args.max_body_bytes)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import uvicorn

        from agents.ui.web.app import create_app  # noqa: F401  (the web extra is installed)
    except ImportError as e:
        return error_exit(PROG, f"{e}: install the web extra: pip install 'pis-yedili[web]'")
    try:
        app = app_from_args(args)
    except ValueError as e:
        return error_exit(PROG, str(e))
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Pis Yedili table: http://{host}:{args.port}/  (Ctrl-C stops the server)",
          flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())

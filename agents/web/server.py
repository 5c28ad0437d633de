"""``pis-serve`` / ``python -m agents.web``: the browser table on a local server.

::

    pis-serve                                        # you against heuristic, 2 players
    pis-serve --bots ppo:models/ppo_2p.zip --allow heuristic,mc --port 8001
    pis-serve --players 4 --bots heuristic,greedy,mc --deals 4 --delay 300
    pis-serve --rules configs/rules/strict.yaml --option seven_penalty=double --seed 7

Every bot that may sit at the table is named here (``--bots``: the default lineup, one
spec per other seat or one spec for all of them; ``--allow``: more specs a new game may
choose). A request only picks among these, so no request names code to import. Each bot
is built once at start-up, so a bad spec or policy file stops the server with a message
before it serves anything.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..cli import error_exit, parse_options, read_rules

PROG = "pis-serve"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play Pis Yedili in the browser.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--players", type=int, default=None,
                   help="players at the table, you included (default: the rules', else 2)")
    p.add_argument("--bots", default="heuristic",
                   help="bots in the other seats: one spec for all, or one per seat "
                        "(random, greedy, heuristic, mc, ppo:PATH)")
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
    return p


def _specs(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def build(args: argparse.Namespace):
    """``(TableConfig, policy views)`` from parsed arguments; ``ValueError`` with a
    message for anything wrong (rules, bot specs, policy files)."""
    from pis_env import Rules

    from .. import make_for_table
    from .policy import PolicyView
    from .tables import TableConfig

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
    views = {}
    for spec in offered:
        try:
            agent = make_for_table(spec, rules.to_dict(), seed=0)
        except (ValueError, TypeError, OSError, ImportError) as e:
            raise ValueError(f"bot {spec!r}: {e}") from None
        if spec.startswith("ppo:"):
            views[spec] = PolicyView(spec, agent)
    if args.delay < 0 or args.max_games < 1:
        raise ValueError("--delay must be >= 0 and --max-games >= 1")
    config = TableConfig(rules=rules, bots=tuple(bots), offered=offered, seed=args.seed,
                         delay_ms=args.delay, max_games=args.max_games)
    return config, views


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import uvicorn

        from .app import create_app
    except ImportError as e:
        return error_exit(PROG, f"{e}: install the web extra: pip install 'pis-yedili[web]'")
    try:
        config, views = build(args)
    except ValueError as e:
        return error_exit(PROG, str(e))
    app = create_app(config, views)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Pis Yedili table: http://{host}:{args.port}/  (Ctrl-C stops the server)",
          flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``pis-serve`` / ``python -m agents.ui.web``: the browser table on a local server.

::

    pis-serve                                  # you against heuristic, a four-deal match
    pis-serve --bots ppo:models/ppo_2p.zip --allow heuristic,mc --port 8001 --deals 1
    pis-serve --players 4 --bots heuristic,greedy,mc --delay 300
    pis-serve --rules configs/rules/strict.yaml --allow-arranged --seed 7

Every bot that may sit at the table is named here (``--bots``: the default lineup, one
spec per other seat or one spec for all of them; ``--allow``: more specs a new game may
choose). A request only picks among these, so no request names code to import. Each bot
is built once at start-up (a policy file is read then and never again), so a bad spec or
policy file stops the server with a message before it serves anything; a game's bots are
copies of these.

Behind a reverse proxy, name the host and origin the browser uses (``--allow-host
cards.example.com --allow-origin https://cards.example.com``). ``--host 0.0.0.0`` (or
``::``) listens on every address: the line printed then names the loopback address (a
browser sends ``Host: 0.0.0.0`` to no server), the table answers to this machine's own
names too, and a warning on stderr says it is open to the network; the limits
(``--max-body-bytes``, ``--max-games``, ``--max-memory-mb``, ``--move-time-limit``, the
per-session quotas, ``--request-deadline``, ``--max-connections``), ``--allow-arranged``
and ``--show-bot-policy`` are described in docs/browser-table.md.

The server is uvicorn with its concurrency limit (``--max-connections``) and
``deadline.DeadlineProtocol``: uvicorn's HTTP/1.1 protocol with a deadline for each request's
headers and body (uvicorn itself has none, and its keep-alive timeout restarts on every
byte), so a client that trickles a request is dropped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agents.common.cli import error_exit, parse_options, read_rules

PROG = "pis-serve"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play Pis Yedili in the browser.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (127.0.0.1); 0.0.0.0 or :: opens the table to "
                        "the network, answering to this machine's name and addresses")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--players", type=int, default=None,
                   help="players at the table, you included (default: the rules', else 2)")
    p.add_argument("--bots", default="heuristic",
                   help="bots in the other seats: one spec for all, or one per seat "
                        "(random, greedy, heuristic, held_out, mc, search, ppo:PATH)")
    p.add_argument("--allow", default="",
                   help="more bot specs a new game may choose from the page")
    p.add_argument("--deals", type=int, default=None,
                   help="deals in a match (default: the rules', else 4, as RULES.md: the "
                        "lowest total wins); --deals 1 for single deals")
    p.add_argument("--rules", default=None, help="rules YAML file (configs/rules/*.yaml)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules option, e.g. --option seven_penalty=double (repeatable)")
    p.add_argument("--seed", type=int, default=None,
                   help="game k of this server is dealt from this seed (needs "
                        "--allow-arranged; default: 128 bits of the OS's CSPRNG a game)")
    p.add_argument("--allow-arranged", action="store_true",
                   help="let --seed, and a new game's chosen seed, deck or dealer, arrange "
                        "deals; the page marks such games as arranged (off by default)")
    p.add_argument("--delay", type=int, default=600,
                   help="milliseconds between bot moves on the page (adjustable there)")
    p.add_argument("--bot-min-ms", type=int, default=None,
                   help="a bot's move is shown no sooner than this after it was asked for, "
                        "so its timing does not tell a forced move (default: --delay)")
    p.add_argument("--max-games", type=int, default=200,
                   help="games kept in memory (the least recently used go first)")
    p.add_argument("--max-memory-mb", type=float, default=256.0,
                   help="the games' weight kept in memory, in MiB: 64 KiB a game plus the "
                        "size of each of its bots (a ppo bot about 0.55 MiB); the least "
                        "recently used go first (default 256)")
    p.add_argument("--max-body-bytes", type=int, default=2_000_000,
                   help="largest request body; bigger ones are refused before they are "
                        "read (default 2000000: a 100-deal history fits)")
    p.add_argument("--max-games-per-session", type=int, default=20,
                   help="games one browser session keeps (past it its oldest goes; "
                        "default 20)")
    p.add_argument("--new-games-per-minute", type=int, default=60,
                   help="new games one browser session may start a minute (default 60)")
    p.add_argument("--protect-minutes", type=float, default=5.0,
                   help="an unfinished game with a move this recent is never evicted for "
                        "another session's new game: that is refused with 503 (default 5)")
    p.add_argument("--request-deadline", type=float, default=10.0,
                   help="seconds a client has to send a request's headers and body, from "
                        "its connection or its previous answer; slower ones are dropped "
                        "(default 10)")
    p.add_argument("--max-connections", type=int, default=200,
                   help="connections served at once (uvicorn's limit_concurrency); past it "
                        "a request gets uvicorn's 503 (default 200)")
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
    elif "num_deals" not in options and not args.rules:
        options["num_deals"] = 4
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
    if args.request_deadline <= 0 or args.max_connections < 1:
        raise ValueError("--request-deadline must be > 0 and --max-connections >= 1")
    if args.seed is not None and not args.allow_arranged:
        raise ValueError("--seed arranges every deal: add --allow-arranged (the page then "
                         "marks each game as arranged)")
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
                         move_time_limit=args.move_time_limit,
                         allow_arranged=args.allow_arranged, bot_min_ms=args.bot_min_ms,
                         max_games_per_session=args.max_games_per_session,
                         new_games_per_minute=args.new_games_per_minute,
                         protect_minutes=args.protect_minutes)
    return config, prototypes


def weigh(config, prototypes) -> dict[str, int]:
    """What each spec's bot holds in a game, for the memory cap (``bots.warm_weight``)."""
    from agents.ui.web.bots import warm_weight

    return {spec: warm_weight(agent, config.rules.to_dict())
            for spec, agent in prototypes.items()}


#: Addresses that mean "every address of this machine": no browser's ``Host``.
WILDCARDS = ("0.0.0.0", "::", "")


def own_names() -> tuple[str, ...]:
    """This machine's host name and the addresses it resolves to, and the address of the
    interface its default route leaves by: what a browser elsewhere on the network puts in
    ``Host`` when the table listens on every address. Each found in this machine's own
    tables (a UDP socket's ``connect`` sends nothing); one that cannot be found is left
    out."""
    import socket

    names: list[str] = []
    try:
        hostname = socket.gethostname()
    except OSError:
        hostname = ""
    if hostname:
        names.append(hostname)
        try:
            names += [info[4][0] for info in socket.getaddrinfo(hostname, None)]
        except (OSError, UnicodeError):
            pass
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as udp:
                udp.connect((probe, 9))  # a documentation address: picks a route only
                names.append(udp.getsockname()[0])
        except OSError:
            pass
    return tuple(dict.fromkeys(n.split("%")[0] for n in names if n))


def answered_hosts(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``Host`` names the app answers to besides the local ones: ``--allow-host``,
    and ``--host``, or for an address of every interface (``0.0.0.0``, ``::``, which no
    browser sends) this machine's own names (``own_names``)."""
    own = own_names() if args.host in WILDCARDS else (args.host,)
    return tuple(dict.fromkeys((*args.allow_host, *own)))


def app_from_args(args: argparse.Namespace):
    """The app ``pis-serve`` serves for parsed arguments (``ValueError`` as ``build``)."""
    from agents.ui.web.app import create_app

    config, prototypes = build(args)
    hosts = answered_hosts(args)
    return create_app(config, prototypes, allowed_hosts=hosts,
                      allowed_origins=tuple(args.allow_origin),
                      max_body_bytes=args.max_body_bytes,
                      bot_weights=weigh(config, prototypes))


def uvicorn_config(app, args: argparse.Namespace):
    """uvicorn's settings for ``app``: the address, the concurrency limit and the
    request deadline of ``args``."""
    import uvicorn

    from agents.ui.web.deadline import DeadlineProtocol

    protocol = type("Deadline", (DeadlineProtocol,), {"deadline": args.request_deadline})
    return uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                          http=protocol, limit_concurrency=args.max_connections,
                          timeout_keep_alive=5)


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
    print(f"Pis Yedili table: {url(browsed_host(args.host), args.port)}  (Ctrl-C stops the "
          "server)", flush=True)
    if args.host in WILDCARDS:
        print(open_warning(args, answered_hosts(args)), file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn_config(app, args)).run()
    return 0


def browsed_host(host: str) -> str:
    """The address a browser on this machine opens for a server listening on ``host``:
    the loopback address for ``0.0.0.0``/``::`` (no browser's address: a page asked for
    at ``http://0.0.0.0:PORT/`` would send ``Host: 0.0.0.0``, answered by no server)."""
    if host in WILDCARDS:
        return "::1" if host == "::" else "127.0.0.1"
    return host


def url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def open_warning(args: argparse.Namespace, hosts: Sequence[str]) -> str:
    """One line: the table is open to the network, where others reach it, and how to
    add a name it is reached by that is not one of this machine's own."""
    from agents.ui.web.guard import LOCAL_HOSTS

    shown = [h for h in hosts if h not in (*args.allow_host, *LOCAL_HOSTS)
             and (args.host == "::" or ":" not in h)]  # 0.0.0.0 listens on IPv4 only
    where = ", ".join(url(h, args.port) for h in shown)
    return (f"{PROG}: warning: --host {args.host or repr('')} opens the table to the "
            "network (anyone who can reach this machine can play)"
            + (f", at {where}" if where else "")
            + "; a name it is reached by besides these needs --allow-host NAME")


if __name__ == "__main__":
    sys.exit(main())

"""``pis-serve`` below the HTTP layer (``agents.ui.web.server``): its defaults, what each
argument sets in the table's configuration, each limit refused at its boundary with its
own words, the hosts the app answers to, uvicorn's settings and the start-up line."""

from __future__ import annotations

import io

import pytest
from fastapi.testclient import TestClient

from agents import make_for_table
from agents.ui.web import server
from agents.ui.web.app import create_app
from agents.ui.web.bots import warm_weight
from agents.ui.web.deadline import DeadlineProtocol
from agents.ui.web.guard import Guard
from agents.ui.web.server import app_from_args, build, build_parser, uvicorn_config
from agents.ui.web.tables import TableConfig, bot_bytes
from pis_env import Rules, raw_env

DEFAULTS = {
    "host": "127.0.0.1", "port": 8000, "players": None, "bots": "heuristic", "allow": "",
    "deals": None, "rules": None, "option": [], "seed": None, "allow_arranged": False,
    "delay": 600, "bot_min_ms": None, "max_games": 200, "max_memory_mb": 256.0,
    "max_body_bytes": 2_000_000, "max_games_per_session": 20, "new_games_per_minute": 60,
    "protect_minutes": 5.0, "request_deadline": 10.0, "max_connections": 200,
    "bot_workers": 2, "move_time_limit": 30.0, "show_bot_policy": False, "allow_host": [],
    "allow_origin": [],
}


def parse(*argv: str):
    return build_parser().parse_args(["--bots", "random", *argv])


def test_the_defaults_and_the_types_of_the_command_line():
    parser = build_parser()
    assert parser.prog == "pis-serve"
    assert vars(parser.parse_args([])) == DEFAULTS
    args = parser.parse_args(["--port", "8001", "--move-time-limit", "2.5", "--players", "3",
                              "--deals", "2", "--seed", "4"])
    assert (args.port, args.move_time_limit, args.players, args.deals, args.seed) == (
        8001, 2.5, 3, 2, 4)
    with pytest.raises(SystemExit):
        parser.parse_args(["--move-time-limit", "soon"])


def test_every_argument_reaches_the_table_configuration():
    config, prototypes = build(parse(
        "--players", "3", "--bots", "random,greedy", "--allow", "heuristic, random,",
        "--seed", "9", "--allow-arranged", "--delay", "0", "--bot-min-ms", "5",
        "--max-games", "1", "--max-memory-mb", "0.5", "--show-bot-policy",
        "--bot-workers", "1", "--move-time-limit", "0.5", "--max-games-per-session", "3",
        "--new-games-per-minute", "4", "--protect-minutes", "0.25",
        "--option", "seven_penalty=double"))
    assert config == TableConfig(
        rules=Rules(num_players=3, num_deals=4, seven_penalty="double",
                    illegal_action="raise"),
        bots=("random", "greedy"), offered=("random", "greedy", "heuristic"), seed=9,
        delay_ms=0, max_games=1, max_memory_mb=0.5, show_bot_policy=True, bot_workers=1,
        move_time_limit=0.5, allow_arranged=True, bot_min_ms=5, max_games_per_session=3,
        new_games_per_minute=4, protect_minutes=0.25)
    assert list(prototypes) == ["random", "greedy", "heuristic"]


def test_a_match_is_four_deals_unless_the_arguments_or_the_rules_file_say_otherwise():
    def deals(*argv):
        return build(parse(*argv))[0].rules.num_deals

    assert deals() == 4
    assert deals("--deals", "1") == 1
    assert deals("--option", "num_deals=2") == 2
    assert deals("--rules", "configs/rules/strict.yaml") == 1  # the file's (the default)
    strict = build(parse("--rules", "configs/rules/strict.yaml", "--option",
                         "seven_penalty=double", "--players", "3", "--bots", "random"))[0]
    assert strict.rules == Rules.from_yaml("configs/rules/strict.yaml").replace(
        seven_penalty="double", num_players=3, illegal_action="raise")
    assert strict.bots == ("random", "random")


def test_the_prototypes_are_built_from_seed_0():
    _, prototypes = build(parse())
    reference = make_for_table("random", Rules(num_deals=4).to_dict(), seed=0)
    env = raw_env(num_deals=4)
    env.reset(seed=2)
    observation = env.observe("player_0")  # three legal moves
    moves = [int(prototypes["random"].act(observation)) for _ in range(20)]
    assert moves == [int(reference.act(observation)) for _ in range(20)]
    assert len(set(moves)) > 1  # a random bot, so the seed is what made them equal


@pytest.mark.parametrize("argv, words", [
    (["--players", "3", "--bots", "random,random,random"],
     "--bots: a 3-player table has 2 other seat(s); give one spec for all or 2, got 3"),
    (["--allow", "human"], "--bots/--allow name bots; the person at the page is seat 0"),
    (["--bots", "human"], "--bots/--allow name bots; the person at the page is seat 0"),
    (["--delay", "-1"], "--delay must be >= 0 and --max-games >= 1"),
    (["--max-games", "0"], "--delay must be >= 0 and --max-games >= 1"),
    (["--max-memory-mb", "0"], "--max-memory-mb must be > 0 and --max-body-bytes >= 1024"),
    (["--max-body-bytes", "1023"],
     "--max-memory-mb must be > 0 and --max-body-bytes >= 1024"),
    (["--bot-workers", "-1"], "--bot-workers must be >= 0 and --move-time-limit > 0"),
    (["--move-time-limit", "0"], "--bot-workers must be >= 0 and --move-time-limit > 0"),
    (["--request-deadline", "0"],
     "--request-deadline must be > 0 and --max-connections >= 1"),
    (["--max-connections", "0"],
     "--request-deadline must be > 0 and --max-connections >= 1"),
    (["--seed", "3"], "--seed arranges every deal: add --allow-arranged (the page then "
                      "marks each game as arranged)"),
    (["--max-games-per-session", "0"],
     "per-session limits must be >= 1 and --protect-minutes >= 0"),
    (["--bot-min-ms", "-1"], "--bot-min-ms must be >= 0"),
])
def test_each_wrong_argument_is_refused_with_its_own_words(argv, words):
    with pytest.raises(ValueError) as refused:
        build(parse(*argv))
    assert str(refused.value) == words


def test_the_smallest_allowed_limits_are_accepted():
    config, _ = build(parse("--delay", "0", "--max-games", "1", "--max-memory-mb", "0.01",
                            "--max-body-bytes", "1024", "--bot-workers", "0",
                            "--move-time-limit", "0.01", "--request-deadline", "0.01",
                            "--max-connections", "1", "--protect-minutes", "0",
                            "--bot-min-ms", "0"))
    assert (config.max_games, config.max_memory_mb, config.move_time_limit) == (1, 0.01, 0.01)


def test_a_bot_spec_that_cannot_be_built_names_itself():
    with pytest.raises(ValueError) as refused:
        build(parse("--allow", "ppo:nowhere/policy.zip"))
    assert str(refused.value).startswith("bot 'ppo:nowhere/policy.zip': ")


@pytest.mark.parametrize("names, words", [
    ({"bots": ("random",), "offered": ("random",), "rules": Rules(num_players=3)},
     "a 3-player table needs 2 bot(s), got ['random']"),
    ({"bots": ("random",), "offered": ("greedy",)}, "the default bots ['random'] must be offered"),
    ({"seed": 3}, "--seed arranges every deal: it needs --allow-arranged"),
    ({"max_games_per_session": 0}, "per-session limits must be >= 1 and --protect-minutes >= 0"),
    ({"new_games_per_minute": 0}, "per-session limits must be >= 1 and --protect-minutes >= 0"),
    ({"protect_minutes": -0.5}, "per-session limits must be >= 1 and --protect-minutes >= 0"),
    ({"bot_min_ms": -1}, "--bot-min-ms must be >= 0"),
])
def test_a_table_configuration_checks_itself(names, words):
    fields = {"rules": Rules(), "bots": ("random",), "offered": ("random",)} | names
    with pytest.raises(ValueError) as refused:
        TableConfig(**fields)
    assert str(refused.value) == words
    TableConfig(rules=Rules(), bots=("random",), offered=("random",), protect_minutes=0,
                max_games_per_session=1, new_games_per_minute=1, bot_min_ms=0)


@pytest.mark.parametrize("host, answered", [
    ("cards.local", True), ("0.0.0.0", False), ("::", False)])
def test_the_app_answers_to_its_own_host_unless_it_listens_on_every_address(host, answered):
    args = parse("--bot-workers", "0", "--host", host, "--allow-host", "table.example")
    app = app_from_args(args)
    with TestClient(app, base_url="http://table.example") as api:
        assert api.get("/api/config").status_code == 200
    name = f"[{host}]" if ":" in host else host
    with TestClient(app, base_url=f"http://{name}") as api:
        assert (api.get("/api/config").status_code == 200) is answered


def test_the_apps_bots_are_weighed_after_play():
    args = parse("--bot-workers", "0", "--bots", "heuristic")
    app = app_from_args(args)
    rules = Rules(num_deals=4, illegal_action="raise").to_dict()
    expected = warm_weight(make_for_table("heuristic", rules, seed=0), rules)
    assert app.state.games.bot_weights == {"heuristic": expected}


def test_uvicorn_gets_the_address_the_limits_and_the_request_deadline():
    args = parse("--host", "::1", "--port", "8011", "--max-connections", "7",
                 "--request-deadline", "2.5")
    app = object()
    config = uvicorn_config(app, args)
    assert (config.app, config.host, config.port, config.log_level) == (
        app, "::1", 8011, "warning")
    assert (config.limit_concurrency, config.timeout_keep_alive) == (7, 5)
    assert issubclass(config.http, DeadlineProtocol) and config.http.deadline == 2.5
    assert config.http.__name__ == "Deadline"


class Stdout(io.StringIO):
    """Standard output that notes what had been written at each flush."""

    def __init__(self):
        super().__init__()
        self.flushed: list[str] = []

    def flush(self):
        self.flushed.append(self.getvalue())


@pytest.mark.parametrize("host, shown", [("::1", "[::1]"), ("127.0.0.1", "127.0.0.1")])
def test_main_prints_the_tables_address_then_serves(host, shown, monkeypatch, capsys):
    import uvicorn

    served = []

    class Server:
        def __init__(self, config):
            self.config = config

        def run(self):
            served.append((self.config, stdout.flushed[-1]))

    stdout = Stdout()
    monkeypatch.setattr(uvicorn, "Server", Server)
    monkeypatch.setattr("sys.stdout", stdout)
    assert server.main(["--bots", "random", "--bot-workers", "0", "--host", host,
                        "--port", "8012", "--request-deadline", "3"]) == 0
    line = f"Pis Yedili table: http://{shown}:8012/  (Ctrl-C stops the server)\n"
    ((config, flushed),) = served
    assert flushed == line  # on the terminal before the server blocks
    assert (config.host, config.port, config.http.deadline) == (host, 8012, 3.0)
    assert config.app.state.games.config.bots == ("random",)
    with TestClient(config.app, base_url=f"http://{shown}:8012") as api:
        assert api.get("/api/config").status_code == 200  # the address printed answers
    assert capsys.readouterr().err == ""  # a local address: nothing to warn of


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_every_address_is_answered_by_the_machines_names_and_said_to_be_open(
        host, monkeypatch, capsys):
    """``--host 0.0.0.0``: no browser sends ``Host: 0.0.0.0``; the table answers to the
    loopback address it prints and to this machine's own names, and one line on stderr
    says it is open to the network and how to add another name."""
    import uvicorn

    served = []
    monkeypatch.setattr(uvicorn, "Server", lambda config: type(
        "Server", (), {"run": lambda self: served.append(config)})())
    monkeypatch.setattr(server, "own_names", lambda: ("cardroom", "192.0.2.7", "fd00::7"))
    assert server.main(["--bots", "random", "--bot-workers", "0", "--host", host,
                        "--port", "8013", "--allow-host", "cards.example"]) == 0
    (config,) = served
    out, err = capsys.readouterr()
    local = "[::1]" if host == "::" else "127.0.0.1"
    assert out == f"Pis Yedili table: http://{local}:8013/  (Ctrl-C stops the server)\n"
    reached = ("http://cardroom:8013/, http://192.0.2.7:8013/"
               + (", http://[fd00::7]:8013/" if host == "::" else ""))  # 0.0.0.0: IPv4
    assert err == (f"pis-serve: warning: --host {host} opens the table to the network "
                   f"(anyone who can reach this machine can play), at {reached}; a name it "
                   "is reached by besides these needs --allow-host NAME\n")
    for name in (local, "localhost", "cardroom", "192.0.2.7", "[fd00::7]", "cards.example"):
        with TestClient(config.app, base_url=f"http://{name}:8013") as api:
            assert api.get("/api/config").status_code == 200, name
    for name in ("0.0.0.0", "[::]", "evil.example"):
        with TestClient(config.app, base_url=f"http://{name}:8013") as api:
            assert api.get("/api/config").status_code == 400, name


def test_the_open_warning_names_the_empty_host_and_no_address_when_none_is_found():
    args = build_parser().parse_args(["--host", "", "--port", "8013",
                                      "--allow-host", "cards.example"])
    for hosts in ((), ("localhost", "127.0.0.1", "cards.example")):  # none to show
        assert server.open_warning(args, hosts) == (
            "pis-serve: warning: --host '' opens the table to the network (anyone who can "
            "reach this machine can play); a name it is reached by besides these needs "
            "--allow-host NAME")


def test_the_machines_own_names_are_found_in_its_own_tables():
    import socket

    names = server.own_names()
    assert names[0] == socket.gethostname() and len(set(names)) == len(names)
    assert all("%" not in n for n in names)  # no IPv6 zone: never a Host value


class FakeNetwork:
    """A machine named ``cardroom`` whose name resolves to an IPv4 address (twice) and a
    link-local IPv6 one with its zone, and whose routes leave by 10.0.0.5 and fd00::5
    (zone again): the socket functions ``own_names`` calls, recording what it asks."""

    def __init__(self, monkeypatch, hostname="cardroom", resolves=True, ipv6_route=True):
        import socket

        self.lookups, self.sockets = [], []
        self.routes = {socket.AF_INET: ("10.0.0.5", 40001)}
        if ipv6_route:
            self.routes[socket.AF_INET6] = ("fd00::5%eth0", 40002, 0, 2)

        def gethostname():
            if hostname is None:
                raise OSError("no name")
            return hostname

        def getaddrinfo(host, port):
            self.lookups.append((host, port))
            if not resolves:
                raise socket.gaierror("not found")
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.7", 0)),
                    (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fe80::7%eth0", 0, 0, 2)),
                    (socket.AF_INET, socket.SOCK_DGRAM, 17, "", ("192.0.2.7", 0))]

        network = self

        class UDP:
            def __init__(self, family=socket.AF_INET, kind=socket.SOCK_STREAM):
                self.family, self.kind = family, kind
                network.sockets.append(self)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def connect(self, address):
                self.address = address
                if self.family not in network.routes:
                    raise OSError("network unreachable")

            def getsockname(self):
                return network.routes[self.family]

        monkeypatch.setattr(socket, "gethostname", gethostname)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(socket, "socket", UDP)


def test_own_names_are_the_host_its_addresses_and_the_routes_addresses_without_zones(
        monkeypatch):
    import ipaddress
    import socket

    network = FakeNetwork(monkeypatch)
    assert server.own_names() == ("cardroom", "192.0.2.7", "fe80::7", "10.0.0.5", "fd00::5")
    assert network.lookups == [("cardroom", None)]
    # the routes are found by datagram sockets, which send nothing on connect, towards
    # the documentation addresses of each family
    assert [(u.family, u.kind) for u in network.sockets] == [
        (socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET6, socket.SOCK_DGRAM)]
    assert [ipaddress.ip_address(u.address[0]) for u in network.sockets] == [
        ipaddress.ip_address("192.0.2.1"), ipaddress.ip_address("2001:db8::1")]


@pytest.mark.parametrize("hostname, resolves, ipv6_route, want", [
    (None, True, True, ("10.0.0.5", "fd00::5")),  # no host name: the routes only
    ("cardroom", False, True, ("cardroom", "10.0.0.5", "fd00::5")),  # a name unresolved
    ("cardroom", True, False, ("cardroom", "192.0.2.7", "fe80::7", "10.0.0.5")),  # no IPv6
])
def test_own_names_leave_out_what_cannot_be_found(monkeypatch, hostname, resolves,
                                                  ipv6_route, want):
    FakeNetwork(monkeypatch, hostname, resolves, ipv6_route)
    assert server.own_names() == want


def test_main_without_the_web_extra_or_with_a_wrong_limit_is_one_line_and_exit_2(
        monkeypatch, capsys):
    assert server.main(["--max-games", "0"]) == 2
    assert capsys.readouterr().err == (
        "pis-serve: error: --delay must be >= 0 and --max-games >= 1\n")
    monkeypatch.setitem(__import__("sys").modules, "uvicorn", None)
    assert server.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pis-serve: error: ") and err.endswith(
        ": install the web extra: pip install 'pis-yedili[web]'\n") and "uvicorn" in err



class PlainBot:
    """A user's bot: no layout version of its own."""

    def reset(self, seed=None):
        pass

    def act(self, observation):
        return 56


def test_an_app_built_directly_checks_its_bots_and_fills_in_what_is_not_given():
    config = TableConfig(rules=Rules(illegal_action="raise"), bots=("plain",),
                         offered=("plain", "random"))
    with pytest.raises(ValueError) as refused:
        create_app(config, {"plain": PlainBot()})
    assert str(refused.value) == "no prototype agent for the offered bot(s) ['random']"
    bots = {"plain": PlainBot(), "random": make_for_table("random", Rules().to_dict())}
    app = create_app(config, bots)
    assert app.state.games.bot_weights == {spec: bot_bytes(a) for spec, a in bots.items()}
    assert app.state.games.bot_layouts == {"plain": 0, "random": 0}
    (guard,) = [m for m in app.user_middleware if m.cls is Guard]
    assert guard.kwargs["max_body_bytes"] == 2_000_000
    with TestClient(app, base_url="http://127.0.0.1:8000") as api:
        for path in ("/docs", "/redoc", "/openapi.json"):  # no API pages on a public table
            assert api.get(path).status_code == 404
        lane = app.state.workers.lanes[0]
        assert lane._thread.is_alive()
    assert not lane._thread.is_alive()  # the lanes stop with the app

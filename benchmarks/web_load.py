"""Load on the browser table: requests per second and latencies, loopback only.

    python -m benchmarks.web_load                       # the figures of docs/browser-table.md
    python -m benchmarks.web_load --seconds 3 --clients 1,10 --search-clients 4
    python -m benchmarks.web_load --replay-rss 2000,10000,50000
    python -m benchmarks.web_load --memory-games 40      # RSS of 40 search games, 64 MiB cap
    python -m benchmarks.web_load --timing-seconds 60    # forced vs chosen bot moves by time
    python -m benchmarks.web_load --stall-loads 5        # a GET while 5 long replays load

Needs the ``web-bench`` extra (``pip install -e '.[web-bench]'``: the web extra and
psutil).

Starts its own ``pis-serve`` (a child process on a free 127.0.0.1 port, with its bot
worker processes) and stops it at the end, whatever happens. Each client plays like the
page with no delay: a new game, then its moves (random legal ones), a request to start
each bot move and polls every ``--poll-ms`` until it is in, then the next game.

1. For 1, 10 and 50 clients against ``heuristic``: requests per second and the p50/p99
   latency of every request.
2. While ``--search-clients`` (20) clients play ``search``: the p50/p99 of a plain
   ``GET /api/config`` made every 50 ms. This is what a slow bot costs the other
   clients; bot moves are made off the request path, so it should stay small.

Every phase is bounded by ``--seconds`` and ``--max-requests``. ``--replay-rss`` instead
measures what replaying a long history costs the server's memory: for each length, a
fresh server loads one history of that many moves and prints the growth of its resident
set.

``--memory-games N`` starts a server with ``--bots search --max-memory-mb 64`` (single
deals), plays one game, then N more, each from a new browser session, and prints the
growth of the resident memory summed over the server and its bot workers between the two
(the issue's bound: at most the cap + 64 MiB).

``--timing-seconds S`` plays ``search`` games for S seconds with the server's default
``--bot-min-ms`` (``--delay``, ``--timing-delay``), times each bot move from the request
that starts it to the poll that sees it, and reads from each finished game's history
whether the bot had one legal move (forced) or more. It prints the balanced accuracy of
the best response-time threshold (fitted on half the games, scored on the other half,
and fitted on all of them), with the bot moves unpadded (``--bot-min-ms 0``) beside it.

Figures are wall-clock on this machine, clients included (threads of this process): run
it on a quiet machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

POLL_SECONDS = 0.02


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``pis-serve`` in a child process on a free loopback port."""

    def __init__(self, *argv: str, delay: int = 0):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agents.ui.web", "--host", "127.0.0.1", "--port",
             str(self.port), "--delay", str(delay), *argv],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def __enter__(self) -> Server:
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("pis-serve stopped: " + self.proc.stderr.read().decode())
            try:
                status, _ = Client(self.port).call("GET", "/api/config")
                if status == 200:
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("pis-serve did not start within 120 s")
            time.sleep(0.2)

    def __exit__(self, *_):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Client:
    """One keep-alive connection and one browser session (it keeps the session cookie
    the server issues); ``call`` returns ``(status, parsed JSON)``."""

    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.cookie: str | None = None

    def call(self, method: str, path: str, body: dict | None = None):
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.cookie:
            headers["Cookie"] = self.cookie
        try:
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionError):  # dropped: reconnect
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
        issued = response.getheader("set-cookie")
        if issued:
            self.cookie = issued.split(";", 1)[0]
        text = response.read() or b"null"
        return response.status, (json.loads(text) if text[:1] in b"{[n" else text)


class Phase:
    """Shared bounds and the latencies measured, for one phase."""

    def __init__(self, seconds: float, max_requests: int):
        self.deadline = time.monotonic() + seconds
        self.max_requests = max_requests
        self.latencies: list[float] = []
        self.errors = 0
        self.lock = threading.Lock()

    def running(self) -> bool:
        return time.monotonic() < self.deadline and len(self.latencies) < self.max_requests

    def timed(self, client: Client, method: str, path: str, body=None):
        start = time.perf_counter()
        status, data = client.call(method, path, body)
        took = time.perf_counter() - start
        with self.lock:
            self.latencies.append(took)
            if status >= 400 and status != 409:
                self.errors += 1
        return status, data


def player(port: int, phase: Phase, bots: list[str], seed: int, poll: float,
           record: bool = True) -> None:
    """Play games until the phase ends (``record=False``: its requests are not counted)."""
    rng = random.Random(seed)
    client = Client(port)

    def call(method, path, body=None):
        if record:
            return phase.timed(client, method, path, body)
        return client.call(method, path, body)
    while phase.running():
        status, state = call("POST", "/api/games", {"bots": bots})
        if status != 201:
            time.sleep(0.1)
            continue
        play_game(call, state, rng, poll, phase.running)


def play_game(call, state: dict, rng: random.Random, poll: float, running=lambda: True,
              on_bot_move=None) -> dict:
    """Play one game like the page with no delay, to its end (or until ``running()`` is
    false); ``on_bot_move(version, seconds)`` for each bot move, timed from the request
    that starts it to the poll that sees it. The last state."""
    gid = state["id"]
    started = None
    while running() and state["status"] not in ("match_over", "broken"):
        s = state["status"]
        since = state["version"]
        if s == "your_turn":
            action = rng.choice(state["legal"])["action"]
            status, new = call("POST", f"/api/games/{gid}/move",
                               {"action": action, "version": state["version"]})
        elif s == "bot_turn":
            started = time.perf_counter()
            status, new = call("POST", f"/api/games/{gid}/advance",
                               {"version": state["version"]})
        elif s == "bot_thinking":
            time.sleep(poll)
            status, new = call("GET", f"/api/games/{gid}?since={since}")
        else:
            status, new = call("POST", f"/api/games/{gid}/next-deal",
                               {"version": state["version"]})
        if status >= 400:  # a stale view (409) or a busy server: look again
            status, new = call("GET", f"/api/games/{gid}?since={since}")
            if status >= 400:
                break
        if (on_bot_move is not None and started is not None
                and new["version"] > state["version"] and new["status"] != "bot_thinking"
                and s in ("bot_turn", "bot_thinking")):
            on_bot_move(state["version"], time.perf_counter() - started)
            started = None
        state = new
    return state


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (the server and its bot
    workers)."""
    return sum(rss_by_process(pid).values())


def rss_by_process(pid: int) -> dict[int, int]:
    """Resident bytes of a process and each of its descendants, by pid."""
    import psutil

    root = psutil.Process(pid)
    out = {}
    for proc in [root, *root.children(recursive=True)]:
        try:
            out[proc.pid] = proc.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return out


def memory_figures(args) -> None:
    """The resident memory of N played ``search`` games under a 64 MiB cap."""
    cap = 64
    with Server("--bots", "search", "--max-memory-mb", str(cap), "--deals", "1",
                "--max-games", "1000", "--bot-workers", str(args.bot_workers)) as server:
        def one(seed: int) -> dict:
            client = Client(server.port)  # a new browser session per game
            status, state = client.call("POST", "/api/games", {})
            if status != 201:
                raise RuntimeError(f"new game refused: {status} {state}")
            return play_game(client.call, state, random.Random(seed), args.poll_ms / 1000)

        one(0)
        time.sleep(1)
        parts = rss_by_process(server.proc.pid)
        before = sum(parts.values())
        start = time.perf_counter()
        results: list[dict] = []
        lock = threading.Lock()
        todo = iter(range(1, args.memory_games + 1))

        def worker():
            for seed in todo:
                state = one(seed)
                with lock:
                    results.append(state)
        run_threads([(worker, ()) for _ in range(args.memory_clients)])
        time.sleep(1)
        now = rss_by_process(server.proc.pid)
        after = sum(now.values())
        over = sum(r["status"] == "match_over" for r in results)
        pid = server.proc.pid
        print("by process (MiB): " + ", ".join(
            f"{'server' if p == pid else f'child {p}'} {parts.get(p, 0) / 2**20:.1f} -> "
            f"{rss / 2**20:.1f}" for p, rss in now.items()))
        growth = (after - before) / 2**20
        print(f"pis-serve --bots search --max-memory-mb {cap} --deals 1 "
              f"({args.bot_workers} bot workers)")
        print(f"resident memory, server and bot workers: {before / 2**20:.1f} MiB after one "
              f"game, {after / 2**20:.1f} MiB after {len(results)} more ({over} played to "
              f"the end, {time.perf_counter() - start:.0f} s)")
        print(f"growth {growth:.1f} MiB; bound cap + 64 = {cap + 64} MiB: "
              + ("within" if growth <= cap + 64 else "OVER"))


def legal_counts(history: str) -> list[int]:
    """The number of legal moves at each decision of a finished game, in order."""
    from pis_env import raw_env

    done = raw_env.from_history(history)
    env = raw_env(**done.rules.to_dict())
    env.reset(options={"deck": done.game.deal_decks[0], "dealer": done.game.deal_dealers[0]})
    counts = []
    for _, action in done.game.histories[0]:
        counts.append(len(env.game.legal_actions()))
        env.step(action)
    return counts


def best_threshold(samples: list[tuple[float, bool]]) -> tuple[float, float]:
    """``(threshold, balanced accuracy)`` of the best rule "forced when faster than the
    threshold" on ``(seconds, forced)`` samples (balanced: the mean of the accuracies on
    forced and on chosen moves, so that guessing scores 50%)."""
    forced = sorted(t for t, f in samples if f)
    chosen = sorted(t for t, f in samples if not f)
    if not forced or not chosen:
        return float("nan"), float("nan")
    best = (float("nan"), 0.0)
    for cut in sorted({t for t, _ in samples}):
        acc = balanced(samples, cut)
        if acc > best[1]:
            best = (cut, acc)
    return best


def balanced(samples: list[tuple[float, bool]], cut: float) -> float:
    forced = [t for t, f in samples if f]
    chosen = [t for t, f in samples if not f]
    if not forced or not chosen:
        return float("nan")
    hit_forced = sum(t <= cut for t in forced) / len(forced)
    hit_chosen = sum(t > cut for t in chosen) / len(chosen)
    return (hit_forced + hit_chosen) / 2


def timing_samples(args, min_ms: int | None) -> list[list[tuple[float, bool]]]:
    """Per game: ``(seconds, forced)`` of each bot move, ``search`` bots, for
    ``--timing-seconds``; ``min_ms=None``: the server's default padding."""
    extra = [] if min_ms is None else ["--bot-min-ms", str(min_ms)]
    games: list[list[tuple[float, bool]]] = []
    lock = threading.Lock()
    with Server("--bots", "search", "--deals", "1", "--max-games", "1000",
                "--bot-workers", str(args.bot_workers), *extra,
                delay=args.timing_delay) as server:
        deadline = time.monotonic() + args.timing_seconds

        def worker(seed: int):
            rng = random.Random(seed)
            while time.monotonic() < deadline:
                client = Client(server.port)
                status, state = client.call("POST", "/api/games", {})
                if status != 201:
                    time.sleep(0.5)
                    continue
                timed: dict[int, float] = {}
                state = play_game(client.call, state, rng, 0.005,
                                  lambda: time.monotonic() < deadline,
                                  timed.__setitem__)
                if state["status"] != "match_over":
                    continue
                status, history = client.call("GET", f"/api/games/{state['id']}/history")
                counts = legal_counts(json.dumps(history))
                with lock:
                    games.append([(took, counts[v] == 1) for v, took in timed.items()])
        run_threads([(worker, (i,)) for i in range(args.timing_clients)])
    return games


def timing_figures(args) -> None:
    print(f"search bots, {args.timing_clients} clients, {args.timing_seconds:g} s a "
          f"server, polls every 5 ms; balanced accuracy of the best threshold")
    print(f"{'bot moves':24s} {'moves':>6s} {'forced':>7s} {'held-out':>9s} "
          f"{'fitted':>7s} {'threshold':>10s}")
    for label, min_ms in ((f"padded (--delay {args.timing_delay})", None),
                          ("unpadded (--bot-min-ms 0)", 0)):
        games = timing_samples(args, min_ms)
        fit, test = games[0::2], games[1::2]
        flat = [s for g in games for s in g]
        cut, _ = best_threshold([s for g in fit for s in g])
        held = balanced([s for g in test for s in g], cut)
        cut_all, acc_all = best_threshold(flat)
        print(f"{label:24s} {len(flat):6d} {sum(f for _, f in flat):7d} {100 * held:8.1f}% "
              f"{100 * acc_all:6.1f}% {1000 * cut_all:8.1f} ms")


def prober(port: int, phase: Phase, every: float) -> None:
    client = Client(port)
    while phase.running():
        phase.timed(client, "GET", "/api/config")
        time.sleep(every)


def run_threads(targets) -> None:
    threads = [threading.Thread(target=t, args=a, daemon=True) for t, a in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def load_figures(args) -> None:
    workers = ["--bot-workers", str(args.bot_workers)]
    with Server("--bots", "heuristic", "--allow", "search", "--max-games", "1000",
                "--deals", "1", "--new-games-per-minute", "100000", *workers) as server:
        print(f"pis-serve on 127.0.0.1:{server.port} ({args.bot_workers} bot worker "
              f"processes); each phase at most {args.seconds:g} s and {args.max_requests} "
              "requests")
        print(f"{'phase':34s} {'requests':>9s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s}")
        for n in args.clients:
            phase = Phase(args.seconds, args.max_requests)
            start = time.perf_counter()
            run_threads([(player, (server.port, phase, ["heuristic"], i, args.poll_ms / 1000))
                         for i in range(n)])
            took = time.perf_counter() - start
            lat = phase.latencies
            print(f"{f'{n} client(s), heuristic':34s} {len(lat):9d} {len(lat) / took:8.0f} "
                  f"{1000 * percentile(lat, 50):8.1f} {1000 * percentile(lat, 99):8.1f}"
                  + (f"  ({phase.errors} errors)" if phase.errors else ""))
        if args.search_clients:
            phase = Phase(args.seconds, args.max_requests)
            players = [(player, (server.port, phase, ["search"], i, args.poll_ms / 1000,
                                 False)) for i in range(args.search_clients)]
            run_threads(players + [(prober, (server.port, phase, 0.05))])
            lat = phase.latencies
            label = f"GET /api/config, {args.search_clients} x search"
            print(f"{label:34s} {len(lat):9d} {'':8s} {1000 * percentile(lat, 50):8.1f} "
                  f"{1000 * percentile(lat, 99):8.1f}")


def long_history(actions: int, seed: int = 0) -> str:
    """A one-deal reshuffling history cut off after exactly ``actions`` moves: players
    keep 5 to 9 cards (playing when they hold many, drawing or passing otherwise), so
    nobody goes out and the stock is reshuffled again and again."""
    import numpy as np

    from pis_env import raw_env

    env = raw_env(empty_stock="reshuffle", max_turns=actions)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not env.game.deal_over:
        game = env.game
        legal = game.legal_actions()
        cards = [a for a in legal if a < 52]
        other = [a for a in legal if a >= 52]
        size = game.hands[game.current].bit_count()
        if cards and (size > 8 or not other):
            action = cards[rng.integers(len(cards))]
        elif 57 in other and size > 4:
            action = 57
        elif 56 in other:
            action = 56
        else:
            action = other[rng.integers(len(other))] if other else cards[0]
        env.step(action)
    if env.game.end_reason != "truncated":
        raise RuntimeError(f"the long history ended early: {env.game.end_reason}")
    return env.export_history()


def replay_rss(sizes: list[int]) -> None:
    """For each length, a fresh server loads one history of that many moves: the growth
    of its resident memory and the time the load took."""
    print(f"{'moves':>8s} {'history KB':>11s} {'RSS growth MiB':>15s} {'load s':>7s}")
    for moves in sizes:
        text = long_history(moves)
        with Server("--bot-workers", "0", "--max-body-bytes", "20000000") as server:
            client = Client(server.port)
            time.sleep(0.5)
            before = tree_rss(server.proc.pid)
            start = time.perf_counter()
            status, summary = client.call("POST", "/api/replays", {"history": text})
            took = time.perf_counter() - start
            if status != 201:
                raise RuntimeError(f"the replay was refused: {status} {summary}")
            frames = summary["frames"]
            client.call("GET", f"/api/replays/{summary['id']}/frames/{frames - 1}")
            after = tree_rss(server.proc.pid)
        print(f"{moves:8d} {len(text) / 1000:11.0f} {(after - before) / 2**20:15.1f} "
              f"{took:7.2f}")


def replay_stall(args) -> None:
    """While ``--stall-loads`` clients each load a ``--stall-moves``-move history at once,
    the latency of a plain ``GET /api/config`` every 20 ms, the loads' answers and the
    server's memory growth."""
    text = long_history(args.stall_moves)
    with Server("--bot-workers", "0", "--max-body-bytes", "20000000") as server:
        time.sleep(0.5)
        before = tree_rss(server.proc.pid)
        phase = Phase(3600, 10**9)
        answers: list[tuple[int, int, float]] = []
        lock = threading.Lock()

        def loader():
            client = Client(server.port)
            start = time.perf_counter()
            status, data = client.call("POST", "/api/replays", {"history": text})
            size = len(json.dumps(data))
            with lock:
                answers.append((status, size, time.perf_counter() - start))

        loaders = [threading.Thread(target=loader) for _ in range(args.stall_loads)]
        probe = threading.Thread(target=prober, args=(server.port, phase, 0.02), daemon=True)
        probe.start()
        time.sleep(0.5)
        for t in loaders:
            t.start()
        for t in loaders:
            t.join()
        time.sleep(0.5)
        phase.deadline = 0  # stop the prober
        probe.join()
        after = tree_rss(server.proc.pid)
    lat = phase.latencies
    print(f"{args.stall_loads} loads at once of a {args.stall_moves}-move history "
          f"({len(text) / 1e6:.2f} MB):")
    for status, size, took in sorted(answers):
        print(f"  {status}: {size / 1000:.1f} KB answer in {took:.2f} s")
    print(f"GET /api/config meanwhile: {len(lat)} requests, p50 {1000 * percentile(lat, 50):.1f}"
          f" ms, p99 {1000 * percentile(lat, 99):.1f} ms, max {1000 * max(lat):.1f} ms")
    print(f"server memory growth {(after - before) / 2**20:.1f} MiB")


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.web_load", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=_ints, default=[1, 10, 50],
                   help="client counts of the heuristic phases (default 1,10,50)")
    p.add_argument("--search-clients", type=int, default=20,
                   help="clients playing search while a plain GET is timed (0: skip)")
    p.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    p.add_argument("--max-requests", type=int, default=50_000,
                   help="requests in a phase at most")
    p.add_argument("--poll-ms", type=float, default=20.0,
                   help="how often a client polls while a bot thinks")
    p.add_argument("--bot-workers", type=int, default=2, help="pis-serve --bot-workers")
    p.add_argument("--replay-rss", type=_ints, default=None, metavar="N,N,...",
                   help="measure the memory of replaying histories of N moves instead")
    p.add_argument("--stall-loads", type=int, default=None, metavar="K",
                   help="time a plain GET while K clients load a long replay at once")
    p.add_argument("--stall-moves", type=int, default=100_000,
                   help="moves of the history of --stall-loads (default 100000)")
    p.add_argument("--memory-games", type=int, default=None, metavar="N",
                   help="measure the memory of N played search games instead")
    p.add_argument("--memory-clients", type=int, default=4,
                   help="clients playing the --memory-games at once (default 4)")
    p.add_argument("--timing-seconds", type=float, default=None, metavar="S",
                   help="measure what bot-move timing tells, S seconds a server, instead")
    p.add_argument("--timing-clients", type=int, default=8,
                   help="clients of the timing measurement (default 8)")
    p.add_argument("--timing-delay", type=int, default=600,
                   help="the server's --delay in the timing measurement (default 600)")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.max_requests < 1 or any(n < 1 for n in args.clients):
        p.error("--seconds > 0, --max-requests >= 1 and client counts >= 1")
    if args.stall_loads is not None:
        if not 1 <= args.stall_loads <= 50 or not 1 <= args.stall_moves <= 100_000:
            p.error("--stall-loads 1..50 and --stall-moves 1..100000")
        replay_stall(args)
        return 0
    if args.memory_games is not None:
        if not 1 <= args.memory_games <= 1000 or args.memory_clients < 1:
            p.error("--memory-games 1..1000 and --memory-clients >= 1")
        memory_figures(args)
        return 0
    if args.timing_seconds is not None:
        if not 0 < args.timing_seconds <= 3600 or args.timing_clients < 1:
            p.error("--timing-seconds in (0, 3600] and --timing-clients >= 1")
        timing_figures(args)
        return 0
    if args.replay_rss is not None:
        if any(not 1 <= n <= 100_000 for n in args.replay_rss):
            p.error("--replay-rss: lengths 1..100000 (the replay limit)")
        replay_rss(args.replay_rss)
        return 0
    load_figures(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Load on the browser table: requests per second and latencies, loopback only.

    python -m benchmarks.web_load                       # the figures of docs/browser-table.md
    python -m benchmarks.web_load --seconds 3 --clients 1,10 --search-clients 4
    python -m benchmarks.web_load --replay-rss 2000,10000,50000

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
fresh process loads one history of that many moves through the app and prints the growth
of its resident set. Figures are wall-clock on this machine, clients included (threads of
this process): run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
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

    def __init__(self, *argv: str):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agents.ui.web", "--host", "127.0.0.1", "--port",
             str(self.port), "--delay", "0", *argv],
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
    """One keep-alive connection; ``call`` returns ``(status, parsed JSON)``."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method: str, path: str, body: dict | None = None):
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read() or b"null")


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
        gid = state["id"]
        while phase.running() and state["status"] not in ("match_over", "broken"):
            s = state["status"]
            if s == "your_turn":
                action = rng.choice(state["legal"])["action"]
                status, new = call("POST", f"/api/games/{gid}/move",
                                   {"action": action, "version": state["version"]})
            elif s == "bot_turn":
                status, new = call("POST", f"/api/games/{gid}/advance",
                                   {"version": state["version"]})
            elif s == "bot_thinking":
                time.sleep(poll)
                status, new = call("GET", f"/api/games/{gid}")
            else:
                status, new = call("POST", f"/api/games/{gid}/next-deal",
                                   {"version": state["version"]})
            if status >= 400:  # a stale view (409) or a busy server: look again
                status, new = call("GET", f"/api/games/{gid}")
                if status >= 400:
                    break
            state = new


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
                *workers) as server:
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


def _replay_rss_child(moves: int) -> None:
    """In a fresh process: load one ``moves``-long history through the app; print the
    resident-set growth in MiB and the seconds it took."""
    import psutil
    from fastapi.testclient import TestClient

    from agents.ui.web.server import app_from_args, build_parser

    text = long_history(moves)
    app = app_from_args(build_parser().parse_args(["--bot-workers", "0",
                                                   "--max-body-bytes", "20000000"]))
    api = TestClient(app, base_url="http://127.0.0.1:8000")
    process = psutil.Process()
    before = process.memory_info().rss
    start = time.perf_counter()
    r = api.post("/api/replays", json={"history": text})
    took = time.perf_counter() - start
    assert r.status_code == 201, r.text
    frames = r.json()["frames"]
    api.get(f"/api/replays/{r.json()['id']}/frames/{frames - 1}")
    print(json.dumps({"moves": moves, "frames": frames, "bytes": len(text),
                      "rss_mib": (process.memory_info().rss - before) / 2**20,
                      "seconds": took}))


def replay_rss(sizes: list[int]) -> None:
    print(f"{'moves':>8s} {'history KB':>11s} {'RSS growth MiB':>15s} {'load s':>7s}")
    for moves in sizes:
        out = subprocess.run([sys.executable, "-m", "benchmarks.web_load", "--_replay-child",
                              str(moves)], capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONHASHSEED": "0"})
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        data = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{moves:8d} {data['bytes'] / 1000:11.0f} {data['rss_mib']:15.1f} "
              f"{data['seconds']:7.2f}")


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
    p.add_argument("--_replay-child", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._replay_child is not None:
        _replay_rss_child(args._replay_child)
        return 0
    if args.seconds <= 0 or args.max_requests < 1 or any(n < 1 for n in args.clients):
        p.error("--seconds > 0, --max-requests >= 1 and client counts >= 1")
    if args.replay_rss is not None:
        if any(not 1 <= n <= 100_000 for n in args.replay_rss):
            p.error("--replay-rss: lengths 1..100000 (the replay limit)")
        replay_rss(args.replay_rss)
        return 0
    load_figures(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

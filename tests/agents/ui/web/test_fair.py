"""Fair play at the browser table: deals from the CSPRNG and nothing else, arranged games
only when the operator allows them, bot moves that take the same time whatever the bot
had to think, and the smaller contracts of the API (``version`` required, the move log
from a version, the next deal with a full lane, the four-deal match by default, replays
in pages and encoded off the event loop, the guard's header checks)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient

import agents.ui.web.bots as web_bots
import agents.ui.web.tables as tables
from agents.ui.web.replay import MOVES_PAGE, ReplayStore, frame_bound
from agents.ui.web.server import main
from pis_env import raw_env
from tests.conftest import finished_history

from .test_api import BASE, BOT_FIRST, client, game_of, play_out, settle, step


# ---------------------------------------------------------------------- the deal
@pytest.fixture
def draws(monkeypatch) -> list[tuple[int, int]]:
    """Every ``tables.draw_bits`` call, ``(bits, value)``, the values still the CSPRNG's."""
    seen: list = []
    real = tables.draw_bits

    def spy(bits):
        value = real(bits)
        seen.append((bits, value))
        return value
    monkeypatch.setattr(tables, "draw_bits", spy)
    return seen


@pytest.fixture
def deal_seeds(monkeypatch) -> list:
    """The seed every game's env was reset with."""
    seen: list = []

    class Spy(raw_env):
        def reset(self, seed=None, options=None):
            seen.append(seed)
            return super().reset(seed=seed, options=options)
    monkeypatch.setattr(tables, "raw_env", Spy)
    return seen


@pytest.fixture
def bot_seeds(monkeypatch) -> list[int]:
    seen: list = []
    real = web_bots.perform

    def spy(agents, prototypes, op, args):
        if op == "open":
            seen.extend(seed for _, seed in args[1].values())
        return real(agents, prototypes, op, args)
    monkeypatch.setattr(web_bots, "perform", spy)
    return seen


def test_a_deal_is_128_fresh_csprng_bits_and_each_bot_has_its_own(draws, deal_seeds,
                                                                  bot_seeds):
    api = client("--players", "4", "--bots", "random", arranged=False)
    states = [api.post("/api/games", json={}).json() for _ in range(5)]
    assert len(deal_seeds) == 5 and len(bot_seeds) == 15
    by_value = dict((v, b) for b, v in draws)
    for seed, state in zip(deal_seeds, states):
        assert by_value[seed] >= 128 and seed.bit_length() > 96  # all 128 bits drawn
        deal = raw_env(num_players=4)
        deal.reset(seed=seed)  # the deal is that draw's, nothing else mixed in
        game = game_of(api, state["id"]).env.game
        assert game.hands == deal.game.hands and game.stock == deal.game.stock
        assert state["arranged"] is False
    for seed in bot_seeds:
        assert by_value[seed] >= 64
    assert len(set(deal_seeds) | set(bot_seeds)) == 20  # separate draws, no seed reused
    assert len(draws) == 20


def test_a_deal_depends_on_its_own_draw_only(monkeypatch):
    """Two servers given the same deal draws deal the same games, whatever else differs
    (sessions, game ids, another game played to its end and its history read in between);
    changing one game's draw changes that game's deal alone. So nothing a client sees of
    its session or of other games tells a deal, and within its own game only the draw
    (never shown) fixes the hidden cards."""
    def decks(values, interleave: bool):
        stream = iter(values)
        monkeypatch.setattr(tables, "draw_bits", lambda bits: next(stream))
        api = client("--bots", "random", arranged=False)
        out, ids = [], []
        for k in range(3):
            state = api.post("/api/games", json={}).json()
            game = game_of(api, state["id"]).env.game
            out.append((list(game.hands), list(game.stock), game.dealer))
            ids.append(state["id"])
            if interleave and k == 0:  # its whole history read before the next deal
                play_out(api, state, np.random.default_rng(k))
                assert api.get(f"/api/games/{state['id']}/history").status_code == 200
        return out, ids

    values = [11 ** 37 + k for k in range(6)]  # game k: deal values[2k], bot values[2k+1]
    first, ids_a = decks(values, interleave=False)
    again, ids_b = decks(values, interleave=True)
    assert first == again and not set(ids_a) & set(ids_b)
    changed = list(values)
    changed[2] += 1  # the second game's deal draw
    other, _ = decks(changed, interleave=False)
    assert other[0] == first[0] and other[2] == first[2] and other[1] != first[1]


def test_arranged_games_need_the_servers_flag(capsys):
    api = client(arranged=False)
    assert api.get("/api/config").json()["allow_arranged"] is False
    for body in ({"seed": 5}, {"deck": BOT_FIRST}, {"dealer": 0}):
        r = api.post("/api/games", json=body)
        assert r.status_code == 403 and "--allow-arranged" in r.json()["error"], body
    assert len(api.app.state.games) == 0
    assert main(["--seed", "7"]) == 2
    assert "--allow-arranged" in capsys.readouterr().err
    arranged = client()
    assert arranged.post("/api/games", json={"seed": 5}).json()["arranged"] is True
    assert arranged.post("/api/games", json={}).json()["arranged"] is False
    seeded = client("--seed", "7")
    assert seeded.post("/api/games", json={}).json()["arranged"] is True


# ---------------------------------------------------------------------- bot timing
def test_a_bots_move_is_shown_no_sooner_than_the_minimum():
    """On a fake clock: the bot's forced move (it must draw) is in at once, but the game
    stays ``bot_thinking`` until ``--bot-min-ms`` after the move was asked for."""
    api = client("--bot-min-ms", "600")
    assert api.get("/api/config").json()["bot_min_ms"] == 600
    store = api.app.state.games
    now = [100.0]
    store.clock = lambda: now[0]
    state = api.post("/api/games", json={"deck": BOT_FIRST, "dealer": 0}).json()
    session = game_of(api, state["id"])
    for chosen in (False, True):
        version = state["version"]
        r = api.post(f"/api/games/{state['id']}/advance", json={"version": version})
        assert r.json()["status"] == "bot_thinking"
        deadline = time.monotonic() + 30
        while session.pending is None:  # the lane has answered
            assert time.monotonic() < deadline
            time.sleep(0.005)
        now[0] += 0.599
        state = api.get(f"/api/games/{state['id']}").json()
        assert state["status"] == "bot_thinking" and state["version"] == version
        now[0] += 0.001
        state = api.get(f"/api/games/{state['id']}").json()
        assert state["version"] == version + 1 and state["log"][-1]["seat"] == 1
        if not chosen:  # play on to a second bot decision
            while state["status"] == "your_turn":
                state = step(api, state, np.random.default_rng(0))
            if state["status"] != "bot_turn":
                break
    default = client("--delay", "250", "--bot-min-ms", "250")
    assert default.get("/api/config").json()["bot_min_ms"] == 250
    args = ["--bot-workers", "0", "--delay", "321", "--deals", "1"]
    from agents.ui.web.server import app_from_args, build_parser

    cfg = TestClient(app_from_args(build_parser().parse_args(args)), base_url=BASE)
    assert cfg.get("/api/config").json()["bot_min_ms"] == 321  # by default, the delay


# ---------------------------------------------------------------------- the API's contracts
def test_version_is_required_on_every_change():
    api = client()
    gid = api.post("/api/games", json={}).json()["id"]
    for path, body in (("move", {"action": 56}), ("advance", {}), ("next-deal", {})):
        r = api.post(f"/api/games/{gid}/{path}", json=body)
        assert r.status_code == 422 and "version" in r.json()["error"], path
    assert api.get(f"/api/games/{gid}").json()["version"] == 0


def test_the_move_log_is_sent_from_a_version_on():
    api = client("--bots", "random")
    rng = np.random.default_rng(2)
    state = api.post("/api/games", json={"seed": 3}).json()
    full = []
    while state["version"] < 6 and state["status"] != "match_over":
        before = state["version"]
        state = step(api, state, rng)
        assert state["log_from"] <= before and all(e["n"] > state["log_from"]
                                                   for e in state["log"])
        full = full[:state["log_from"]] + state["log"]
    gid, version = state["id"], state["version"]
    assert full == api.get(f"/api/games/{gid}").json()["log"]  # since=0: everything
    part = api.get(f"/api/games/{gid}?since=4").json()
    assert part["log_from"] == 4 and part["log"] == full[4:]
    assert api.get(f"/api/games/{gid}?since={version}").json()["log"] == []
    assert api.get(f"/api/games/{gid}?since={version + 1}").status_code == 400
    assert api.get(f"/api/games/{gid}?since=-1").status_code == 422


def test_next_deal_with_a_full_lane_changes_nothing_and_a_retry_works():
    api = client("--deals", "2", "--bots", "random")
    rng = np.random.default_rng(0)
    state = api.post("/api/games", json={"seed": 1}).json()
    while state["status"] != "deal_over":
        state = step(api, state, rng)
    lane = api.app.state.workers.lanes[0]
    lane.max_queued = 0
    body = {"version": state["version"]}
    r = api.post(f"/api/games/{state['id']}/next-deal", json=body)
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    assert api.get(f"/api/games/{state['id']}").json()["status"] == "deal_over"
    lane.max_queued = 256
    again = api.post(f"/api/games/{state['id']}/next-deal", json=body)
    assert again.status_code == 200 and again.json()["position"]["deal"] == 1


def test_a_four_deal_match_by_default_with_the_running_score():
    from agents.ui.web.server import app_from_args, build_parser

    args = ["--bot-workers", "0", "--bot-min-ms", "0", "--bots", "random"]
    api = TestClient(app_from_args(build_parser().parse_args(args)), base_url=BASE)
    assert api.get("/api/config").json()["num_deals"] == 4
    rng = np.random.default_rng(5)
    state = api.post("/api/games", json={}).json()
    assert state["deals"] == [] and state["position"]["num_deals"] == 4
    totals = [0, 0]
    while state["position"]["deal"] < 1:  # the first of the four deals
        state = step(api, state, rng)
        if state["status"] == "deal_over":
            result = state["position"]["result"]
            totals = [t + c for t, c in zip(totals, result["charges"])]
            last = state["deals"][-1]
            assert last == {"deal": len(state["deals"]) - 1, "charges": result["charges"],
                            "totals": totals}
            assert not result["match_over"]
    assert len(state["deals"]) == 1 and state["position"]["totals"] == totals
    assert state["status"] in ("your_turn", "bot_turn")
    single = TestClient(app_from_args(build_parser().parse_args([*args, "--deals", "1"])),
                        base_url=BASE)
    assert single.get("/api/config").json()["num_deals"] == 1


# ---------------------------------------------------------------------- replays
def test_replay_moves_come_in_pages():
    api = client()
    text = finished_history(3, num_deals=2)
    summary = api.post("/api/replays", json={"history": text})
    assert summary.status_code == 201 and "moves" not in summary.json()
    rid, frames = summary.json()["id"], summary.json()["frames"]
    listed = []
    for start in range(0, frames, 7):
        page = api.get(f"/api/replays/{rid}/moves?start={start}&count=7").json()
        assert page["start"] == start and len(page["moves"]) == min(7, frames - start)
        listed += page["moves"]
    assert [m["frame"] for m in listed] == list(range(frames))
    assert listed[0]["text"] == "the deal starts"
    assert api.get(f"/api/replays/{rid}/moves?count={MOVES_PAGE + 1}").status_code == 422
    assert api.get(f"/api/replays/{rid}/moves?start={frames}").status_code == 404


def test_the_frame_budget_is_checked_before_a_load(monkeypatch):
    import agents.ui.web.replay as replay

    loaded = []
    real = replay.Replay

    class Spy(real):
        def __init__(self, *args, **kwargs):
            loaded.append(1)
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(replay, "Replay", Spy)
    text = finished_history(4)
    store = ReplayStore([], max_frames=frame_bound(replay.move_bound(text)) - 1)
    with pytest.raises(tables.WebError) as refused:
        store.load(text)
    assert refused.value.status == 503 and "Retry-After" in refused.value.headers
    assert loaded == []  # refused before a move was stepped
    frames = len(real(text, []).frames)
    roomy = ReplayStore([], max_frames=frame_bound(replay.move_bound(text)) + frames,
                        max_loading=1)
    first = roomy.load(text)
    assert roomy._loading.acquire(blocking=False)  # a load in flight...
    with pytest.raises(tables.WebError) as busy:
        roomy.load(text)  # ...and the next waits for it
    assert busy.value.status == 503 and len(loaded) == 1
    roomy._loading.release()
    for _ in range(3):  # a load reserves its bound: the older replays make room first
        roomy.load(text)
        assert len(roomy._replays) == 2
    assert first.id not in roomy._replays


def test_replay_answers_are_encoded_off_the_event_loop(monkeypatch):
    """A replay's answers (the summary, a page of moves, a frame) are encoded in a worker
    thread, never on the event loop's thread (the thread that runs the app's middleware,
    where ``/api/config`` is encoded)."""
    rendered: list[tuple[str, int]] = []
    real = JSONResponse.render

    def render(self, content):
        kind = next((k for k in ("offered", "moves_page", "start", "index")
                     if isinstance(content, dict) and k in content), "other")
        rendered.append((kind, threading.get_ident()))
        return real(self, content)
    monkeypatch.setattr(JSONResponse, "render", render)
    loop_threads: set = set()
    api = client()
    inner = api.app.build_middleware_stack()

    async def tagged(scope, receive, send):
        loop_threads.add(threading.get_ident())
        await inner(scope, receive, send)
    api.app.middleware_stack = tagged
    with TestClient(api.app, base_url=BASE) as c:  # one event loop for every request
        c.get("/api/config")
        rid = c.post("/api/replays", json={"history": finished_history(2)}).json()["id"]
        c.get(f"/api/replays/{rid}/moves")
        c.get(f"/api/replays/{rid}/frames/1")
    (loop,) = loop_threads
    threads = {}
    for kind, thread in rendered:
        threads.setdefault(kind, set()).add(thread)
    assert threads["offered"] == {loop}
    for kind in ("moves_page", "start", "index"):
        assert threads[kind] and loop not in threads[kind], kind


# ---------------------------------------------------------------------- the guard
def test_the_guard_refuses_doubled_and_malformed_headers():
    api = client()
    for headers in ([("Origin", BASE), ("Origin", "http://evil.example")],
                    [("Origin", "http://evil.example"), ("Origin", BASE)]):
        r = api.post("/api/games", json={}, headers=headers)
        assert r.status_code == 400 and "appears twice" in r.json()["error"]
    for host in ("127.0.0.1:evil", "127.0.0.1:80:80", "127.0.0.1 :80", "[::1]x", ""):
        r = api.get("/api/config", headers={"Host": host})
        assert r.status_code == 400 and "Host" in r.json()["error"], host
    for host in ("127.0.0.1:8000", "localhost", "[::1]:8000", "LOCALHOST:1"):
        assert api.get("/api/config", headers={"Host": host}).status_code == 200, host
    assert len(api.app.state.games) == 0


def test_a_500_has_the_security_headers_and_the_one_shape():
    api = client()
    crashing = TestClient(api.app, base_url=BASE, raise_server_exceptions=False)

    def boom(*_):
        raise RuntimeError("secret internals")
    api.app.state.games.get = boom
    r = crashing.get("/api/games/abc")
    assert r.status_code == 500 and set(r.json()) == {"error"} and "secret" not in r.text
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"


def test_settle_helper_sees_padded_moves():
    """With the default padding the page polls until the move shows (a short minimum
    here): the move comes, it is not lost."""
    api = client("--bot-min-ms", "30")
    state = api.post("/api/games", json={"deck": BOT_FIRST, "dealer": 0}).json()
    r = api.post(f"/api/games/{state['id']}/advance", json={"version": 0}).json()
    assert settle(api, r)["version"] == 1

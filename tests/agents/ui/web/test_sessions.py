"""Browser sessions at the table: a game is its session's only, per-session quotas hold,
a flood of new sessions cannot evict a game in play, and an evicted game's bots are
always closed."""

from __future__ import annotations

import time

import numpy as np
from fastapi.testclient import TestClient

from .test_api import BASE, client, game_of, settle, step


def other_session(api: TestClient) -> TestClient:
    """A second browser on the same server: a client with its own cookie jar."""
    return TestClient(api.app, base_url=BASE)


def cookieless(api: TestClient, method: str, path: str, **kwargs):
    """One request with no cookie, as from a client that never keeps one."""
    fresh = TestClient(api.app, base_url=BASE)
    return fresh.request(method, path, **kwargs)


def played(api: TestClient) -> dict:
    """A new game of ``api``'s session that has seen a move."""
    state = api.post("/api/games", json={}).json()
    return step(api, state, np.random.default_rng(0))


def test_a_game_belongs_to_the_session_that_made_it():
    alice = client(arranged=False)
    first = alice.get("/api/config")
    cookie = first.headers["set-cookie"]
    assert cookie.startswith("pis_session=") and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie and "Path=/" in cookie
    assert "set-cookie" not in alice.get("/api/config").headers  # issued once
    game = played(alice)
    gid, version = game["id"], game["version"]
    bob = other_session(alice)
    for method, path, body in (("GET", "", None), ("GET", "/history", None),
                               ("POST", "/move", {"action": 56, "version": version}),
                               ("POST", "/advance", {"version": version}),
                               ("POST", "/next-deal", {"version": version})):
        r = bob.request(method, f"/api/games/{gid}{path}", json=body)
        assert r.status_code == 404 and "unknown game" in r.json()["error"], (path, r.text)
    # a cookie the server did not issue, or one with a forged tag, is a new session
    sid = alice.cookies["pis_session"].split(".")[0]
    for value in (sid + ".0" * 16, sid, "x" * 80):
        r = cookieless(alice, "GET", f"/api/games/{gid}",
                       headers={"Cookie": f"pis_session={value}"})
        assert r.status_code == 404 and r.headers["set-cookie"].startswith("pis_session=")
    assert alice.get(f"/api/games/{gid}").json()["version"] == version
    assert game_of(alice, gid).version == version  # nothing the others sent changed it


def test_per_session_quotas():
    api = client("--max-games-per-session", "3", "--new-games-per-minute", "5",
                 arranged=False)
    store = api.app.state.games
    now = [1000.0]
    store.clock = lambda: now[0]
    mine = [api.post("/api/games", json={}).json()["id"] for _ in range(3)]
    other = other_session(api)
    theirs = other.post("/api/games", json={}).json()["id"]
    fourth = api.post("/api/games", json={}).json()["id"]  # past 3: my oldest goes
    assert api.get(f"/api/games/{mine[0]}").status_code == 404
    assert all(api.get(f"/api/games/{g}").status_code == 200 for g in mine[1:] + [fourth])
    assert other.get(f"/api/games/{theirs}").status_code == 200
    assert len(store) == 4
    api.post("/api/games", json={})  # the fifth new game this minute
    r = api.post("/api/games", json={})
    assert r.status_code == 429 and "5 a minute" in r.json()["error"]
    assert r.headers["retry-after"] == "60" and set(r.json()) == {"error"}
    assert other.post("/api/games", json={}).status_code == 201  # another session's quota
    now[0] += 61
    assert api.post("/api/games", json={}).status_code == 201


def test_a_flood_of_new_sessions_cannot_evict_a_game_in_play():
    """One client plays; a stream of cookieless clients creates games. Games nobody has
    moved in are evicted first; once every place holds a game in play, a new game is
    refused with 503 and Retry-After, and the game in play is never lost."""
    api = client("--max-games", "4", "--protect-minutes", "5", arranged=False)
    store = api.app.state.games
    now = [5000.0]
    store.clock = lambda: now[0]
    mine = played(api)
    for _ in range(20):  # games nobody moves in: they evict one another, never mine
        assert cookieless(api, "POST", "/api/games", json={}).status_code == 201
        assert api.get(f"/api/games/{mine['id']}").status_code == 200
    assert len(store) == 4
    flooders = []
    for _ in range(3):  # sessions whose games see a move fill the other places
        flooder = other_session(api)
        played(flooder)
        flooders.append(flooder)
    for _ in range(10):
        r = cookieless(api, "POST", "/api/games", json={})
        assert r.status_code == 503 and "try again" in r.json()["error"]
        assert r.headers["retry-after"] == "300"
    assert len(store) == 4
    state = settle(api, api.get(f"/api/games/{mine['id']}").json())
    assert state["status"] in ("your_turn", "bot_turn", "deal_over", "match_over")
    now[0] += 301  # past the protection: the least recently used game may go
    assert cookieless(api, "POST", "/api/games", json={}).status_code == 201


def test_an_evicted_games_bots_are_closed_even_when_its_lane_is_full():
    api = client("--max-games", "1", arranged=False)
    lane = api.app.state.workers.lanes[0]
    first = api.post("/api/games", json={}).json()["id"]
    deadline = time.monotonic() + 30
    while (first, 1) not in lane._agents:  # the lane opened its bot
        assert time.monotonic() < deadline
        time.sleep(0.01)
    lane.max_queued = 0  # the lane takes no more moves or games...
    r = api.post("/api/games", json={})
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    lane.max_queued = 1
    second = api.post("/api/games", json={}).json()["id"]  # evicts the first
    lane.max_queued = 0  # ...but a close still goes through
    assert api.get(f"/api/games/{first}").status_code == 404
    while (first, 1) in lane._agents:
        assert time.monotonic() < deadline, "the evicted game's bot was never closed"
        time.sleep(0.01)
    assert (second, 1) in lane._agents or lane._queued == 0


def test_a_game_is_protected_for_exactly_the_protect_minutes():
    api = client("--max-games", "1", "--protect-minutes", "5", arranged=False)
    store = api.app.state.games
    now = [1000.0]
    store.clock = lambda: now[0]
    mine = played(api)
    moved = game_of(api, mine["id"]).moved_at
    assert store._owned == {game_of(api, mine["id"]).owner: 1}
    now[0] = moved + 299.5
    r = cookieless(api, "POST", "/api/games", json={})
    assert r.status_code == 503 and r.headers["retry-after"] == "1"
    assert r.json()["error"] == "the table is full of games in play: try again in 1 s"
    now[0] = moved + 300  # the window is over: the game may go
    assert cookieless(api, "POST", "/api/games", json={}).status_code == 201
    assert api.get(f"/api/games/{mine['id']}").status_code == 404
    assert len(store._owned) == 1 and list(store._owned.values()) == [1]
    assert store.weight == store.weight_of(game_of(api, next(iter(store._games))).bots)

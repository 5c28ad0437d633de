"""The browser table's JSON API without a browser: every endpoint, and bad input (a 4xx
with a message, the game unchanged)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")

from fastapi.testclient import TestClient  # noqa: E402

from agents import make  # noqa: E402
from agents.web.app import create_app  # noqa: E402
from agents.web.server import build, build_parser, main  # noqa: E402
from pis_env import card_name, raw_env  # noqa: E402

PPO = "ppo:models/ppo_2p.zip"


def client(*argv: str) -> TestClient:
    config, views = build(build_parser().parse_args(list(argv)))
    return TestClient(create_app(config, views))


@pytest.fixture(scope="module")
def api() -> TestClient:
    return client("--allow", f"random,{PPO}", "--seed", "3")


def stacked_deck(hand0: list[int], seed: int = 0) -> list[int]:
    """A deck (dealer 1) that deals ``hand0`` to player_0, the rest shuffled."""
    rest = [c for c in np.random.default_rng(seed).permutation(52).tolist() if c not in hand0]
    deck = []
    for i in range(7):
        deck += [hand0[i], rest[i]]
    return deck + rest[7:]


def shadow(api: TestClient, game_id: str):
    """The game replayed from its exported history: an env independent of the server's."""
    return raw_env.from_history(api.get(f"/api/games/{game_id}/history").text)


def step(api: TestClient, state: dict, rng: np.random.Generator) -> dict:
    gid, version = state["id"], state["version"]
    if state["status"] == "your_turn":
        action = int(rng.choice([m["action"] for m in state["legal"]]))
        r = api.post(f"/api/games/{gid}/move", json={"action": action, "version": version})
    elif state["status"] == "bot_turn":
        r = api.post(f"/api/games/{gid}/advance", json={"version": version})
    else:
        r = api.post(f"/api/games/{gid}/next-deal", json={"version": version})
    assert r.status_code == 200, r.text
    return r.json()


# ---------------------------------------------------------------------- page and config
def test_page_and_static_files(api):
    page = api.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert '<script src="/static/app.js">' in page.text
    for name in ("app.js", "style.css"):
        assert api.get(f"/static/{name}").status_code == 200
    assert "http" not in page.text.replace("http-equiv", "")  # nothing from the network
    assert api.get("/static/nothing.js").status_code == 404


def test_config_lists_what_the_command_line_fixed(api):
    cfg = api.get("/api/config").json()
    assert cfg["num_players"] == 2 and cfg["bots"] == ["heuristic"]
    assert cfg["offered"] == ["heuristic", "random", PPO] and cfg["policies"] == [PPO]
    assert cfg["rules"]["illegal_action"] == "raise" and cfg["delay_ms"] == 600


# ---------------------------------------------------------------------- play
def test_stacked_deck_deals_the_hand_shown():
    hand = [0, 5, 9, 20, 33, 40, 51]
    api = client()
    state = api.post("/api/games", json={"deck": stacked_deck(hand), "dealer": 1}).json()
    pos = state["position"]
    assert [c["id"] for c in pos["hands"][0]] == sorted(hand)
    assert [c["label"] for c in pos["hands"][0]] == [card_name(c, unicode=True)
                                                     for c in sorted(hand)]
    assert pos["hands"][1] is None  # the bot's hand is not sent during play
    assert [c["color"] for c in pos["hands"][0]] == ["black", "black", "black", "red", "red",
                                                     "black", "black"]
    assert pos["turn"] == 0 and pos["stock_size"] == 38 and pos["hand_sizes"] == [7, 7]
    names = api.post("/api/games", json={"deck": [card_name(c) for c in stacked_deck(hand)],
                                         "dealer": 1}).json()
    assert names["position"]["hands"][0] == pos["hands"][0]


@pytest.mark.parametrize("bot", ["heuristic", "random"])
def test_whole_deal_legal_moves_are_the_mask_and_the_result_the_engine(api, bot):
    rng = np.random.default_rng(1)
    state = api.post("/api/games", json={"bots": [bot], "seed": 11}).json()
    assert state["bots"] == [bot]
    while state["status"] in ("your_turn", "bot_turn"):
        env = shadow(api, state["id"])
        mask = env.observe("player_0")["action_mask"]
        offered = sorted(m["action"] for m in state["legal"])
        if state["status"] == "your_turn":
            assert offered == np.flatnonzero(mask).tolist()
        else:
            assert offered == [] and env.game.current == 1
        state = step(api, state, rng)
    env = shadow(api, state["id"])
    result = state["position"]["result"]
    assert state["status"] == "match_over"
    assert result["charges"] == env.game.charges and result["winners"] == env.game.winners
    assert state["position"]["hands"][1] is not None  # every hand shown at the end
    assert len(state["log"]) == sum(len(h) for h in env.game.histories)
    assert api.post(f"/api/games/{state['id']}/advance",
                    json={"version": state["version"]}).status_code == 409


def test_a_match_pauses_between_deals():
    api = client("--deals", "2", "--bots", "random", "--seed", "0")
    rng = np.random.default_rng(0)
    state = api.post("/api/games", json={}).json()
    while state["status"] in ("your_turn", "bot_turn"):
        state = step(api, state, rng)
    assert state["status"] == "deal_over" and state["position"]["deal"] == 0
    gid, version = state["id"], state["version"]
    totals = state["position"]["result"]["totals"]
    for path, body in (("move", {"action": 56, "version": version}),
                       ("advance", {"version": version})):
        r = api.post(f"/api/games/{gid}/{path}", json=body)
        assert r.status_code == 409 and "next deal" in r.json()["error"]
    state = step(api, state, rng)
    assert state["position"]["deal"] == 1 and state["position"]["totals"] == totals
    while state["status"] != "match_over":
        state = step(api, state, rng)
    r = api.post(f"/api/games/{gid}/next-deal", json={"version": state["version"]})
    assert r.status_code == 409 and "over" in r.json()["error"]


def test_bad_moves_are_refused_and_change_nothing(api):
    state = api.post("/api/games", json={"deck": stacked_deck([13, 14, 15, 16, 17, 18, 19]),
                                         "dealer": 1}).json()  # no club: only draw is legal
    gid = state["id"]
    assert [m["action"] for m in state["legal"]] == [56]
    bad = [
        ({"action": 13, "version": 0}, 400, "illegal move"),
        ({"action": 57, "version": 0}, 400, "illegal move"),
        ({"action": 58, "version": 0}, 400, "0..57"),
        ({"action": -1, "version": 0}, 400, "0..57"),
        ({"action": "x", "version": 0}, 422, "action"),
        ({"action": 1.5, "version": 0}, 422, "action"),
        ({"action": True, "version": 0}, 422, "action"),
        ({"version": 0}, 422, "action"),
        ({"action": 56, "version": 0, "extra": 1}, 422, "extra"),
        ({"action": 56, "version": 5}, 409, "stale"),
    ]
    for body, status, words in bad:
        r = api.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["error"]
    r = api.post(f"/api/games/{gid}/move", content=b"not json",
                 headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "error" in r.json()
    assert api.get(f"/api/games/{gid}").json() == state  # unchanged
    r = api.post(f"/api/games/{gid}/advance", json={"version": 0})
    assert r.status_code == 409 and "your turn" in r.json()["error"]
    after = api.post(f"/api/games/{gid}/move", json={"action": 56, "version": 0}).json()
    assert after["version"] == 1 and after["log"][0]["text"].startswith("You drew")
    r = api.post(f"/api/games/{gid}/move", json={"action": 56, "version": 0})
    assert r.status_code == 409 and "stale" in r.json()["error"]  # a double click


def test_unknown_and_expired_game_ids():
    api = client("--max-games", "2")
    first = api.post("/api/games", json={}).json()["id"]
    for path, method, body in (("", "GET", None), ("/history", "GET", None),
                               ("/move", "POST", {"action": 56}), ("/advance", "POST", {}),
                               ("/next-deal", "POST", {})):
        r = api.request(method, f"/api/games/nope{path}", json=body)
        assert r.status_code == 404 and "unknown game 'nope'" in r.json()["error"]
    assert api.get(f"/api/games/{first}").status_code == 200
    api.post("/api/games", json={})
    api.post("/api/games", json={})
    r = api.get(f"/api/games/{first}")
    assert r.status_code == 404 and "expired" in r.json()["error"]


def test_bad_new_game_requests(api):
    cases = [
        ({"bots": ["mc"]}, 400, "not offered"),
        ({"bots": ["agents.random_agent:RandomAgent"]}, 400, "not offered"),
        ({"bots": ["heuristic", "heuristic"]}, 400, "choose 1 bot"),
        ({"deck": [0, 1, 2]}, 400, "bad deck"),
        ({"deck": ["ZZ"] * 52}, 400, "bad deck"),
        ({"dealer": 5}, 400, "dealer"),
        ({"seed": "x"}, 422, "seed"),
        ({"players": 3}, 422, "players"),
    ]
    for body, status, words in cases:
        r = api.post("/api/games", json=body)
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["error"], r.json()


def test_tabs_play_separate_games(api):
    a = api.post("/api/games", json={"seed": 5}).json()
    b = api.post("/api/games", json={"seed": 5}).json()
    assert a["id"] != b["id"] and a["position"] == b["position"]
    rng = np.random.default_rng(0)
    a2 = step(api, a, rng)
    assert a2["version"] == 1
    assert api.get(f"/api/games/{b['id']}").json() == b


def test_history_endpoint_is_export_history(api):
    state = api.post("/api/games", json={"seed": 8}).json()
    rng = np.random.default_rng(2)
    for _ in range(6):
        state = step(api, state, rng)
    r = api.get(f"/api/games/{state['id']}/history")
    assert r.headers["content-type"].startswith("application/json")
    assert "attachment" in r.headers["content-disposition"]
    env = raw_env.from_history(r.text)
    assert sum(len(h) for h in env.game.histories) == state["version"]


# ---------------------------------------------------------------------- policy in play
def test_policy_of_a_ppo_bot_equals_agents_ppo(api):
    agent = make("ppo", path="models/ppo_2p.zip")
    rng = np.random.default_rng(4)
    state = api.post("/api/games", json={"bots": [PPO], "seed": 21}).json()
    checked = 0
    while state["status"] in ("your_turn", "bot_turn"):
        if state["status"] == "bot_turn":
            obs = shadow(api, state["id"]).observe("player_1")
            state = step(api, state, rng)
            entry = state["log"][-1]
            shown = {m["action"]: m["p"] for m in entry["policy"]["moves"]}
            expected = agent.probabilities(obs)
            assert sorted(shown) == np.flatnonzero(obs["action_mask"]).tolist()
            assert np.allclose([shown[a] for a in sorted(shown)],
                               expected[sorted(shown)], atol=1e-12)
            assert entry["policy"]["chosen"] == entry["action"] == agent.act(obs)
            # the shipped critic reads hidden cards: no value during play
            assert entry["policy"]["value"] is None
            assert "full-table" in entry["policy"]["value_note"]
            checked += 1
        else:
            state = step(api, state, rng)
    assert checked > 0


# ---------------------------------------------------------------------- replays
def finished_history(seed: int = 0, draw: float = 0.0, **rules) -> str:
    """A match of random legal moves (drawing with probability ``draw`` when legal)."""
    env = raw_env(**rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()) and not all(env.truncations.values()):
        legal = env.game.legal_actions()
        if 56 in legal and rng.random() < draw:
            env.step(56)
        else:
            env.step(legal[rng.integers(len(legal))])
    return env.export_history()


def test_replay_frames_step_through_every_position(api):
    text = finished_history(3)
    env = raw_env.from_history(text)
    moves = env.game.histories[0]
    summary = api.post("/api/replays", json={"history": text}).json()
    assert summary["frames"] == len(moves) + 1 and summary["policy"] == PPO
    assert [m["seat"] for m in summary["moves"][1:]] == [p for p, _ in moves]
    rid = summary["id"]
    replay = raw_env(**json.loads(text)["rules"])
    replay.reset(options={"deck": env.game.deal_decks[0], "dealer": env.game.deal_dealers[0]})
    for k in range(summary["frames"]):
        frame = api.get(f"/api/replays/{rid}/frames/{k}?view=table").json()
        pos = frame["position"]
        for seat in range(2):
            assert [c["id"] for c in pos["hands"][seat]] == [
                c for c in range(52) if replay.game.hands[seat] >> c & 1]
        assert [c["id"] for c in pos["stock"]] == replay.game.stock[::-1]
        seat_view = api.get(f"/api/replays/{rid}/frames/{k}?view=1").json()["position"]
        if not pos["deal_over"]:
            assert seat_view["hands"][0] is None and seat_view["hands"][1] == pos["hands"][1]
            assert "stock" not in seat_view
            assert frame["next"] == moves[k][1]
            replay.step(moves[k][1])
    assert pos["result"]["charges"] == env.game.charges


def test_replay_of_a_match_shows_each_finished_deal():
    text = finished_history(5, num_deals=3)
    env = raw_env.from_history(text)
    api = client("--seed", "0")
    summary = api.post("/api/replays", json={"history": json.loads(text)}).json()
    moves = sum(len(h) for h in env.game.histories)
    assert summary["frames"] == moves + 1 + 2  # each later deal's first position
    ends = []
    for k in range(summary["frames"]):
        pos = api.get(f"/api/replays/{summary['id']}/frames/{k}").json()["position"]
        if pos["deal_over"]:
            ends.append(pos["result"]["totals"])
    assert len(ends) == 3 and ends[-1] == env.game.totals
    assert summary["policy"] is None  # the server's policies are for other tables


def test_replay_policy_view(api):
    text = finished_history(9)
    summary = api.post("/api/replays", json={"history": text}).json()
    agent = make("ppo", path="models/ppo_2p.zip")
    env = raw_env.from_history(text)
    moves = env.game.histories[0]
    replay = raw_env(**json.loads(text)["rules"])
    replay.reset(options={"deck": env.game.deal_decks[0], "dealer": env.game.deal_dealers[0]})
    for k in range(4):
        seat = replay.game.current
        obs = replay.observe(f"player_{seat}")
        base = f"/api/replays/{summary['id']}/frames/{k}"
        full = api.get(f"{base}?view=table&policy=1").json()["policy"]
        own = api.get(f"{base}?view={seat}&policy=1").json()["policy"]
        other = api.get(f"{base}?view={1 - seat}&policy=1").json()["policy"]
        none = api.get(f"{base}?view=table").json()["policy"]
        expected = agent.probabilities(obs)
        for shown in (full, own):
            assert {m["action"]: m["p"] for m in shown["moves"]} == pytest.approx(
                {a: expected[a] for a in np.flatnonzero(obs["action_mask"]).tolist()},
                abs=1e-12)
        assert full["value_kind"] == "privileged" and isinstance(full["value"], float)
        assert own["value"] is None and "full-table" in own["value_note"]
        assert "switch to that seat" in other["note"] and none is None
        replay.step(moves[k][1])


def test_bad_histories_are_refused(api):
    good = json.loads(finished_history(1))
    tampered = dict(good)
    tampered["deals"] = [dict(good["deals"][0], dealer=1 - good["deals"][0]["dealer"])]
    cases = [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "history"),
        (json.dumps({"hello": "world"}), "history"),
        (json.dumps(tampered), "history"),
    ]
    for text, words in cases:
        r = api.post("/api/replays", json={"history": text})
        assert r.status_code == 400, text
        assert r.json()["error"].startswith("not a replayable history") and words in \
            r.json()["error"]
    assert api.post("/api/replays", json={}).status_code == 422
    assert api.post("/api/replays", json={"history": 5}).status_code == 422


def test_bad_frame_requests(api):
    rid = api.post("/api/replays", json={"history": finished_history(2)}).json()["id"]
    for query, status, words in (("frames/9999", 404, "does not exist"),
                                 ("frames/-1", 404, "does not exist"),
                                 ("frames/x", 422, "k"),
                                 ("frames/0?view=7", 400, "view must be"),
                                 ("frames/0?view=me", 400, "view must be")):
        r = api.get(f"/api/replays/{rid}/{query}")
        assert r.status_code == status, query
        assert words in r.json()["error"]
    r = api.get("/api/replays/nope/frames/0")
    assert r.status_code == 404 and "unknown replay" in r.json()["error"]


# ---------------------------------------------------------------------- command line
@pytest.mark.parametrize("argv, words", [
    (["--bots", "nobody"], "unknown agent"),
    (["--bots", "ppo:models/missing.zip"], "not found"),
    (["--bots", "heuristic,heuristic"], "2-player table has 1 other seat"),
    (["--players", "9"], "num_players"),
    (["--option", "seven_penalty=triple"], "seven_penalty"),
    (["--bots", "human"], "seat 0"),
    (["--delay", "-5"], "--delay"),
])
def test_bad_command_lines_stop_with_a_message(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("pis-serve: error:") and words in err


def test_bots_fill_every_seat_of_a_bigger_table():
    api = client("--players", "4", "--bots", "random", "--deals", "2")
    state = api.post("/api/games", json={}).json()
    assert state["bots"] == ["random"] * 3
    assert state["position"]["names"] == ["You", "random #1", "random #2", "random #3"]
    assert state["position"]["num_deals"] == 2


def test_replay_of_a_reshuffling_deal_reaches_the_envs_final_position(api):
    text = finished_history(6, draw=0.8, empty_stock="reshuffle", max_turns=600)
    env = raw_env.from_history(text)
    draws = sum(1 for _, a in env.game.histories[0] if a == 56)
    assert draws > 38  # more cards drawn than the first stock held: it was reshuffled
    summary = api.post("/api/replays", json={"history": text}).json()
    last = api.get(f"/api/replays/{summary['id']}/frames/{summary['frames'] - 1}").json()
    pos = last["position"]
    assert [[c["id"] for c in hand] for hand in pos["hands"]] == [
        [c for c in range(52) if env.game.hands[i] >> c & 1] for i in range(2)]
    assert [c["id"] for c in pos["stock"]] == env.game.stock[::-1]
    assert pos["deal_over"] and pos["result"]["charges"] == env.game.charges

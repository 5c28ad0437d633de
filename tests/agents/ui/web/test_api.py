"""The browser table's JSON API without a browser: every endpoint, bad and hostile input
(a 4xx with a message in the one error shape, the game unchanged), what live play may
reveal, and the limits."""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from agents.ui.web.replay import MAX_REPLAY_ACTIONS, SNAPSHOT_EVERY
from agents.ui.web.server import app_from_args, build_parser, main
from agents.ui.web.tables import GAME_BYTES
from benchmarks.web_load import long_history
from pis_env import card_name, raw_env
from pis_env.engine import GameState
from pis_env.rules import MAX_MAX_TURNS, MAX_NUM_DEALS, Rules
from tests.conftest import finished_history, stacked_deck
from tests.pis_env import reference_rules

PPO = "ppo:models/ppo_2p.zip"
BASE = "http://127.0.0.1:8000"
#: Dealer 0: the bot (seat 1) opens, with no club, so it must draw.
BOT_FIRST = stacked_deck([[], [13, 14, 15, 16, 17, 18, 19]], dealer=0)[0]


def client(*argv: str, base_url: str = BASE, arranged: bool = True) -> TestClient:
    """The app of ``pis-serve ARGV`` (bots in a thread lane, as ``--bot-workers 0``), one
    browser session (the test client keeps its cookie). Unless ``argv`` says otherwise:
    single deals, bot moves shown as soon as they are made (``--bot-min-ms 0``) and, with
    ``arranged``, chosen seeds and decks allowed."""
    extra = ["--bot-workers", "0"]
    if "--deals" not in argv:
        extra += ["--deals", "1"]
    if "--bot-min-ms" not in argv:
        extra += ["--bot-min-ms", "0"]
    if arranged:
        extra.append("--allow-arranged")
    app = app_from_args(build_parser().parse_args([*extra, *argv]))
    return TestClient(app, base_url=base_url)


def game_of(api: TestClient, game_id: str):
    """The server's ``GameSession`` of a game (whoever owns it)."""
    return api.app.state.games.peek(game_id)


@pytest.fixture(scope="module")
def api() -> TestClient:
    return client("--allow", f"random,{PPO}", "--seed", "3")


def settle(api: TestClient, state: dict, timeout: float = 30) -> dict:
    """Poll the game while a bot thinks, as the page does; the condition, not a clock."""
    deadline = time.monotonic() + timeout
    while state["status"] == "bot_thinking":
        assert time.monotonic() < deadline, "the bot's move never came"
        time.sleep(0.005)
        r = api.get(f"/api/games/{state['id']}")
        assert r.status_code == 200, r.text
        state = r.json()
    return state


def step(api: TestClient, state: dict, rng: np.random.Generator,
         seen: list | None = None) -> dict:
    """One request of the page (a random legal move, a bot move or the next deal); every
    answer (polls included) goes to ``seen``."""
    gid, version = state["id"], state["version"]
    if state["status"] == "your_turn":
        action = int(rng.choice([m["action"] for m in state["legal"]]))
        r = api.post(f"/api/games/{gid}/move", json={"action": action, "version": version})
    elif state["status"] == "bot_turn":
        r = api.post(f"/api/games/{gid}/advance", json={"version": version})
    else:
        r = api.post(f"/api/games/{gid}/next-deal", json={"version": version})
    assert r.status_code == 200, r.text
    state = r.json()
    if seen is not None:
        seen.append(r.text)
    polled = settle(api, state)
    if seen is not None and polled is not state:
        seen.append(json.dumps(polled))
    return polled


def play_out(api: TestClient, state: dict, rng, seen: list | None = None) -> list[dict]:
    """Play to the end of the match; the states of every request (each with the move log
    from the version its request named), the last one read again with the whole log."""
    states = [state]
    while state["status"] != "match_over":
        state = step(api, state, rng, seen)
        states.append(state)
    states[-1] = api.get(f"/api/games/{state['id']}").json()
    return states


def live_positions(history_text: str) -> dict[int, GameState]:
    """The position to play after each number of moves (a deal's end: the next deal's
    first position) of a finished match, stepped from its exported history."""
    done = raw_env.from_history(history_text)
    game = GameState(done.rules, deck=done.game.deal_decks, dealer=done.game.deal_dealers[0])
    out, version = {0: game.copy()}, 0
    for k, actions in enumerate(done.game.histories):
        if k:
            game.next_deal()
            out[version] = game.copy()
        for _, action in actions:
            game.apply(action)
            version += 1
            out[version] = game.copy()
    return out


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
    deck, dealer = stacked_deck([hand], num_players=2, seed=0)
    state = api.post("/api/games", json={"deck": deck, "dealer": dealer}).json()
    pos = state["position"]
    assert [c["id"] for c in pos["hands"][0]] == sorted(hand)
    assert [c["label"] for c in pos["hands"][0]] == [card_name(c, unicode=True)
                                                     for c in sorted(hand)]
    assert pos["hands"][1] is None  # the bot's hand is not sent during play
    assert [c["color"] for c in pos["hands"][0]] == ["black", "black", "black", "red", "red",
                                                     "black", "black"]
    assert pos["turn"] == 0 and pos["stock_size"] == 38 and pos["hand_sizes"] == [7, 7]
    names = api.post("/api/games", json={"deck": [card_name(c) for c in deck],
                                         "dealer": dealer}).json()
    assert names["position"]["hands"][0] == pos["hands"][0]


@pytest.mark.parametrize("bot", ["heuristic", "random"])
def test_whole_match_moves_offered_are_the_reference_rules(bot):
    """The moves the page offers, at every turn of a 2-deal match, are the legal moves of
    the independent reference rules (tests/pis_env/reference_rules.py) in the position
    the finished game's history reaches; the result is the history's."""
    api = client("--allow", "random", "--deals", "2")
    rng = np.random.default_rng(1)
    state = api.post("/api/games", json={"bots": [bot], "seed": 11}).json()
    assert state["bots"] == [bot]
    states = play_out(api, state, rng)
    history = api.get(f"/api/games/{state['id']}/history")
    assert history.status_code == 200
    positions = live_positions(history.text)
    turns = 0
    for shown in states:
        game = positions[shown["version"]]
        offered = sorted(m["action"] for m in shown["legal"])
        if shown["status"] == "your_turn":
            assert game.current == 0
            assert offered == sorted(reference_rules.legal_actions(game)), shown["version"]
            turns += 1
        else:
            assert offered == []
    assert turns > 5
    env = raw_env.from_history(history.text)
    last = states[-1]
    assert last["position"]["result"]["charges"] == env.game.charges
    assert last["position"]["result"]["totals"] == env.game.totals
    assert last["position"]["hands"][1] is not None  # every hand shown at the end
    moves = sum(len(h) for h in env.game.histories)
    assert last["version"] == moves
    assert len(api.get(f"/api/games/{state['id']}").json()["log"]) == moves
    assert api.post(f"/api/games/{state['id']}/advance",
                    json={"version": last["version"]}).status_code == 409


def _hidden_cards(session) -> set[int]:
    """Cards seat 0 cannot know now: the bots' hands and the stock, never yet played."""
    game = session.env.game
    played = {a for _, a in game.history if a < 52}
    hidden = {c for c in range(52) if any(game.hands[i] >> c & 1
                                          for i in range(1, game.num_players))}
    return (hidden | set(game.stock)) - played


def _card_ids(value) -> set[int]:
    """Every card id a response names (card objects and move actions under 52)."""
    out = set()
    if isinstance(value, dict):
        if "label" in value and "id" in value and isinstance(value["id"], int):
            out.add(value["id"])
        if "action" in value and isinstance(value["action"], int) and value["action"] < 52 \
                and "label" in value:
            out.add(value["action"])
        for v in value.values():
            out |= _card_ids(v)
    elif isinstance(value, list):
        for v in value:
            out |= _card_ids(v)
    return out


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | set().union(*map(_keys, value.values()))
    if isinstance(value, list):
        return set().union(set(), *map(_keys, value))
    return set()


class _LeakCheck(list):
    """Checks each answer when it arrives, against the hidden cards of that moment."""

    def __init__(self, session):
        super().__init__()
        self.session = session

    def append(self, text: str) -> None:
        super().append(text)
        data = json.loads(text)
        assert not {"seed", "deck", "decks", "stock", "deal_decks"} & _keys(data), text
        game = self.session.env.game
        if "position" not in data or data["status"] in ("deal_over", "match_over") \
                or data["position"]["deal"] != game.deal_index or game.deal_over:
            return
        hidden = _hidden_cards(self.session)
        current = {k: data[k] for k in ("position", "legal")}
        current["log"] = [e for e in data["log"] if e["deal"] == game.deal_index]
        leaked = _card_ids(current) & hidden
        assert not leaked, (data["status"], [card_name(c) for c in leaked])
        flat = json.dumps(current, ensure_ascii=False)
        assert not [c for c in hidden if f'"{card_name(c, unicode=True)}' in flat]


@pytest.mark.parametrize("bot, deals", [("heuristic", "2"), (PPO, "1")])
def test_live_play_reveals_no_hidden_card_seed_or_deck(bot, deals):
    """Every answer of live play (moves, bot moves, polls, a refused history) is read:
    none has a seed or a deck, and none names a card that is in a bot's hand or the
    stock (a ppo bot's policy would: it lists the bot's legal moves)."""
    api = client("--bots", bot, "--deals", deals, arranged=False)
    rng = np.random.default_rng(7)
    state = api.post("/api/games", json={"bots": [bot]}).json()
    gid = state["id"]
    seen = _LeakCheck(game_of(api, gid))
    while state["status"] != "match_over":
        seen.append(api.get(f"/api/games/{gid}").text)
        if state["status"] != "deal_over":
            refused = api.get(f"/api/games/{gid}/history")
            assert refused.status_code == 409 and "once the game is over" in \
                refused.json()["error"]
            seen.append(refused.text)
        state = step(api, state, rng, seen)
    assert len(seen) > 20
    assert all("policy" not in entry for entry in state["log"])  # the flag is off


def test_bot_policy_shown_only_with_the_operators_flag():
    api = client("--bots", PPO)
    assert api.get("/api/config").json()["show_bot_policy"] is False
    shown = client("--bots", PPO, "--show-bot-policy")
    assert shown.get("/api/config").json()["show_bot_policy"] is True
    for c, expect in ((api, False), (shown, True)):
        state = c.post("/api/games", json={"seed": 4, "deck": BOT_FIRST, "dealer": 0}).json()
        state = step(c, state, np.random.default_rng(0))
        assert state["log"][0]["seat"] == 1
        assert ("policy" in state["log"][0]) is expect


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
    deck, dealer = stacked_deck([[13, 14, 15, 16, 17, 18, 19]], num_players=2)  # only draw
    state = api.post("/api/games", json={"deck": deck, "dealer": dealer}).json()
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
                               ("/move", "POST", {"action": 56, "version": 0}),
                               ("/advance", "POST", {"version": 0}),
                               ("/next-deal", "POST", {"version": 0})):
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


def test_history_endpoint_is_export_history_once_the_game_is_over(api):
    state = api.post("/api/games", json={"seed": 8}).json()
    states = play_out(api, state, np.random.default_rng(2))
    r = api.get(f"/api/games/{state['id']}/history")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert "attachment" in r.headers["content-disposition"]
    env = raw_env.from_history(r.text)
    assert sum(len(h) for h in env.game.histories) == states[-1]["version"]


# ---------------------------------------------------------------------- policy in play
@functools.cache
def onnx_probabilities():
    """The shipped policy's actor exported to ONNX and run by onnxruntime: a forward
    pass independent of ``agents.ppo``'s numpy one. Exported once per test process (the
    browser tests use it too)."""
    import onnxruntime as ort

    from train.common.export import export_onnx

    folder = tempfile.mkdtemp(prefix="pis-onnx-")
    out = export_onnx("models/ppo_2p.zip", os.path.join(folder, "ppo_2p.onnx"))
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    shutil.rmtree(folder, ignore_errors=True)

    def probabilities(observation: dict) -> np.ndarray:
        mask = observation["action_mask"].astype(np.float32)[None]
        (logits,) = session.run(["logits"], {
            "observation": observation["observation"].astype(np.float32)[None],
            "action_mask": mask})
        z = np.where(mask[0] > 0, logits[0].astype(np.float64), -np.inf)
        p = np.exp(z - z.max())
        return p / p.sum()
    return probabilities


@pytest.fixture
def onnx_actor():
    return onnx_probabilities()


def bot_observations(history_text: str, seat: int) -> list[dict]:
    """``seat``'s observation at each of its decisions, in order, from a fresh env
    stepped through the finished game's history."""
    done = raw_env.from_history(history_text)
    env = raw_env(**done.rules.to_dict())
    env.reset(options={"deck": done.game.deal_decks[0], "dealer": done.game.deal_dealers[0]})
    out = []
    for player, action in done.game.histories[0]:
        if player == seat:
            out.append(env.observe(f"player_{seat}"))
        env.step(action)
    return out


def test_policy_of_a_ppo_bot_equals_an_independent_forward_pass(onnx_actor):
    api = client("--bots", PPO, "--show-bot-policy")
    state = api.post("/api/games", json={"seed": 21}).json()
    states = play_out(api, state, np.random.default_rng(4))
    entries = [e for e in states[-1]["log"] if e["seat"] == 1]
    observations = bot_observations(api.get(f"/api/games/{state['id']}/history").text, 1)
    assert len(entries) == len(observations) > 0
    for entry, obs in zip(entries, observations):
        shown = {m["action"]: m["p"] for m in entry["policy"]["moves"]}
        expected = onnx_actor(obs)
        assert sorted(shown) == np.flatnonzero(obs["action_mask"]).tolist()
        assert [shown[a] for a in sorted(shown)] == pytest.approx(
            expected[sorted(shown)].tolist(), abs=2e-5)
        # the shipped bot plays its most likely move
        assert entry["policy"]["chosen"] == entry["action"] == int(np.argmax(expected))
        # the shipped critic reads hidden cards: no value during play
        assert entry["policy"]["value"] is None
        assert "full-table" in entry["policy"]["value_note"]


# ---------------------------------------------------------------------- replays
def test_replay_frames_step_through_every_position(api):
    text = finished_history(3)
    env = raw_env.from_history(text)
    moves = env.game.histories[0]
    summary = api.post("/api/replays", json={"history": text}).json()
    assert summary["frames"] == len(moves) + 1 and summary["policy"] == PPO
    rid = summary["id"]
    listed = api.get(f"/api/replays/{rid}/moves?start=0").json()["moves"]
    assert [m["seat"] for m in listed[1:]] == [p for p, _ in moves]
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


def test_replay_policy_view(api, onnx_actor):
    text = finished_history(9)
    summary = api.post("/api/replays", json={"history": text}).json()
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
        expected = onnx_actor(obs)
        for shown in (full, own):
            assert {m["action"]: m["p"] for m in shown["moves"]} == pytest.approx(
                {a: expected[a] for a in np.flatnonzero(obs["action_mask"]).tolist()},
                abs=2e-5)
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


# ---------------------------------------------------------------------- hostile input
def test_stacked_deck_length_is_checked_before_any_card(monkeypatch):
    """A huge deck is refused on its length alone: no card of it is parsed (the check
    that was quadratic in the deck's length took minutes on 4 MB)."""
    import pis_env.engine as engine

    parsed = []
    monkeypatch.setattr(engine, "parse_card", lambda c: parsed.append(c) or 0)
    with pytest.raises(ValueError, match="52 cards exactly once: got 1000000 cards"):
        GameState(deck=[0] * 1_000_000)
    assert parsed == []
    monkeypatch.undo()
    deck = list(range(52))
    deck[7] = 3
    with pytest.raises(ValueError, match=r"missing \['9C'\], duplicated \['5C'\]"):
        GameState(deck=deck)


def test_a_huge_body_is_refused_before_it_is_read(api):
    deck = json.dumps({"deck": ["2C"] * 1_000_000})  # 6 MB
    r = api.post("/api/games", content=deck, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "at most 2000000 bytes" in r.json()["error"]

    def chunks():  # streamed: no Content-Length, refused once the bytes pass the limit
        yield b'{"deck": ['
        for _ in range(400):
            yield b'"2C", ' * 2000
        yield b'"2C"]}'
    r = api.post("/api/games", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "too large" in r.json()["error"]
    small = client("--max-body-bytes", "400000")
    r = small.post("/api/games", json={"deck": ["2C"] * 50_000})  # under the body limit
    assert r.status_code == 400 and "got 50000 cards" in r.json()["error"]


def test_nested_json_is_a_4xx_not_a_500(api):
    nested = "[" * 100_000 + "]" * 100_000
    for body in ('{"history": ' + nested + "}", '{"history": {"a": ' + nested + "}}"):
        r = api.post("/api/replays", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400, r.text
        assert set(r.json()) == {"error"} and "Traceback" not in r.text
    r = api.post("/api/replays", json={"history": nested})
    assert r.status_code == 400 and "nested too deeply" in r.json()["error"]


@pytest.mark.parametrize("option, value, words", [
    ("num_deals", 10**9, f"1..{MAX_NUM_DEALS}"),
    ("max_turns", 10**9, f"1..{MAX_MAX_TURNS}"),
])
def test_history_rules_over_the_limits_are_refused(api, option, value, words):
    body = json.loads(finished_history(1))
    body["rules"][option] = value
    del body["sha256"]
    from pis_env.history import digest

    body["sha256"] = digest(body)
    r = api.post("/api/replays", json={"history": json.dumps(body)})
    assert r.status_code == 400 and option in r.json()["error"] and words in r.json()["error"]
    with pytest.raises(ValueError, match=option):
        Rules(**{option: value})


def test_foreign_host_and_cross_site_origin_are_refused():
    api = client()
    assert api.get("/api/config").status_code == 200
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example"):
        r = api.get("/api/config", headers={"Host": host})
        assert r.status_code == 400 and "does not answer to Host" in r.json()["error"]
    for origin in ("http://evil.example", "http://127.0.0.1:9999", "null"):
        r = api.post("/api/games", json={}, headers={"Origin": origin})
        assert r.status_code == 403, origin
        assert "not allowed" in r.json()["error"]
    assert api.post("/api/games", json={}, headers={"Origin": BASE}).status_code == 201
    assert len(api.app.state.games) == 1
    proxied = client("--allow-host", "cards.example.com",
                     "--allow-origin", "https://cards.example.com",
                     base_url="http://cards.example.com")
    r = proxied.post("/api/games", json={}, headers={"Origin": "https://cards.example.com"})
    assert r.status_code == 201
    assert proxied.get("/api/config", headers={"Host": "evil.example"}).status_code == 400


def test_a_post_must_be_json(api):
    before = len(api.app.state.games)
    for headers, content in (({}, b""), ({"Content-Type": "text/plain"}, b"{}"),
                             ({"Content-Type": "application/x-www-form-urlencoded"}, b"a=1"),
                             ({"Content-Type": "multipart/form-data; boundary=x"}, b"")):
        r = api.post("/api/games", content=content, headers=headers)
        assert r.status_code == 415 and "application/json" in r.json()["error"]
    assert len(api.app.state.games) == before


def test_security_headers_on_every_answer(api):
    for r in (api.get("/"), api.get("/static/app.js"), api.get("/api/config"),
              api.get("/api/games/nope"), api.get("/api/config", headers={"Host": "x.example"})):
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"


def test_one_error_shape_for_every_status():
    api = client()
    cases = [
        (api.get("/nowhere"), 404),
        (api.get("/static/nothing.js"), 404),
        (api.delete("/api/config"), 405),
        (api.put("/api/games", json={}), 405),
        (api.post("/api/games/x/move", json={"action": "x"}), 422),
        (api.post("/api/games/x/move", content=b"{", headers={"Content-Type":
                                                               "application/json"}), 422),
        (api.get("/api/replays/x/frames/y"), 422),
    ]
    for r, status in cases:
        assert r.status_code == status, r.text
        assert r.headers["content-type"] == "application/json"
        assert set(r.json()) == {"error"} and r.json()["error"]
    crashing = TestClient(api.app, base_url=BASE, raise_server_exceptions=False)

    def boom(*_):
        raise RuntimeError("secret internals")
    api.app.state.games.get = boom
    r = crashing.get("/api/games/abc")
    assert r.status_code == 500 and set(r.json()) == {"error"}
    assert "secret" not in r.text and "Traceback" not in r.text


# ---------------------------------------------------------------------- limits
def test_a_10000_move_replay_keeps_a_snapshot_every_k_frames_and_its_positions():
    text = long_history(10_000)
    api = client()
    summary = api.post("/api/replays", json={"history": text}).json()
    assert summary["frames"] == 10_001
    replay = api.app.state.replays.get(summary["id"])
    assert len(replay.snapshots) == -(-10_001 // SNAPSHOT_EVERY)
    assert all(not hasattr(f, "game") for f in replay.frames)
    done = raw_env.from_history(text)
    game = GameState(done.rules, deck=done.game.deal_decks[0],
                     dealer=done.game.deal_dealers[0], reshuffles=done.game.deal_reshuffles)
    wanted = {0, 1, 63, 64, 65, 5_000, 9_999, 10_000, 200, 199}
    expected = {}
    for k, (_, action) in enumerate(done.game.histories[0], start=1):
        game.apply(action)
        if k in wanted:
            expected[k] = ([[c for c in range(52) if game.hands[i] >> c & 1] for i in range(2)],
                           game.stock[::-1], game.top)
    for k in sorted(wanted - {0}, key=lambda k: -k):  # out of order: from the snapshots
        pos = api.get(f"/api/replays/{summary['id']}/frames/{k}").json()["position"]
        assert ([[c["id"] for c in h] for h in pos["hands"]], [c["id"] for c in pos["stock"]],
                pos["top"]["id"] if pos["top"] else -1) == expected[k], k


def test_a_replay_longer_than_the_limit_is_refused(monkeypatch):
    import agents.ui.web.replay as replay

    monkeypatch.setattr(replay, "MAX_REPLAY_ACTIONS", 500)
    r = client().post("/api/replays", json={"history": long_history(600)})
    assert r.status_code == 413 and "more than 500 moves" in r.json()["error"]
    assert MAX_REPLAY_ACTIONS >= 50_000


def test_game_cap_weighs_each_games_bots():
    api = client("--allow", PPO, "--max-memory-mb", "1.5")
    store = api.app.state.games
    ppo, heuristic = store.weight_of([PPO]), store.weight_of(["heuristic"])
    assert heuristic < GAME_BYTES + 10_000 and ppo > GAME_BYTES + 400_000  # 0.55 MB weights
    first = api.post("/api/games", json={"bots": [PPO]}).json()["id"]
    second = api.post("/api/games", json={"bots": [PPO]}).json()["id"]
    assert api.get(f"/api/games/{first}").status_code == 200 and len(store) == 2
    api.post("/api/games", json={"bots": [PPO]})  # 3 x 0.6 MiB > 1.5 MiB: one goes
    assert len(store) == 2 and store.weight == 2 * ppo
    r = api.get(f"/api/games/{second}")  # the least recently used
    assert r.status_code == 404 and "1.5 MiB" in r.json()["error"]
    assert api.get(f"/api/games/{first}").status_code == 200
    for _ in range(20):  # 20 heuristic games (1.3 MiB) push out both ppo ones
        api.post("/api/games", json={"bots": ["heuristic"]})
    assert len(store) == 20 and store.weight == 20 * heuristic


def test_a_ppo_policy_is_read_once_at_start_up(tmp_path):
    path = tmp_path / "policy.zip"
    shutil.copy("models/ppo_2p.zip", path)
    api = client("--bots", f"ppo:{path}")
    os.remove(path)  # moved away after start-up
    state = api.post("/api/games", json={"seed": 3}).json()
    states = play_out(api, state, np.random.default_rng(0))
    assert any(e["seat"] == 1 for e in states[-1]["log"])


class SlowBot:
    """A bot that thinks for a minute (the time-limit test's; pickled into a worker)."""

    def reset(self, seed=None):
        pass

    def act(self, observation):
        time.sleep(60)
        return 56


def test_bot_moves_run_in_worker_processes_with_a_time_limit():
    """A bot's move is made in a worker process and the page polls for it; a bot past
    the move time limit is stopped, its game ends with a message, new games play on."""
    from agents import make_for_table
    from agents.ui.web.app import create_app
    from agents.ui.web.tables import TableConfig

    rules = Rules(illegal_action="raise")
    config = TableConfig(rules=rules, bots=("heuristic",), offered=("heuristic", "slow"),
                         bot_workers=1, move_time_limit=2.0, allow_arranged=True,
                         bot_min_ms=0)
    prototypes = {"heuristic": make_for_table("heuristic", rules.to_dict(), seed=0),
                  "slow": SlowBot()}
    with TestClient(create_app(config, prototypes), base_url=BASE) as api:
        state = api.post("/api/games", json={"seed": 2}).json()
        seen: list[str] = []
        states = play_out(api, state, np.random.default_rng(0), seen)
        assert states[-1]["status"] == "match_over"
        assert sum(json.loads(t)["status"] == "bot_thinking" for t in seen) == sum(
            e["seat"] == 1 for e in states[-1]["log"])  # every bot move: started, polled
        worker = api.app.state.workers.lanes[0]
        assert worker.process and worker.generation == 0
        slow = api.post("/api/games", json={"bots": ["slow"], "deck": BOT_FIRST,
                                            "dealer": 0}).json()
        r = api.post(f"/api/games/{slow['id']}/advance", json={"version": 0})
        assert r.status_code == 200 and r.json()["status"] == "bot_thinking"
        assert api.get("/api/config").status_code == 200  # not held up by the bot
        broken = settle(api, r.json())
        assert broken["status"] == "broken" and "longer than 2 s" in broken["error"]
        assert worker.generation == 1
        again = api.post("/api/games", json={"seed": 5}).json()
        assert play_out(api, again, np.random.default_rng(1))[-1]["status"] == "match_over"


def test_a_plain_ppo_bot_plays_the_shipped_network_of_its_table_and_shows_its_policy():
    """``--bots ppo`` (no path) at 5 players: the shipped 5-player network, whose policy
    the operator's flag shows like a ``ppo:PATH`` bot's."""
    api = client("--players", "5", "--bots", "ppo", "--show-bot-policy")
    state = api.post("/api/games", json={"seed": 4}).json()
    rng = np.random.default_rng(0)
    while not any(e["seat"] != 0 for e in state["log"]):
        state = step(api, state, rng)
    entry = next(e for e in state["log"] if e["seat"] != 0)
    assert entry["policy"]["policy"] == "ppo"
    assert {m["action"] for m in entry["policy"]["moves"]} >= {entry["action"]}

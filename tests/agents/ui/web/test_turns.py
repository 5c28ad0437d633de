"""What the table answers a request that is not for now, word for word, in every state of
a game (the person's turn, a bot's turn, a bot thinking, a finished deal, a finished
match), and that such a request changes nothing."""

from __future__ import annotations

import numpy as np

from .test_api import BOT_FIRST, client, game_of, step


def refused(api, state: dict, path: str, body: dict | None = None) -> str:
    """The ``409`` answer's words to ``path`` of ``state``'s game; the game unchanged."""
    gid, version = state["id"], state["version"]
    r = api.post(f"/api/games/{gid}/{path}", json={"version": version, **(body or {})})
    assert r.status_code == 409, r.text
    assert game_of(api, gid).version == version
    return r.json()["error"]


def test_a_bots_turn_and_a_bot_thinking():
    api = client("--bots", "random", "--bot-min-ms", "600000")  # a move shows in 10 min
    state = api.post("/api/games", json={"deck": BOT_FIRST, "dealer": 0}).json()
    bot = state["position"]["names"][1]
    assert state["status"] == "bot_turn"
    assert refused(api, state, "move", {"action": 56}) == (
        f"it is not your turn: {bot} moves next")
    assert refused(api, state, "next-deal") == f"it is not your turn: {bot} moves next"
    thinking = api.post(f"/api/games/{state['id']}/advance", json={"version": 0}).json()
    assert thinking["status"] == "bot_thinking"
    for path, body in (("advance", None), ("move", {"action": 56}), ("next-deal", None)):
        assert refused(api, thinking, path, body) == f"{bot} is thinking: wait for its move"


def test_the_persons_turn_a_finished_deal_and_a_finished_match():
    api = client("--bots", "random", "--deals", "2")
    state = api.post("/api/games", json={"seed": 4}).json()
    rng = np.random.default_rng(0)
    while state["status"] != "your_turn":
        state = step(api, state, rng)
    assert refused(api, state, "advance") == "it is your turn: the bots wait for your move"
    assert refused(api, state, "next-deal") == "it is your turn: the bots wait for your move"
    while state["status"] != "deal_over":
        state = step(api, state, rng)
    for path, body in (("advance", None), ("move", {"action": 56})):
        assert refused(api, state, path, body) == (
            "the deal is over: start the next deal first")
    while state["status"] != "match_over":
        state = step(api, state, rng)
    for path, body in (("advance", None), ("move", {"action": 56})):
        assert refused(api, state, path, body) == "the game is over: start a new game"
    assert refused(api, state, "next-deal") == "the match is over: start a new game"

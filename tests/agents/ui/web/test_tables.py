"""The browser table's games below HTTP (``agents.ui.web.tables``), with a lane that
answers at once and a clock the test moves: quotas at their boundaries, which games are
evicted, each refusal's status, words and ``Retry-After``, and a bot's failures."""

from __future__ import annotations

import logging
from concurrent.futures import Future

import numpy as np
import pytest

from agents.ui.web import tables
from agents.ui.web.bots import BotError, Busy
from agents.ui.web.tables import (
    GAME_BYTES,
    GameStore,
    TableConfig,
    WebError,
    names_for,
)
from pis_env import Rules, raw_env
from pis_env.engine import action_name

G = GAME_BYTES
MIB = 2**20


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Lane:
    """A lane whose moves are answered by ``answer`` (an action, or an exception)."""

    def __init__(self):
        self.generation = 0
        self.submitted: list[tuple] = []
        self.closed: list[str] = []
        self.busy = False
        self.answer = None

    def submit(self, kind, game_id, *args):
        if self.busy:
            raise Busy("every bot lane is full: try again in a moment")
        self.submitted.append((kind, game_id, *args))
        future = Future()
        if kind == "act" and self.answer is not None:
            if isinstance(self.answer, BaseException):
                future.set_exception(self.answer)
            else:
                future.set_result(self.answer)
        elif kind != "act":
            future.set_result(None)
        return future

    def close_game(self, game_id):
        self.closed.append(game_id)


class Workers:
    def __init__(self):
        self.lane = Lane()
        self.released: list[Lane] = []

    def assign(self):
        return self.lane

    def release(self, lane):
        self.released.append(lane)


def store(clock=None, weights=None, **config) -> GameStore:
    config.setdefault("rules", Rules(num_players=2))
    config.setdefault("bots", ("random",))
    config.setdefault("offered", ("random", "heavy"))
    config.setdefault("delay_ms", 0)
    return GameStore(TableConfig(**config), Workers(), {},
                     weights if weights is not None else {"random": 0, "heavy": G},
                     clock=clock or Clock())


def refusal(call) -> WebError:
    with pytest.raises(WebError) as err:
        call()
    return err.value


def test_names_number_only_the_specs_that_repeat():
    assert names_for(["random"]) == ["You", "random"]
    assert names_for(["random", "greedy", "mc"]) == ["You", "random", "greedy", "mc"]
    assert names_for(["random", "greedy", "random"]) == ["You", "random #1", "greedy",
                                                         "random #3"]
    assert str(WebError(400, "why")) == "why" and WebError(400, "why").headers == {}


def test_each_bad_new_game_is_refused_word_for_word():
    s = store()
    err = refusal(lambda: s.create("a", ["random", "random"]))
    assert (err.status, err.message) == (
        400, "this server's table has 2 players: choose 1 bot(s), got 2")
    err = refusal(lambda: s.create("a", ["mc"]))
    assert (err.status, err.message) == (
        400, "bot 'mc' is not offered by this server; offered: random, heavy")
    for arranged in ({"seed": 3}, {"dealer": 1}, {"deck": list(range(52))}):
        err = refusal(lambda arranged=arranged: s.create("a", **arranged))
        assert (err.status, err.message) == (
            403, "this server deals every game itself: a chosen seed, deck or dealer needs "
                 "a server started with --allow-arranged")
    small = store(max_memory_mb=1.5 * G / MIB)
    err = refusal(lambda: small.create("a", ["heavy"]))
    assert (err.status, err.message) == (
        400, "a game with these bots weighs 0.1 MiB, more than this server's "
             "--max-memory-mb 0.09375")
    assert len(s) == len(small) == 0
    exact = store(max_memory_mb=2 * G / MIB)
    assert exact.create("a", ["heavy"]).weight == 2 * G  # a game may fill the budget


def test_the_servers_seed_deals_each_game_in_turn():
    s = store(seed=5, allow_arranged=True)
    first, second = s.create("a"), s.create("b")
    for game, seed in ((first, 5 * 100_003 + 1), (second, 5 * 100_003 + 2)):
        env = raw_env(num_players=2)
        env.reset(seed=seed)
        assert game.env.game.deal_decks[0] == env.game.deal_decks[0]
        assert game.arranged
    assert len(first.id) == 22 and first.id != second.id  # 16 bytes, url-safe base64


def test_a_game_keeps_its_bots_layouts_and_its_creation_time():
    clock = Clock()
    s = GameStore(TableConfig(rules=Rules(num_players=3), bots=("random", "greedy"),
                              offered=("random", "greedy")), Workers(), {},
                  {"random": 0, "greedy": 0}, bot_layouts={"greedy": 1}, clock=clock)
    game = s.create("a")
    assert game.layouts == {1: 0, 2: 1} and game.created == clock.now
    assert game.names == ["You", "random", "greedy"] and not game.arranged
    kind, gid, seats = s.workers.lane.submitted[0]
    assert (kind, gid, sorted(seats)) == ("open", game.id, [1, 2])
    assert [spec for spec, _ in seats.values()] == ["random", "greedy"]


def test_a_full_lane_refuses_a_new_game_and_gives_the_lane_back():
    s = store()
    s.workers.lane.busy = True
    err = refusal(lambda: s.create("a"))
    assert (err.status, err.message, err.headers) == (
        503, "every bot lane is full: try again in a moment", {"Retry-After": "1"})
    assert s.workers.released == [s.workers.lane] and len(s) == 0


def test_new_games_per_minute_count_the_last_sixty_seconds():
    clock = Clock()
    s = store(clock, new_games_per_minute=2)
    start = clock.now
    s.create("a")
    clock.now = start + 30
    s.create("a")
    clock.now = start + 40
    err = refusal(lambda: s.create("a"))
    assert (err.status, err.headers) == (429, {"Retry-After": "20"})
    assert err.message == ("too many new games: at most 2 a minute per browser session; "
                           "try again in 20 s")
    s.create("b")  # another session has its own quota
    clock.now = start + 59.6
    assert refusal(lambda: s.create("a")).headers == {"Retry-After": "1"}
    clock.now = start + 60  # the first game is a minute old: it no longer counts
    s.create("a")


def test_the_sessions_remembered_are_bounded_and_the_oldest_forgotten(monkeypatch):
    monkeypatch.setattr(tables, "MAX_SESSIONS", 3)
    s = store(new_games_per_minute=1, max_games_per_session=1)
    for owner in "abc":
        s.create(owner)
    assert refusal(lambda: s.create("a")).status == 429  # three are remembered
    s.create("d")  # the fourth: "a" is forgotten
    s.create("a")
    assert refusal(lambda: s.create("c")).status == 429


def test_the_least_recently_used_games_go_first_and_their_bots_are_closed():
    s = store(max_games=2)
    a, b = s.create("a"), s.create("b")
    s.get(a.id, "a")  # a is used again: b is now the oldest
    c = s.create("c")
    assert s.peek(b.id) is None and s.peek(a.id) is a and s.peek(c.id) is c
    assert s.workers.lane.closed == [b.id] and s.workers.released == [b.lane]
    assert len(s) == 2 and s.weight == 2 * G


def test_a_session_at_its_quota_gives_up_its_own_oldest_game():
    s = store(max_games=2, max_games_per_session=1)
    other = s.create("b")
    first = s.create("a")
    second = s.create("a")
    assert s.peek(first.id) is None and s.peek(other.id) is other
    assert s.peek(second.id) is second and len(s) == 2


def test_memory_evicts_as_many_games_as_the_new_one_needs():
    s = store(max_memory_mb=3.5 * G / MIB)
    games = [s.create(o) for o in "abc"]
    heavy = s.create("d", ["heavy"])
    assert [s.peek(g.id) for g in games] == [None, None, games[2]]
    assert s.weight == 3 * G and s.peek(heavy.id) is heavy
    # its own oldest game goes, and then as many others as the weight needs
    t = store(max_memory_mb=2.5 * G / MIB, max_games_per_session=1)
    mine, theirs = t.create("a"), t.create("b")
    big = t.create("a", ["heavy"])
    assert t.peek(mine.id) is None and t.peek(theirs.id) is None and t.peek(big.id) is big
    # games that fill the budget exactly leave it be
    u = store(max_memory_mb=2 * G / MIB)
    kept = u.create("a")
    u.create("b")
    assert u.peek(kept.id) is kept


def test_games_in_play_are_protected_and_the_refusal_says_for_how_long():
    clock = Clock()
    s = store(clock, max_games=2, protect_minutes=5)
    a, b = s.create("a"), s.create("b")
    a.moved_at = clock.now - 100
    b.moved_at = clock.now - 30
    err = refusal(lambda: s.create("c"))
    assert (err.status, err.headers) == (503, {"Retry-After": "200"})
    assert err.message == "the table is full of games in play: try again in 200 s"
    assert len(s) == 2 and s.workers.lane.closed == []
    a.moved_at = clock.now - 301  # past the window: a may go, b is still protected
    s.create("c")
    assert s.peek(a.id) is None and s.peek(b.id) is b


def test_an_unknown_or_anothers_game_is_the_same_404():
    s = store()
    game = s.create("a")
    long_id = "x" * 50
    want = (f"unknown game {'x' * 40!r}: it has expired (this server keeps its most recent "
            "games, up to 200 and 256 MiB), the server was restarted or it is another "
            "browser's; start a new game")
    assert refusal(lambda: s.get(long_id, "a")).message == want
    assert refusal(lambda: s.get(game.id, "b")).message == want.replace(
        repr("x" * 40), repr(game.id))
    assert s.get(game.id, "a") is game


def bot_turn(s: GameStore):
    """A game of ``s`` at the bot's turn (the person's first moves drawn at random)."""
    for _ in range(50):
        game = s.create("a")
        rng = np.random.default_rng(0)
        while game.status() == "your_turn":
            game.move(int(rng.choice(game.state()["legal"])["action"]), game.version)
        if game.status() == "bot_turn":
            return game
    raise AssertionError("no bot turn")


def test_the_persons_bad_moves_are_refused_word_for_word():
    s = store()
    game = s.create("a")
    while game.status() != "your_turn":
        game = s.create("a")
    state = game.state(None)
    assert state["log_from"] == game.version and state["log"] == []
    assert all(set(m) == {"action", "label"} for m in state["legal"])
    err = refusal(lambda: game.state(game.version + 1))
    assert (err.status, err.message) == (400, f"since must be 0..{game.version} (the game's "
                                              f"version), got {game.version + 1}")
    for bad in (True, "3", 58, -1):
        err = refusal(lambda bad=bad: game.move(bad, game.version))
        assert (err.status, err.message) == (400, f"action must be an int 0..57, got {bad!r}")
    mask = game.env.observe("player_0")["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    legal = ", ".join(f"{a} ({action_name(int(a))})" for a in np.flatnonzero(mask))
    err = refusal(lambda: game.move(illegal, game.version))
    assert err.message == (f"illegal move: {illegal} ({action_name(illegal)}) cannot be "
                           f"played now; legal moves: {legal}")
    err = refusal(lambda: game.move(int(np.flatnonzero(mask)[0]), game.version + 1))
    assert (err.status, err.message) == (
        409, f"stale request: the page showed move {game.version + 1}, but the game is at "
             f"move {game.version} (another tab or a double click?); the table has been "
             "refreshed")
    assert game.version == 0


def test_moves_are_numbered_from_one_in_the_log():
    s = store()
    game = bot_turn(s)
    s.workers.lane.answer = None
    entries = game.state()["log"]
    assert [e["n"] for e in entries] == list(range(1, len(entries) + 1))
    assert all(e["seat"] == 0 and e["text"].startswith("You ") for e in entries)


def test_a_restarted_worker_or_a_full_lane_stops_a_bot_move():
    s = store()
    game = bot_turn(s)
    s.workers.lane.busy = True
    err = refusal(lambda: game.advance(game.version))
    assert (err.status, err.message, err.headers) == (
        503, "every bot lane is full: try again in a moment", {"Retry-After": "1"})
    assert game.status() == "bot_turn"
    s.workers.lane.busy = False
    s.workers.lane.generation = 1
    lost = ("this game's bots were lost when their worker was restarted (a bot ran past "
            "the move time limit): start a new game")
    err = refusal(lambda: game.advance(game.version))
    assert (err.status, err.message) == (409, lost)
    assert game.status() == "broken" and game.state()["error"] == lost
    err = refusal(lambda: game.move(0, game.version))
    assert (err.status, err.message) == (409, lost)  # a broken game says why, every time


def test_a_bots_failure_ends_the_game_with_its_reason(caplog):
    s = store()
    game = bot_turn(s)
    s.workers.lane.answer = BotError("the bot at seat 1 ran out of time: start a new game")
    game.advance(game.version)
    assert game.state()["error"] == "the bot at seat 1 ran out of time: start a new game"
    assert caplog.records == []  # a BotError is the page's message, not a server fault
    game = bot_turn(s)
    crash = KeyError("boom")
    s.workers.lane.answer = crash
    with caplog.at_level(logging.ERROR, logger="agents.ui.web.tables"):
        game.advance(game.version)
    assert game.state()["error"] == "the bot failed (see the server's log): start a new game"
    (record,) = caplog.records
    assert record.getMessage() == f"game {game.id}: bot at seat 1 failed"
    assert record.exc_info[1] is crash


def test_an_illegal_bot_move_is_logged_and_ends_the_game(caplog):
    s = store()
    game = bot_turn(s)
    mask = game.observation(1)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    s.workers.lane.answer = illegal
    with caplog.at_level(logging.ERROR, logger="agents.ui.web.tables"):
        game.advance(game.version)
        assert game.status() == "broken"
    assert game.broken == "the bot at seat 1 played an illegal move: start a new game"
    (record,) = caplog.records
    assert record.getMessage().startswith(f"game {game.id}: bot at seat 1 played {illegal}: ")
    reason = record.getMessage().removeprefix(f"game {game.id}: bot at seat 1 played {illegal}: ")
    assert "illegal" in reason.lower() and reason != "None"  # the engine's own words


def test_a_late_answer_for_a_broken_game_changes_nothing():
    s = store()
    game = bot_turn(s)
    game.advance(game.version)  # the lane has not answered
    assert game.status() == "bot_thinking"
    game._break("stopped")
    legal = int(np.flatnonzero(game.observation(1)["action_mask"])[0])
    future = Future()
    future.set_result(legal)
    game._bot_moved(future, 1, game.observation(1))
    assert game.status() == "broken" and game.broken == "stopped" and game.pending is None


class View:
    """A policy view that records what it was asked."""

    def __init__(self):
        self.calls = []

    def decision(self, game, seat, observation=None, full_table=False):
        self.calls.append((seat, observation))
        return {"seat": seat}


def test_the_shown_policy_is_of_the_observation_the_bot_was_given():
    s = store(show_bot_policy=True)
    game = bot_turn(s)
    game.views = {1: View()}
    obs = game.observation(1)
    action = int(np.flatnonzero(obs["action_mask"])[0])
    s.workers.lane.answer = action
    game.advance(game.version)
    ((seat, shown),) = game.views[1].calls
    assert seat == 1 and shown["observation"].tolist() == obs["observation"].tolist()
    assert game.log[-1]["policy"] == {"seat": 1, "chosen": action}


def test_the_next_deal_resets_the_bots_first():
    s = store(rules=Rules(num_players=2, num_deals=2))
    game = s.create("a")
    rng = np.random.default_rng(1)
    while game.status() != "deal_over":
        if game.status() == "your_turn":
            game.move(int(rng.choice(game.state()["legal"])["action"]), game.version)
        else:
            s.workers.lane.answer = int(rng.choice(np.flatnonzero(
                game.observation(game.env.game.current)["action_mask"])))
            game.advance(game.version)
    s.workers.lane.busy = True
    err = refusal(lambda: game.next_deal(game.version))
    assert (err.status, err.message, err.headers) == (
        503, "every bot lane is full: try again in a moment", {"Retry-After": "1"})
    assert game.status() == "deal_over"
    s.workers.lane.busy = False
    game.next_deal(game.version)
    assert s.workers.lane.submitted[-1] == ("reset", game.id)
    assert game.status() in ("your_turn", "bot_turn")


def test_the_log_says_you_are_skipped_and_a_bot_is_skipped():
    """The person is "You" in the log's words ("You are skipped"), a bot its name.

    The deals are seeded: a match drawn from the CSPRNG can end with no eight that skips
    seat 0 (about one in three hundred), and the test would then fail by chance."""
    s = store(rules=Rules(num_players=2, num_deals=4), seed=0, allow_arranged=True)
    game = s.create("a")
    rng = np.random.default_rng(2)

    def an_eight_if_any(legal) -> int:
        eights = [a for a in legal if a < 52 and a % 13 == 6]
        return int(eights[0] if eights else rng.choice(legal))

    while game.status() not in ("match_over", "broken") and not all(
            any(e["action"] < 52 and e["action"] % 13 == 6 and e["seat"] == seat
                and "skipped" in e["text"] for e in game.log) for seat in (0, 1)):
        if game.status() == "deal_over":
            game.next_deal(game.version)
        elif game.status() == "your_turn":
            game.move(an_eight_if_any([m["action"] for m in game.state()["legal"]]),
                      game.version)
        else:
            s.workers.lane.answer = an_eight_if_any(np.flatnonzero(
                game.observation(game.env.game.current)["action_mask"]))
            game.advance(game.version)
    eights = {e["seat"]: e["text"] for e in game.log if e["action"] < 52
              and e["action"] % 13 == 6 and "skipped" in e["text"]}
    assert eights[1].endswith(" — You are skipped")
    assert eights[0].endswith(" — random is skipped")


def test_an_answer_for_a_seat_that_is_not_thinking_is_ignored():
    s = store()
    game = bot_turn(s)
    game.advance(game.version)  # seat 1 thinks; the lane has not answered
    future = Future()
    future.set_result(56)
    game._bot_moved(future, 0, game.observation(0))
    assert game.status() == "bot_thinking" and game.pending is None and game.thinking == 1


def test_a_protected_game_is_passed_over_for_an_older_unprotected_one():
    clock = Clock()
    s = store(clock, max_games=2, protect_minutes=5)
    a, b = s.create("a"), s.create("b")
    a.moved_at = clock.now - 10  # the least recently used, but in play
    b.moved_at = clock.now - 400
    s.create("c")
    assert s.peek(a.id) is a and s.peek(b.id) is None


def test_a_games_weight_is_refused_in_mib_to_one_decimal():
    s = store(weights={"random": 0, "heavy": 10 * G}, max_memory_mb=0.5)
    err = refusal(lambda: s.create("a", ["heavy"]))
    assert err.message == ("a game with these bots weighs 0.7 MiB, more than this server's "
                           "--max-memory-mb 0.5")  # 11 x 64 KiB

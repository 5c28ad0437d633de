"""The browser table's replays without the app: ``Replay`` and ``ReplayStore`` read field
by field and word for word (the summary, the move list, a frame, the notes, every
refusal), the frames of a match's finished deals and of a forfeit, the move limit to the
move, the least recently used eviction and the rebuilding from the last frame shown.
Each expected figure comes from the env itself or is written out by hand."""

from __future__ import annotations

import json

import pytest

import agents.ui.web.replay as replay_module
from agents.ui.human import card_text
from agents.ui.web.replay import (
    MOVES_PAGE,
    SNAPSHOT_EVERY,
    Replay,
    ReplayStore,
    frame_bound,
    move_bound,
)
from agents.ui.web.tables import WebError
from benchmarks.web_load import long_history
from pis_env import raw_env
from pis_env.rules import MAX_NUM_DEALS
from tests.conftest import finished_history


def refusal(call, *args) -> WebError:
    with pytest.raises(WebError) as caught:
        call(*args)
    return caught.value


def hands(game) -> list[list[int]]:
    return [[c for c in range(52) if game.hands[i] >> c & 1] for i in range(game.num_players)]


# Function-scoped, like every fixture here that builds the code under test: mutmut runs
# only the tests during which a function ran, and a module's fixture runs in its first.
@pytest.fixture
def match_text() -> str:
    return finished_history(2, num_deals=2)


@pytest.fixture
def match(match_text) -> Replay:
    return Replay(match_text, [])


def test_the_summary_names_the_seats_and_the_rules(match, match_text):
    rules = json.loads(match_text)["rules"]
    assert match.summary() == {"id": match.id, "frames": len(match.frames),
                               "names": ["player_0", "player_1"],
                               "rules": raw_env.from_history(match_text).game.rules.to_dict(),
                               "moves_page": MOVES_PAGE, "policy": None}
    assert match.summary()["rules"]["num_deals"] == rules["num_deals"] == 2


def test_the_move_list_has_a_line_per_frame_and_no_seat_for_a_new_deal(match, match_text):
    env = raw_env.from_history(match_text)
    first, second = env.game.histories
    assert len(match.frames) == 1 + len(first) + 1 + len(second)
    page = match.moves(0, MOVES_PAGE)
    assert page["start"] == 0 and page["frames"] == len(match.frames)
    lines = page["moves"]
    assert [m["frame"] for m in lines] == list(range(len(match.frames)))
    assert lines[0] == {"frame": 0, "seat": None, "text": "the deal starts"}
    new_deal = 1 + len(first)
    assert lines[new_deal] == {"frame": new_deal, "seat": None, "text": "deal 2 starts"}
    moved = [(m["seat"]) for k, m in enumerate(lines) if k not in (0, new_deal)]
    assert moved == [seat for seat, _ in first] + [seat for seat, _ in second]
    assert lines[1]["text"].startswith("player_0 played ")
    skips = [m["text"] for m in lines if "skipped" in m["text"]]
    assert skips and all(t.endswith(("player_1 is skipped", "player_0 is skipped"))
                         for t in skips)


def test_the_move_list_pages_are_at_least_one_and_at_most_a_page(match):
    assert [m["frame"] for m in match.moves(3, 0)["moves"]] == [3]
    assert [m["frame"] for m in match.moves(3, -5)["moves"]] == [3]
    assert len(match.moves(0, 10 ** 9)["moves"]) == min(MOVES_PAGE, len(match.frames))
    last = len(match.frames) - 1
    assert [m["frame"] for m in match.moves(last, 5)["moves"]] == [last]
    for start in (-1, len(match.frames)):
        e = refusal(match.moves, start, 5)
        assert (e.status, e.message) == (404, f"frame {start} does not exist: this replay "
                                              f"has frames 0..{last}")


def test_a_frame_says_who_moved_what_and_what_comes_next(match, match_text):
    env = raw_env.from_history(match_text)
    first = env.game.histories[0]
    out = match.frame(1, "table", False)
    assert {k: v for k, v in out.items() if k != "position"} == {
        "index": 1, "count": len(match.frames), "view": "table",
        "text": match.frames[1].text, "mover": first[0][0], "action": first[0][1],
        "next": first[1][1], "policy": None}
    start = match.frame(0, "1", False)
    assert (start["mover"], start["action"], start["next"], start["view"]) == (
        None, None, first[0][1], "1")
    assert start["position"]["seat"] == 1
    last = len(match.frames) - 1
    assert match.frame(last, "0", False)["next"] is None
    for k in (-1, len(match.frames)):
        e = refusal(match.frame, k, "table", False)
        assert (e.status, e.message) == (404, f"frame {k} does not exist: this replay has "
                                              f"frames 0..{last}")


@pytest.mark.parametrize("view", ["2", "-1", "me", ""])
def test_a_view_is_the_table_or_a_seat(match, view):
    e = refusal(match.frame, 0, view, False)
    assert (e.status, e.message) == (400, "view must be 'table' or a seat 0..1, got "
                                          f"{view!r}")


def test_the_finished_deal_of_a_match_has_its_own_frame(match, match_text):
    env = raw_env(**json.loads(match_text)["rules"])
    done = raw_env.from_history(match_text)
    env.reset(options={"deck": done.game.deal_decks[0], "dealer": done.game.deal_dealers[0]})
    first = done.game.histories[0]
    for _, action in first[:-1]:
        env.step(action)
    before_last = env.game.copy()
    before_last.apply(first[-1][1])  # the engine alone: the deal ends, nothing is dealt
    end = match.frame(len(first), "table", False)
    assert end["position"]["deal_over"] and end["position"]["deal"] == 0
    assert end["position"]["result"]["charges"] == before_last.charges
    assert [[c["id"] for c in h] for h in end["position"]["hands"]] == hands(before_last)
    seat, card = first[-1]
    assert before_last.winners[seat]  # this match's first deal ends by going out
    assert end["mover"] == seat and end["text"] == (
        f"player_{seat} played {card_text(card)} and went out!")
    nxt = match.frame(len(first) + 1, "table", False)
    assert nxt["text"] == "deal 2 starts" and nxt["position"]["deal"] == 1
    assert not nxt["position"]["deal_over"]


def forfeit_history() -> tuple[str, int, int]:
    """A two-deal match whose second move is illegal under ``illegal_action=terminate``."""
    env = raw_env(illegal_action="terminate", num_deals=2)
    env.reset(seed=1)
    env.step(env.game.legal_actions()[0])
    seat = env.game.current
    bad = next(a for a in range(57) if a not in env.game.legal_actions())
    env.step(bad)
    assert env.game.match_over and env.game.end_reason == "illegal"
    return env.export_history(), seat, bad


def test_a_forfeit_is_told_and_rebuilt_as_a_forfeit():
    text, seat, bad = forfeit_history()
    replay = Replay(text, [])
    assert [f.text for f in replay.frames][2] == (f"player_{seat} made an illegal move "
                                                  f"({bad}) and forfeits")
    result = replay.frame(2, "table", False)["position"]["result"]
    assert result["reason"] == "illegal" and result["match_over"]
    assert result["winners"][seat] is False and result["winners"][1 - seat] is True
    assert result["charges"] == raw_env.from_history(text).game.charges


def test_the_policy_notes_when_there_is_nothing_to_show(match, match_text):
    assert match.frame(1, "table", True)["policy"] == {
        "note": "the server has no ppo policy for this table size"}

    class Fits:
        spec = "ppo:fake"

        def fits(self, num_players, num_deals):
            return True

        def decision(self, game, seat, full_table=False):
            return {"seat": seat, "full_table": full_table}

    seen = Replay(match_text, [Fits()])
    assert seen.summary()["policy"] == "ppo:fake"
    done = len(raw_env.from_history(match_text).game.histories[0])
    assert seen.frame(done, "table", True)["policy"] == {
        "note": "no decision: the deal is over"}
    mover = seen.position_at(1).current
    assert seen.frame(1, str(1 - mover), True)["policy"] == {
        "note": f"player_{mover} is to move: switch to that seat or the full table to see "
                "the policy"}
    assert seen.frame(1, str(mover), True)["policy"] == {"seat": mover, "full_table": False}
    assert seen.frame(1, "table", True)["policy"] == {"seat": mover, "full_table": True}


def test_refusals_of_what_is_not_a_history(monkeypatch):
    e = refusal(Replay, "{not json", [])
    assert (e.status, e.message) == (400, "not a replayable history: history is not valid "
                                          "JSON: Expecting property name enclosed in double "
                                          "quotes: line 1 column 2 (char 1)")
    e = refusal(Replay, "[" * 100_000 + "]" * 100_000, [])
    assert (e.status, e.message) == (400, "not a replayable history: history is nested too "
                                          "deeply to be a history")
    e = refusal(Replay, "[1, 2]", [])
    assert e.status == 400 and e.message.startswith("not a replayable history: ")
    text = finished_history(1)
    monkeypatch.setattr(replay_module, "MAX_HISTORY_BYTES", len(text))
    assert len(Replay(text, []).frames) > 1  # exactly at the limit: read
    longer = text + " "
    e = refusal(Replay, longer, [])
    assert (e.status, e.message) == (413, f"history too large ({len(longer)} bytes; at "
                                          f"most {len(text)})")
    e = refusal(ReplayStore([]).load, longer)
    assert (e.status, e.message) == (413, f"history too large ({len(longer)} bytes; at "
                                          f"most {len(text)})")


def test_the_move_limit_counts_every_move():
    text = finished_history(3)
    moves = len(raw_env.from_history(text).game.histories[0])
    assert len(Replay(text, [], max_moves=moves).frames) == moves + 1
    e = refusal(Replay, text, [], moves - 1)
    assert (e.status, e.message) == (413, f"history too long: more than {moves - 1} moves")


def test_the_bounds_read_the_text_alone():
    assert move_bound("[1, 2], [3, 4]") == 3
    assert move_bound("," * (replay_module.MAX_REPLAY_ACTIONS + 5)) == \
        replay_module.MAX_REPLAY_ACTIONS
    assert frame_bound(10) == 10 + 1 + 2 * MAX_NUM_DEALS
    text = finished_history(4, num_deals=3)
    assert len(Replay(text, []).frames) <= frame_bound(move_bound(text))


def test_a_frame_after_the_last_one_shown_steps_only_the_moves_between(monkeypatch):
    replay = Replay(long_history(300), [])
    steps = []
    real = replay_module._rebuild
    monkeypatch.setattr(replay_module, "_rebuild",
                        lambda game, frame: (steps.append(frame), real(game, frame)))
    replay.position_at(SNAPSHOT_EVERY + 40)
    assert len(steps) == 40  # from the snapshot at 64
    steps.clear()
    replay.position_at(SNAPSHOT_EVERY + 41)
    assert len(steps) == 1  # from the frame just shown
    steps.clear()
    replay.position_at(SNAPSHOT_EVERY + 41)
    assert steps == []
    steps.clear()
    replay.position_at(SNAPSHOT_EVERY + 10)  # behind the last one: the snapshot again
    assert len(steps) == 10


def test_the_store_drops_the_least_recently_used_replay():
    store = ReplayStore([], max_replays=2)
    a, b = store.load(finished_history(1)), store.load(finished_history(2))
    assert store.get(a.id) is a  # a is now the most recent
    c = store.load(finished_history(3))
    assert store.get(a.id) is a and store.get(c.id) is c
    e = refusal(store.get, b.id)
    assert (e.status, e.message) == (404, f"unknown replay {b.id!r}: it has expired or the "
                                          "server was restarted; load the history again")
    e = refusal(store.get, "x" * 100)
    assert e.message.startswith(f"unknown replay {'x' * 40!r}: ")
    assert store._frames == len(a.frames) + len(c.frames)


def test_the_store_keeps_within_both_limits_and_never_drops_the_replay_kept():
    store = ReplayStore([], max_replays=1)
    a, b = store.load(finished_history(1)), store.load(finished_history(2))
    assert list(store._replays) == [b.id] and store._frames == len(b.frames)
    alone = ReplayStore([], max_replays=0)  # never below the replay just loaded
    only = alone.load(finished_history(1))
    assert list(alone._replays) == [only.id]

    store = ReplayStore([], max_replays=2)
    a, b = store.load(finished_history(1)), store.load(finished_history(2))
    assert list(store._replays) == [a.id, b.id]
    store.max_frames = len(a.frames) + len(b.frames)  # exactly full: both stay
    store._evict(keep=b.id)
    assert list(store._replays) == [a.id, b.id]
    store.max_frames -= 1
    store._evict(keep=a.id)  # the oldest is the one kept: the other goes
    assert list(store._replays) == [a.id] and store._frames == len(a.frames)


def test_a_load_makes_room_by_frames_or_is_refused():
    texts = [finished_history(k) for k in (1, 2)]
    bounds = [frame_bound(move_bound(t)) for t in texts]
    store = ReplayStore([], max_replays=10, max_frames=bounds[0])
    first = store.load(texts[0])
    assert store._reserved == 0 and store._frames == len(first.frames)
    store.max_frames = len(first.frames) + bounds[1]  # room for both, just
    second = store.load(texts[1])
    assert list(store._replays) == [first.id, second.id]
    assert store._frames == len(first.frames) + len(second.frames)
    store.max_frames = bounds[1]  # the second's reservation needs both gone
    again = store.load(texts[1])
    assert list(store._replays) == [again.id] and store._frames == len(again.frames)
    small = ReplayStore([], max_frames=bounds[0] - 1)
    e = refusal(small.load, texts[0])
    assert (e.status, e.message, e.headers) == (
        503, "the server is loading other long replays: try again in a moment",
        {"Retry-After": "2"})
    assert small._reserved == 0 and not small._replays


def test_the_store_reads_a_history_exactly_at_the_size_limit(monkeypatch):
    text = finished_history(1)
    monkeypatch.setattr(replay_module, "MAX_HISTORY_BYTES", len(text))
    assert len(ReplayStore([]).load(text).frames) > 1


def test_loads_past_the_limit_in_flight_are_refused_until_one_ends():
    store = ReplayStore([], max_loading=1)
    text = finished_history(1)
    assert store._loading.acquire(blocking=False)  # a load in flight
    e = refusal(store.load, text)
    assert (e.status, e.message, e.headers) == (
        503, "other replays are being loaded: try again in a moment", {"Retry-After": "2"})
    assert not store._replays
    store._loading.release()
    assert store.load(text).id in store._replays


def test_the_frames_reserved_by_loads_in_flight_count():
    text = finished_history(1)
    bound = frame_bound(move_bound(text))
    in_flight = 1_000
    store = ReplayStore([], max_frames=bound + in_flight - 1)
    store._reserved = in_flight  # another load holds this many frames
    e = refusal(store.load, text)
    assert e.status == 503 and store._reserved == in_flight
    store._reserved = 0
    store.max_frames = bound + in_flight
    first = store.load(text)  # room for it, with nothing in flight
    store._reserved = in_flight
    replay = store.load(text)  # the in-flight frames leave room for one: the first goes
    assert list(store._replays) == [replay.id] and first.id != replay.id
    assert store._reserved == in_flight and store._frames == len(replay.frames)


def test_a_new_deal_on_a_snapshot_frame_is_kept_as_its_snapshot():
    text = finished_history(64, draw=0.6, num_deals=2, empty_stock="reshuffle")
    first = raw_env.from_history(text).game.histories[0]
    new_deal = len(first) + 1
    assert new_deal % SNAPSHOT_EVERY == 0  # this deck: the second deal starts at frame 128
    replay = Replay(text, [])
    assert replay.frames[new_deal].text == "deal 2 starts"
    assert replay.snapshots[new_deal].deal_index == 1
    pos = replay.frame(new_deal + 1, "table", False)["position"]
    assert pos["deal"] == 1 and not pos["deal_over"]


def test_a_history_without_a_move_is_its_first_position():
    env = raw_env()
    env.reset(seed=3)
    replay = Replay(env.export_history(), [])
    assert [f.text for f in replay.frames] == ["the deal starts"]
    assert list(replay.snapshots) == [0]
    pos = replay.frame(0, "table", False)["position"]
    assert [[c["id"] for c in h] for h in pos["hands"]] == hands(env.game)
    assert len(replay.id) == 16  # secrets.token_urlsafe(12): 96 random bits


def test_the_stores_default_limits():
    store = ReplayStore([])
    assert (store.max_replays, store.max_frames) == (50, 500_000)
    assert store._loading.acquire(blocking=False) and store._loading.acquire(blocking=False)
    assert not store._loading.acquire(blocking=False)  # two loads at once

"""pis_env.events by hand: the replay cache of finished deals, and how ``PublicHistory``
rebuilds deals from windows that lost events.

``test_observation_v1.py`` checks the whole event stream against a reference on played
matches; the cases here are the ones those matches reach rarely or never (a window that
drops events twice in one deal, a gap that spans deal starts, a one-deal table whose
observation has no deal index) and the cache's identity rules, written out event by event.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pis_env.actions import DRAW, PASS
from pis_env.engine import GameState
from pis_env.events import NEW_DEAL, DealReplay, PublicHistory, ReplayCache
from pis_env.rules import Rules

RULES = Rules.from_options(num_players=2)


def _window(events, dropped=0, deal=None):
    """A decoded v1 observation's public part: only what ``observe`` reads."""
    decoded = {"events": list(events), "events_dropped": dropped}
    if deal is not None:
        decoded["deal"] = deal
    return decoded


def test_a_finished_deal_is_replayed_once_and_kept_by_its_own_log():
    cache = ReplayCache()
    first, second = [(0, DRAW)], [(1, PASS)]
    replay_first = cache.finished(first, RULES, 0)
    replay_second = cache.finished(second, RULES, 1)
    assert replay_first.events == [[0, NEW_DEAL, 0], [0, DRAW, 1]]
    assert replay_second.events == [[1, NEW_DEAL, 0], [1, PASS, 0]]
    # each log gets its own replay back, the same object, in any order of asking
    assert cache.finished(first, RULES, 0) is replay_first
    assert cache.finished(second, RULES, 1) is replay_second


def test_a_cached_replay_of_another_log_under_a_reused_id_is_not_returned():
    """``id`` is reused once a log is gone: the entry's own log must be the one asked for."""
    cache = ReplayCache()
    log, stranger = [(0, DRAW)], [(1, PASS)]
    cache._finished[id(log)] = (stranger, DealReplay(RULES, 1))
    assert cache.finished(log, RULES, 0).events == [[0, NEW_DEAL, 0], [0, DRAW, 1]]


def test_the_cache_of_finished_deals_stays_small():
    cache = ReplayCache()
    logs = [[(k % 2, DRAW)] for k in range(100)]
    for log in logs:
        cache.finished(log, RULES, 0)
        assert len(cache._finished) <= 17


def test_public_history_remembers_its_table_size():
    assert PublicHistory(5).num_players == 5


def test_a_deal_without_drops_is_summarised_from_its_events():
    history = PublicHistory(2)
    history.observe(_window([(0, "deal", None), (1, "draw", 1), (0, "play", 4)]))
    assert history.dropped == [0]
    summary = history.summary(RULES)
    assert summary["opp_drawn"] == [1]
    assert summary["opp_refused_suits"] == [[0]]  # the opening's clubs


def test_drops_in_one_deal_add_up():
    history = PublicHistory(2)
    history.observe(_window([(0, "deal", None), (0, "play", 5)]))
    history.observe(_window([(0, "play", 7), (1, "draw", 2)], dropped=3))
    history.observe(_window([(0, "draw", 1), (1, "pass", None)], dropped=2))
    assert history.dropped == [5]
    assert history.deals == [[(0, "deal", None), (0, "play", 5), (0, "play", 7),
                              (None, "dropped", 3), (1, "draw", 2), (0, "draw", 1),
                              (None, "dropped", 2), (1, "pass", None)]]
    with pytest.raises(ValueError) as error:
        history.summary(RULES)
    assert str(error.value) == ("this deal lost events to the log's size: read the "
                                "observation's summary instead")


def test_a_gap_over_a_deal_start_opens_the_deals_it_hid():
    """Deal 0 is seen; the window at deal 2 lost events over deal 1's start: deal 1 begins
    with an unknown part, deal 2 starts at its own marker."""
    history = PublicHistory(2)
    history.observe(_window([(0, "deal", None), (0, "play", 5)], deal=0))
    history.observe(_window([(0, "play", 7), (1, "deal", None), (1, "play", 3)],
                            dropped=4, deal=2))
    assert history.deals == [
        [(0, "deal", None), (0, "play", 5), (0, "play", 7), (None, "dropped", 4)],
        [(None, "dropped", None)],
        [(1, "deal", None), (1, "play", 3)],
    ]
    assert history.dropped == [4, 4, 0]
    assert history.summary(RULES, deal=2)["opp_drawn"] == [0]
    with pytest.raises(ValueError) as error:
        history.summary(RULES, deal=1)
    assert str(error.value).startswith("this deal lost events")


def test_a_one_deal_tables_drop_opens_no_deal():
    """A one-deal table's observation has no deal index: the gap stays in deal 0."""
    history = PublicHistory(2)
    history.observe(_window([(0, "deal", None), (0, "play", 5)]))
    history.observe(_window([(0, "play", 7), (1, "draw", 1)], dropped=2))
    assert len(history.deals) == 1 and history.dropped == [2]


def test_a_deal_whose_start_was_not_seen_is_not_summarised():
    history = PublicHistory(2)
    history.observe(_window([(1, "draw", 1), (0, "play", 4)]))
    with pytest.raises(ValueError) as error:
        history.summary(RULES)
    assert str(error.value) == "the deal's start was not observed"


def _deal_under_way(moves: int = 6) -> GameState:
    game = GameState(RULES, seed=3)
    for _ in range(moves):
        game.apply(game.legal_actions()[0])
    return game


def _replayed(rules, dealer, log) -> list:
    """The events of ``log`` replayed from the deal's start, independently of any cache."""
    replay = DealReplay(rules, dealer)
    for p, a in log:
        replay.step(p, a)
    return replay.events


def test_the_current_deals_replay_is_kept_and_advanced_by_the_new_actions():
    """An env step costs one ``step``: the same replay comes back, one event longer."""
    game = _deal_under_way()
    cache = ReplayCache()
    replay = cache.current(game)
    assert cache.current(game) is replay
    game.apply(game.legal_actions()[0])
    assert cache.current(game) is replay
    assert replay.events == _replayed(RULES, game.dealer, game.history)


def test_a_branch_off_the_cached_deal_gets_its_own_replay():
    game = _deal_under_way()
    while len(game.legal_actions()) < 2:
        game.apply(game.legal_actions()[0])
    cache = ReplayCache()
    cache.current(game)
    branch = game.copy()
    branch.apply(branch.legal_actions()[-1])
    assert cache.current(branch).events == _replayed(RULES, game.dealer, branch.history)
    game.apply(game.legal_actions()[0])
    assert cache.current(game).events == _replayed(RULES, game.dealer, game.history)
    assert cache.current(game).events[-1] != cache.current(branch).events[-1]


def test_a_plain_list_history_is_replayed_from_the_start():
    """A search clone may carry its actions as a plain list, with no shared log nodes."""
    game = _deal_under_way()
    clone = SimpleNamespace(history=list(game.history), rules=RULES, dealer=game.dealer)
    cache = ReplayCache()
    assert cache.current(clone).events == _replayed(RULES, game.dealer, game.history)
    assert cache.current(clone) is not cache.current(clone)

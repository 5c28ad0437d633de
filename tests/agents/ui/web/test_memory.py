"""What a game holds, for the memory cap: a bot's caches without per-game state are
built once per lane and shared by every game's bot of that spec, and a bot's measured
weight is what it holds once it has played, those caches left out."""

from __future__ import annotations

import time

import numpy as np
from fastapi.testclient import TestClient

from agents.ui.web.app import create_app
from agents.ui.web.bots import SHARED_CACHES, shareable, shared_caches, warm_weight
from agents.ui.web.tables import GAME_BYTES, TableConfig
from pis_env import Rules

from .test_api import BASE, game_of, settle

CACHE_BYTES = 4 * 2**20


class CachingBot:
    """A bot that allocates a big cache on its first move (as ``search`` does its
    batched rollout engine) and grows a little state of its own per move."""

    def __init__(self):
        self._engine = None
        self.seen: list[int] = []

    def reset(self, seed=None):
        self.seen = []

    def act(self, observation):
        if self._engine is None:
            self._engine = bytearray(CACHE_BYTES)
        self.seen.append(len(self.seen))
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_search_keeps_its_rollout_engine_in_the_shared_attribute():
    from agents import make_for_table
    from agents.search import BatchedRollouts

    bot = make_for_table("search", Rules().to_dict(), seed=0)
    assert all(hasattr(bot, name) for name in SHARED_CACHES)
    engine = BatchedRollouts(bot.rules, bot.table.params)
    assert shareable(engine)
    engine.types = object()  # the policies of one bot's opponent types: its own
    assert not shareable(engine) and not shareable(None)


def test_caches_are_shared_by_a_lanes_bots_and_left_out_of_their_weight():
    rules = Rules(illegal_action="raise")
    weight = warm_weight(CachingBot(), rules.to_dict())
    assert 0 < weight < 10_000  # the 4 MiB cache is not the game's
    config = TableConfig(rules=rules, bots=("caching",), offered=("caching",),
                         allow_arranged=True, bot_min_ms=0)
    app = create_app(config, {"caching": CachingBot()},
                     bot_weights={"caching": weight})
    api = TestClient(app, base_url=BASE)
    assert app.state.games.weight_of(["caching"]) == GAME_BYTES + weight
    lane = app.state.workers.lanes[0]
    deadline = time.monotonic() + 30
    while not shared_caches(lane._agents):  # built before the lane serves
        assert time.monotonic() < deadline
        time.sleep(0.01)
    (cache,) = shared_caches(lane._agents).values()
    bots = []
    for seed in (1, 2):
        state = api.post("/api/games", json={"seed": seed, "dealer": 0}).json()
        r = api.post(f"/api/games/{state['id']}/advance", json={"version": 0})
        assert settle(api, r.json())["version"] == 1
        spec, bot = lane._agents[(state["id"], 1)]
        assert game_of(api, state["id"]) and spec == "caching"
        bots.append(bot)
    assert bots[0]._engine is cache and bots[1]._engine is cache
    assert bots[0] is not bots[1] and bots[0].seen == bots[1].seen == [0]

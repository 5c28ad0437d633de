"""The browser table's bot lanes (``agents.ui.web.bots``) below the server: the commands
a lane runs on its bots, the worker's loop fed through a pipe in this process, the queue's
bound, how games are spread over lanes, what a game's bot weighs, and one real worker
process failing, running past its time limit and dying."""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import types

import numpy as np
import pytest

from agents.ui.web import bots
from agents.ui.web.bots import (
    WARM_DECISIONS,
    BotError,
    BotWorkers,
    Busy,
    Lane,
    perform,
    pickled_size,
    shared_caches,
    warm_caches,
    warm_weight,
)
from pis_env import Rules, raw_env
from pis_env.observation import decode_observation

RULES = Rules(illegal_action="raise").to_dict()
SEED = 11
#: Changed by the process test before its worker starts: a spawned worker imports this
#: module afresh and sees the value written here, a forked one would see the change.
FLAG = "as imported"


class Cache:
    """A stand-in for ``search``'s rollout engine that counts its deep copies."""

    copies = 0

    def __init__(self):
        self.types = None
        self.blob = bytearray(2000)

    def __deepcopy__(self, memo):
        Cache.copies += 1
        clone = memo[id(self)] = Cache()
        return clone


class CachingBot:
    """Builds its cache on its first move, remembers the legal moves it was shown (a state
    whose size depends on the deal) and answers ``{"probe": what}`` with a fact about
    itself (for the worker loop, where the bots are out of reach)."""

    def __init__(self, own_cache: bool = False):
        self._engine = None
        self.own_cache = own_cache
        self.seen: list[list[int]] = []
        self.seed = "unset"
        self.resets = 0
        self.given = False

    def reset(self, seed=None):
        self.seed, self.resets = seed, self.resets + 1
        self.given = getattr(self, "_engine", None) is not None

    def act(self, observation):
        if self._engine is None:
            self._engine = Cache()
            if self.own_cache:
                self._engine.types = ["this bot's opponent types"]
        if "probe" in observation:
            return {"engine": id(self._engine), "given": int(self.given),
                    "seed": self.seed, "resets": self.resets}[observation["probe"]]
        legal = np.flatnonzero(observation["action_mask"])
        self.seen.append(legal.tolist())
        return int(legal[-1])


class Recorder:
    """A bot without shared caches that keeps every observation it is shown."""

    def __init__(self):
        self.observations: list[np.ndarray] = []
        self.seed = "unset"

    def reset(self, seed=None):
        self.seed = seed

    def act(self, observation):
        self.observations.append(np.array(observation["observation"]))
        return int(np.flatnonzero(observation["action_mask"])[-1])


def a_position():
    env = raw_env(**RULES)
    env.reset(seed=SEED)
    return env.observe(env.possible_agents[env.game.current])


def cards(bits: int) -> list[int]:
    return [c for c in range(bits.bit_length()) if bits >> c & 1]


# ----------------------------------------------------------------- warming and weighing
def test_a_bot_is_warmed_on_a_copy_at_seat_1_for_a_fixed_number_of_decisions():
    prototype = Recorder()
    bot = bots._played(prototype, RULES, seed=SEED)
    assert prototype.observations == [] and prototype.seed == "unset"  # a deep copy played
    assert bot.seed == SEED and len(bot.observations) == WARM_DECISIONS
    env = raw_env(**RULES)
    env.reset(seed=SEED)
    first = decode_observation(bot.observations[0], 2, version=0)
    assert first["hand"] == cards(int(env.game.hands[1]))  # seat 1's own hand, layout v0
    v1 = Recorder()
    v1.layout_version = 1  # a v1 network's bot is shown the v1 layout
    shown = bots._played(v1, RULES, seed=SEED).observations
    assert len(shown) == WARM_DECISIONS and shown[0].shape != bot.observations[0].shape
    assert decode_observation(shown[0], 2, version=1)["hand"] == first["hand"]
    by_default = bots._played(Recorder(), RULES).observations  # seed 0
    seed_0 = bots._played(Recorder(), RULES, seed=0).observations
    assert all(np.array_equal(a, b) for a, b in zip(by_default, seed_0, strict=True))
    again = bots._played(Recorder(), RULES, seed=SEED).observations
    other = bots._played(Recorder(), RULES, seed=SEED + 1).observations
    assert all(np.array_equal(a, b) for a, b in zip(again, bot.observations, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(other, bot.observations))


def test_pickled_size_counts_every_byte_and_a_module_as_its_name():
    state = {"blob": bytearray(300_000), "array": np.arange(100), "name": "x"}  # many writes
    assert pickled_size(state) == len(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    assert pickled_size(types.SimpleNamespace(numpy=np, n=1)) < 200  # not numpy's state


def test_a_bots_weight_is_its_pickle_after_play_without_its_shared_cache():
    weights = {}
    for prototype in (CachingBot(), Recorder()):
        played = bots._played(prototype, RULES, seed=SEED)
        if isinstance(prototype, CachingBot):
            assert isinstance(played._engine, Cache)
            played._engine = None
        expected = len(pickle.dumps(played, protocol=pickle.HIGHEST_PROTOCOL))
        assert warm_weight(prototype, RULES, seed=SEED) == expected
        weights[type(prototype)] = expected
    assert warm_weight(CachingBot(), RULES, seed=SEED) != warm_weight(CachingBot(), RULES)
    assert warm_weight(CachingBot(), RULES) == warm_weight(CachingBot(), RULES, seed=0)
    # a cache that holds its own bot's state is that game's, and weighed with it
    assert warm_weight(CachingBot(own_cache=True), RULES, seed=SEED) > weights[CachingBot] + 2000


class LockingBot(CachingBot):
    """Takes a lock on its first move: it cannot be pickled once it has played."""

    def act(self, observation):
        self.lock = threading.Lock()
        return super().act(observation)


def test_a_bot_that_cannot_be_pickled_after_play_is_weighed_as_its_prototype(caplog):
    prototype = LockingBot()
    with caplog.at_level(logging.WARNING, logger=bots.__name__):
        weight = warm_weight(prototype, RULES)
    assert weight == len(pickle.dumps(prototype, protocol=pickle.HIGHEST_PROTOCOL))
    (message,) = [r.getMessage() for r in caplog.records if r.name == bots.__name__]
    assert message.startswith("bot LockingBot cannot be weighed after play (")
    assert message.endswith("): weighing its prototype") and "lock" in message


def test_a_lane_builds_the_shared_caches_of_the_prototypes_that_have_them():
    prototypes = {"plain": Recorder(), "caching": CachingBot(),
                  "own": CachingBot(own_cache=True)}
    shared = warm_caches(prototypes, RULES)
    assert list(shared) == [("caching", "_engine")]
    assert isinstance(shared[("caching", "_engine")], Cache)
    assert prototypes["caching"]._engine is None  # built on a copy
    assert warm_caches(prototypes, None) == {}


# ---------------------------------------------------------------------- lane commands
def test_commands_open_copies_that_share_the_lanes_cache_reset_and_close_them():
    observation = a_position()
    prototype = CachingBot()
    prototypes = {"caching": prototype}
    agents: dict = {}
    perform(agents, prototypes, "open", ("g1", {1: ("caching", 5)}))
    first = agents[("g1", 1)][1]
    assert first is not prototype and first.seed == 5 and shared_caches(agents) == {}
    legal = np.flatnonzero(observation["action_mask"])
    assert perform(agents, prototypes, "act", ("g1", 1, observation)) == legal[-1]
    cache = first._engine
    assert shared_caches(agents) == {("caching", "_engine"): cache}

    # a prototype holding a cache of its own: its copies get the lane's, never a copy
    prototype._engine = Cache()
    prototype.helper = types.SimpleNamespace(engine=prototype._engine)
    Cache.copies = 0
    perform(agents, prototypes, "open", ("g2", {0: ("caching", 6), 1: ("caching", 7)}))
    second, third = agents[("g2", 0)][1], agents[("g2", 1)][1]
    assert second is not third and (second.seed, third.seed) == (6, 7)
    assert second._engine is cache and third._engine is cache
    assert second.helper.engine is cache and Cache.copies == 0
    # ... and on a lane without one yet, a copy of its own
    fresh: dict = {}
    perform(fresh, prototypes, "open", ("g", {0: ("caching", 1)}))
    assert Cache.copies == 1 and fresh[("g", 0)][1]._engine is not prototype._engine

    perform(agents, prototypes, "reset", ("g2",))
    assert (first.resets, second.resets, third.resets) == (1, 2, 2)
    assert second.seed is None and first.seed == 5
    perform(agents, prototypes, "close", ("g2",))
    assert set(agents) == {("g1", 1), bots._SHARED}
    with pytest.raises(ValueError, match=r"^unknown bot command 'fly'$"):
        perform(agents, prototypes, "fly", ())
    assert shared_caches({}) == {}


class LazyBot(CachingBot):
    """Has no cache attribute at all until its first move."""

    def __init__(self):
        super().__init__()
        del self._engine

    def act(self, observation):
        if not hasattr(self, "_engine"):
            self._engine = None
        return super().act(observation)


def test_a_bots_own_cache_is_not_shared_and_any_object_without_one_is():
    agents: dict = {}
    prototypes = {"own": CachingBot(own_cache=True), "lazy": LazyBot()}
    perform(agents, prototypes, "open", ("g", {0: ("own", 1), 1: ("lazy", 2)}))
    perform(agents, prototypes, "act", ("g", 0, a_position()))
    assert shared_caches(agents) == {}
    perform(agents, prototypes, "act", ("g", 1, a_position()))
    lazy_cache = agents[("g", 1)][1]._engine
    assert shared_caches(agents) == {("lazy", "_engine"): lazy_cache}
    perform(agents, prototypes, "open", ("h", {1: ("lazy", 3)}))  # the prototype has none
    assert not hasattr(agents[("h", 1)][1], "_engine")
    assert bots.shareable(bytearray(8)) and not bots.shareable(None)


def test_a_thread_lane_builds_its_shared_caches_before_it_serves():
    lane = Lane(0, {"caching": CachingBot()}, process=False, time_limit=1.0, max_queued=1,
                rules=RULES)
    try:
        lane.submit("open", "g", {0: ("caching", 1)}).result(5)
        assert lane.submit("act", "g", 0, {"probe": "given"}).result(5) == 1
        assert list(shared_caches(lane._agents)) == [("caching", "_engine")]
    finally:
        lane.close()


def test_the_worker_loop_answers_each_command_in_order_and_stops_at_none():
    parent, child = multiprocessing.Pipe()
    commands = [("open", ("g", {1: ("caching", 5)})), ("act", ("g", 1, {"probe": "given"})),
                ("act", ("g", 1, {"probe": "engine"})), ("open", ("h", {0: ("caching", 6)})),
                ("act", ("h", 0, {"probe": "engine"})), ("fly", ()),
                ("act", ("h", 0, {"probe": "seed"})), None, ("act", ("h", 0, {"probe": "seed"}))]
    for command in commands:
        parent.send(command)
    before = signal.getsignal(signal.SIGINT)
    try:
        bots._serve(child, {"caching": CachingBot()}, RULES)
        ignored = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, before)
    assert ignored is signal.SIG_IGN  # Ctrl-C is the server's to handle
    answers = []
    while parent.poll(0.1):
        answers.append(parent.recv())
    assert answers[:3] == [(True, "ready"), (True, None), (True, 1)]  # cache built at start
    assert answers[4:] == [(True, None), (True, answers[3][1]),
                           (False, "ValueError: unknown bot command 'fly'"), (True, 6)]
    assert answers[3][0] is True  # the same cache for both games' bots, nothing after None


# ---------------------------------------------------------------------- queue and lanes
class GateBot:
    """Waits at ``gate`` on each move, having set ``started``."""

    def __init__(self, gate: threading.Event, started: threading.Event):
        self.gate, self.started = gate, started

    def __deepcopy__(self, memo):  # a game's copy waits at the same gate
        return self

    def reset(self, seed=None):
        pass

    def act(self, observation):
        self.started.set()
        self.gate.wait(10)
        return 56


def test_a_lane_bounds_its_queue_skips_cancelled_commands_and_always_takes_closes():
    gate, started = threading.Event(), threading.Event()
    lane = Lane(3, {"gate": GateBot(gate, started)}, process=False, time_limit=1.0,
                max_queued=2)
    busy = r"^the bots are busy \(too many moves queued\): try again in a moment$"
    try:
        assert lane._thread.daemon and lane._thread.name == "pis-bots-3" and lane.games == 0
        lane.submit("open", "g", {0: ("gate", 1)}).result(5)
        for _ in range(2):  # the second round: every slot is free again, closes not counted
            gate.clear()
            started.clear()
            running = lane.submit("act", "g", 0, {})
            assert started.wait(5)
            queued = [lane.submit("act", "g", 0, {}) for _ in range(2)]
            with pytest.raises(Busy, match=busy):
                lane.submit("act", "g", 0, {})
            closing = lane.close_game("another game")  # never refused
            queued[0].cancel()
            gate.set()
            assert running.result(5) == 56 and queued[1].result(5) == 56
            assert closing.result(5) is None and queued[0].cancelled()
    finally:
        gate.set()
        lane.close()
    assert not lane._thread.is_alive()


def test_closing_a_lane_waits_a_bounded_time_for_a_stuck_move(monkeypatch):
    monkeypatch.setattr(bots, "CLOSE_WAIT", 0.05)
    gate, started = threading.Event(), threading.Event()
    lane = Lane(0, {"gate": GateBot(gate, started)}, process=False, time_limit=1.0,
                max_queued=2)
    lane.submit("open", "g", {0: ("gate", 1)}).result(5)
    stuck = lane.submit("act", "g", 0, {})
    assert started.wait(5)
    lane.close()  # returns although the move goes on
    assert lane._thread.is_alive() and not stuck.done()
    gate.set()
    assert stuck.result(5) == 56
    lane._thread.join(5)
    assert not lane._thread.is_alive()


def test_bot_workers_check_their_sizes_and_give_a_new_game_the_least_busy_lane():
    words = r"^bot workers: processes >= 0, time_limit > 0, max_queued >= 1$"
    for wrong in ({"processes": -1}, {"time_limit": 0}, {"max_queued": 0}):
        with pytest.raises(ValueError, match=words):
            BotWorkers({}, **({"processes": 0, "time_limit": 1.0} | wrong))
    defaults = BotWorkers({}, processes=0, time_limit=1.0)
    defaults.close()
    assert defaults.lanes[0].max_queued == 256
    prototypes = {"plain": Recorder()}
    workers = BotWorkers(prototypes, processes=0, time_limit=0.5, max_queued=1, rules=RULES)
    try:
        (lane,) = workers.lanes
        assert lane.process is False and lane.prototypes is prototypes and lane.index == 0
        assert (lane.time_limit, lane.max_queued, lane.rules) == (0.5, 1, RULES)
        assert workers.time_limit == 0.5
        workers.lanes += [Lane(i, {}, False, 1.0, 1) for i in (1, 2)]
        picked = [workers.assign() for _ in range(3)]
        assert picked == workers.lanes and [ln.games for ln in workers.lanes] == [1, 1, 1]
        workers.release(picked[1])
        assert workers.lanes[1].games == 0 and workers.assign() is picked[1]
        assert workers.assign() is picked[0]
        assert [ln.games for ln in workers.lanes] == [2, 1, 1]
    finally:
        workers.close()


# ----------------------------------------------------------------- one worker process
class ProcessBot:
    """Does what the observation says, in the worker process."""

    def reset(self, seed=None):
        pass

    def act(self, observation):
        what = observation["do"]
        if what == "flag":
            return int(FLAG == "as imported")
        if what == "pid":
            return os.getpid()
        if what == "fail":
            raise RuntimeError("boom")
        if what == "sleep":
            time.sleep(30)
        os._exit(3)  # "die"


def test_a_worker_that_cannot_start_in_time_is_logged_and_refuses_moves(monkeypatch, caplog):
    monkeypatch.setattr(bots, "START_LIMIT", 0.001)
    words = "the bot worker did not start within 0.001 s"
    with caplog.at_level(logging.ERROR, logger=bots.__name__):
        lane = Lane(2, {"bot": ProcessBot()}, process=True, time_limit=1.0, max_queued=2)
        try:
            with pytest.raises(BotError, match=f"^{words}$"):
                lane.submit("open", "g", {0: ("bot", 1)}).result(30)
        finally:
            lane.close()
    logged = [r.getMessage() for r in caplog.records if r.name == bots.__name__]
    assert logged == [f"bot lane 2: the worker did not start: {words}"]


def test_a_worker_process_reports_failures_and_is_replaced_past_its_limit_or_death(
        monkeypatch, caplog):
    monkeypatch.setattr(sys.modules[__name__], "FLAG", "changed by the server")
    workers = BotWorkers({"bot": ProcessBot()}, processes=1, time_limit=1.0, max_queued=8)
    (lane,) = workers.lanes
    assert lane.process is True

    def act(what):
        return lane.submit("act", "g", 0, {"do": what}).result(60)

    try:
        lane.submit("open", "g", {0: ("bot", 1)}).result(60)
        worker = lane._worker
        assert worker.daemon and worker.name == "pis-bots-0"
        assert act("flag") == 1  # a fresh interpreter, not a fork of the server
        assert act("pid") == worker.pid != os.getpid()
        with pytest.raises(BotError, match=r"^the bot failed: RuntimeError: boom$"):
            act("fail")
        assert lane.generation == 0 and lane._worker is worker
        joins = watch_joins(worker)
        with caplog.at_level(logging.WARNING, logger=bots.__name__):
            with pytest.raises(BotError, match=r"^the bot took longer than 1 s for its move "
                                               r"and was stopped: start a new game$"):
                act("sleep")
            assert lane.generation == 1 and worker.exitcode == -signal.SIGKILL
            assert joins == [5]  # killed at once (not asked to stop), then reaped
            with pytest.raises(BotError, match=r"^the bot failed: KeyError: \('g', 0\)$"):
                act("pid")  # a new worker: the game's bots went with the old one
            lane.submit("open", "g", {0: ("bot", 1)}).result(60)
            with pytest.raises(BotError, match=r"^the bot's worker process died: start a "
                                               r"new game$"):
                act("die")
        assert lane.generation == 2
        lane.submit("open", "g", {0: ("bot", 1)}).result(60)
        last = lane._worker
        joins = watch_joins(last)
        logged = [r.getMessage() for r in caplog.records if r.name == bots.__name__]
        assert logged == [
            "bot lane 0: a bot move took longer than the limit of 1 s; restarting its "
            "worker (its games end)",
            "bot lane 0: the bot worker died; restarting its worker (its games end)"]
    finally:
        workers.close()
    assert lane._worker is None
    assert last.exitcode == 0 and joins == [5]  # closed: asked to stop, and it did


def watch_joins(worker) -> list:
    """The timeouts of every ``join`` on ``worker`` from now on."""
    joins: list = []
    join = worker.join

    def watched(timeout=None):
        joins.append(timeout)
        return join(timeout)

    worker.join = watched
    return joins

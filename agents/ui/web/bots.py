"""Where the table's bots think: a few lanes, each running one bot move at a time, off
the path of every HTTP request.

WHY: a search or ``mc`` move takes tens to hundreds of milliseconds of pure-Python CPU.
Run inside a request handler (or in a thread of the server's process, which shares the
GIL) it delays every other client's requests. So each lane owns a *worker process*
(``multiprocessing``, spawn start method) that holds the bots of the games assigned to
it; the server only sends an observation and reads back an action, and the page polls
until the move is in. A lane runs its moves in order, so a game's bot keeps its state
(belief trackers) from move to move, and the work queued per lane is bounded.

Each move has a time limit: a worker that runs past it is killed and started again; the
bots it held are lost, so their games end with a message (``LostBots``) instead of going
on with bots that forgot the deal. ``processes=0`` runs one lane in a thread of the
server's process instead (tests, debugging): same protocol, no time limit enforced.

Bots are built from *prototypes*: the agents ``pis-serve`` built at start-up to check
every spec (files read then, once). A game's bot is a copy of its prototype, reseeded,
so a policy file moved or changed after start-up changes nothing.

Memory: a bot's caches that hold no state of its game (``SHARED_CACHES``: ``search``'s
batched rollout engine, several MiB of preallocated games) are shared by every bot of
the same spec in one worker, built once there, so a game costs only its bots' own state;
``warm_weight`` measures that state after a bot has played, for the memory cap. Closing
a game's bots is never refused, even when a lane is full, so an evicted game's bots are
always freed.
"""

from __future__ import annotations

import copy
import logging
import multiprocessing
import pickle
import queue
import signal
import threading
import types
from concurrent.futures import Future
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: Seconds a worker may take to start and build its prototypes.
START_LIMIT = 120.0
#: Attributes of a bot that are caches without per-game state, shared by every bot of
#: one spec in a worker (built lazily by the first bot that needs one).
SHARED_CACHES = ("_engine",)
#: Attributes of such a cache that, when set, tie it to its own bot (``search``'s rollouts
#: with ``rollout_policy="types"`` play that bot's particle filter's opponent types): such
#: a cache is not shared.
OWN_STATE = ("types",)
#: Where a lane keeps those shared caches, in its ``agents`` dict.
_SHARED = ("", "shared caches")
#: Decisions a bot plays before ``warm_weight`` weighs it.
WARM_DECISIONS = 30
#: Seconds ``Lane.close`` waits for the command its thread is running (a thread lane's
#: bot has no time limit): past it the server stops without it.
CLOSE_WAIT = 10.0


class BotError(RuntimeError):
    """A bot move that did not come back: ``message`` is for the page."""


class LostBots(BotError):
    """The worker holding a game's bots was restarted: the game cannot go on."""


class Busy(BotError):
    """More moves are queued than the lanes accept: try again shortly."""


def shareable(cache) -> bool:
    """Whether a bot's cache may serve other bots (it holds nothing of its own bot)."""
    return cache is not None and all(getattr(cache, name, None) is None for name in OWN_STATE)


def _without_shared(agent):
    """A shallow view of ``agent`` with its shared caches left out (for weighing it)."""
    clone = copy.copy(agent)
    for name in SHARED_CACHES:
        if shareable(getattr(clone, name, None)):
            setattr(clone, name, None)
    return clone


def _played(agent, rules: dict, seed: int = 0):
    """A copy of ``agent`` after ``WARM_DECISIONS`` decisions at seat 1 of a deal (random
    legal moves at the other seats), shown the observation of its own layout as at the
    table."""
    from agents.tournament.worker import seat_observation
    from pis_env import raw_env

    layout = getattr(agent, "layout_version", 0)
    encoders: dict = {}
    bot = copy.deepcopy(agent)
    bot.reset(seed=seed)
    env = raw_env(**rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    played = 0
    while not env.game.deal_over and played < WARM_DECISIONS:
        seat = env.game.current
        if seat == 1:
            action = int(bot.act(seat_observation(env, seat, layout, encoders)))
            played += 1
        else:
            mask = env.observe(env.possible_agents[seat])["action_mask"]
            action = int(rng.choice(np.flatnonzero(mask)))
        env.step(action)
    return bot


class _Sink:
    """A file that only counts what is written to it."""

    def __init__(self):
        self.size = 0

    def write(self, data) -> int:
        size = memoryview(data).nbytes
        self.size += size
        return size


class _Weigher(pickle.Pickler):
    """Pickles to count bytes: a module an object refers to is code, not its state."""

    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return str, (obj.__name__,)
        return NotImplemented


def pickled_size(obj) -> int:
    """The size of ``obj`` pickled (its arrays and tensors included), modules it refers
    to counted as their names."""
    sink = _Sink()
    _Weigher(sink, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return sink.size


def warm_weight(agent, rules: dict, seed: int = 0) -> int:
    """What one game's copy of ``agent`` holds once it has played: its pickled size after
    ``WARM_DECISIONS`` decisions of a deal, its shared caches left out (they are counted
    once per worker, not per game). A bot that cannot be pickled is weighed as its
    prototype, with a warning in the log."""
    bot = _played(agent, rules, seed)
    try:
        return pickled_size(_without_shared(bot))
    except Exception as e:  # pickle raises several types for what it cannot copy
        log.warning("bot %s cannot be weighed after play (%s): weighing its prototype",
                    type(agent).__name__, e)
        return pickled_size(agent)


def warm_caches(prototypes: dict[str, Any], rules: dict | None) -> dict:
    """The shared caches of a lane, built before it serves: every prototype that has a
    ``SHARED_CACHES`` attribute plays a few decisions (compiling what it compiles and
    allocating its caches then, not during a game); ``{(spec, attribute): cache}``."""
    shared: dict = {}
    if rules is None:
        return shared
    for spec, prototype in prototypes.items():
        if not any(hasattr(prototype, name) for name in SHARED_CACHES):
            continue
        bot = _played(prototype, rules)
        for name in SHARED_CACHES:
            if shareable(getattr(bot, name, None)):
                shared[(spec, name)] = getattr(bot, name)
    return shared


def perform(agents: dict, prototypes: dict[str, Any], op: str, args: tuple):
    """One command on the bots of one lane (in the worker, or in the thread lane):
    ``open`` (game, {seat: (spec, seed)}), ``act`` (game, seat, observation) -> action,
    ``reset`` (game), ``close`` (game). Keys of ``agents``: ``(game, seat)`` -> the
    bot, ``_SHARED`` -> ``{(spec, attribute): cache}``."""
    shared = agents.setdefault(_SHARED, {})
    if op == "act":
        game, seat, observation = args
        spec, agent = agents[(game, seat)]
        action = int(agent.act(observation))
        for name in SHARED_CACHES:
            cache = getattr(agent, name, None)
            if shareable(cache):
                shared.setdefault((spec, name), cache)
        return action
    if op == "open":
        game, seats = args
        for seat, (spec, seed) in seats.items():
            prototype = prototypes[spec]
            memo = {id(getattr(prototype, name)): shared[(spec, name)]
                    for name in SHARED_CACHES if (spec, name) in shared
                    and getattr(prototype, name, None) is not None}
            agent = copy.deepcopy(prototype, memo)
            for name in SHARED_CACHES:
                if (spec, name) in shared and hasattr(agent, name):
                    setattr(agent, name, shared[(spec, name)])
            agent.reset(seed=seed)
            agents[(game, seat)] = (spec, agent)
        return None
    if op == "reset":
        (game,) = args
        for key, value in agents.items():
            if key[0] == game:
                value[1].reset()
        return None
    if op == "close":
        (game,) = args
        for key in [k for k in agents if k[0] == game]:
            del agents[key]
        return None
    raise ValueError(f"unknown bot command {op!r}")


def shared_caches(agents: dict) -> dict:
    """The caches shared by a lane's bots: ``{(spec, attribute): cache}``."""
    return agents.get(_SHARED, {})


def _serve(conn, prototypes: dict[str, Any], rules: dict | None = None) -> None:
    """A worker process: its shared caches built (``warm_caches``), then commands in,
    ``(ok, value)`` out, until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    agents: dict = {_SHARED: warm_caches(prototypes, rules)}
    conn.send((True, "ready"))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        op, args = message
        try:
            conn.send((True, perform(agents, prototypes, op, args)))
        except Exception as e:  # the server logs it and ends that game with a message
            conn.send((False, f"{type(e).__name__}: {e}"))


class Lane:
    """One queue of bot commands, run in order by a thread; with ``process=True`` the
    thread forwards each to a worker process and waits at most ``time_limit`` s. At most
    ``max_queued`` commands wait (``Busy`` past it), closes not counted: those are always
    taken."""

    def __init__(self, index: int, prototypes: dict[str, Any], process: bool,
                 time_limit: float, max_queued: int, rules: dict | None = None):
        self.index = index
        self.prototypes = prototypes
        self.rules = rules
        self.process = process
        self.time_limit = time_limit
        self.generation = 0  # bumped when the worker (and the bots it held) is replaced
        self.games = 0
        self.max_queued = max_queued
        self._tasks: queue.Queue = queue.Queue()
        self._queued = 0  # commands waiting, closes not counted
        self._count_lock = threading.Lock()
        self._agents: dict = {}
        self._worker = self._conn = None
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"pis-bots-{index}")
        self._thread.start()

    def submit(self, op: str, *args) -> Future:
        """Queue a command; ``Busy`` when ``max_queued`` are already waiting."""
        with self._count_lock:
            if self._queued >= self.max_queued:
                raise Busy("the bots are busy (too many moves queued): try again in a "
                           "moment")
            self._queued += 1
        future: Future = Future()
        self._tasks.put((future, op, args, True))
        return future

    def close_game(self, game: str) -> Future:
        """Free a game's bots: never refused, whatever is queued."""
        future: Future = Future()
        self._tasks.put((future, "close", (game,), False))
        return future

    def close(self) -> None:
        self._tasks.put(None)
        self._thread.join(timeout=CLOSE_WAIT)
        self._stop_worker()

    # ------------------------------------------------------------------ the lane's thread
    def _run(self) -> None:
        if self.process:  # at start-up, so that the first game does not wait for it
            try:
                self._start_worker()
            except Exception as e:  # the first move starts it again, or says why not
                log.error("bot lane %d: the worker did not start: %s", self.index, e)
        else:
            self._agents[_SHARED] = warm_caches(self.prototypes, self.rules)
        while True:
            item = self._tasks.get()
            if item is None:
                return
            future, op, args, counted = item
            if counted:
                with self._count_lock:
                    self._queued -= 1
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = self._call(op, args)
            except BaseException as e:
                future.set_exception(e)
            else:
                future.set_result(result)

    def _call(self, op: str, args: tuple):
        if not self.process:
            return perform(self._agents, self.prototypes, op, args)
        if self._worker is None or not self._worker.is_alive():
            self._start_worker()
        self._conn.send((op, args))
        if not self._conn.poll(self.time_limit):
            self._restart(f"a bot move took longer than the limit of {self.time_limit:g} s")
            raise BotError(f"the bot took longer than {self.time_limit:g} s for its move "
                           "and was stopped: start a new game")
        try:
            ok, value = self._conn.recv()
        except (EOFError, OSError):
            self._restart("the bot worker died")
            raise BotError("the bot's worker process died: start a new game") from None
        if not ok:
            raise BotError(f"the bot failed: {value}")
        return value

    def _start_worker(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        worker = ctx.Process(target=_serve, args=(child, self.prototypes, self.rules),
                             daemon=True,
                             name=f"pis-bots-{self.index}")
        worker.start()
        child.close()
        if not parent.poll(START_LIMIT):
            worker.kill()
            raise BotError(f"the bot worker did not start within {START_LIMIT:g} s")
        parent.recv()
        self._worker, self._conn = worker, parent

    def _restart(self, why: str) -> None:
        log.warning("bot lane %d: %s; restarting its worker (its games end)", self.index, why)
        self._stop_worker(kill=True)
        self.generation += 1

    def _stop_worker(self, kill: bool = False) -> None:
        worker, conn = self._worker, self._conn
        self._worker = self._conn = None
        if worker is None:
            return
        if not kill:
            try:
                conn.send(None)
            except (OSError, BrokenPipeError):
                pass
            worker.join(timeout=5)
        if worker.is_alive():
            worker.kill()
            worker.join(timeout=5)
        conn.close()


class BotWorkers:
    """The lanes of one server; a game stays on the lane it was opened on. ``rules``
    (the table's, as a dict): each lane builds its shared caches for them before it
    serves (``warm_caches``); without them the first bot that needs one builds it."""

    def __init__(self, prototypes: dict[str, Any], processes: int, time_limit: float,
                 max_queued: int = 256, rules: dict | None = None):
        if processes < 0 or time_limit <= 0 or max_queued < 1:
            raise ValueError("bot workers: processes >= 0, time_limit > 0, max_queued >= 1")
        count = max(processes, 1)
        self.time_limit = time_limit
        self.lanes = [Lane(i, prototypes, processes > 0, time_limit, max_queued, rules)
                      for i in range(count)]
        self._lock = threading.Lock()

    def assign(self) -> Lane:
        """The lane with the fewest games, for a new game."""
        with self._lock:
            lane = min(self.lanes, key=lambda ln: ln.games)
            lane.games += 1
            return lane

    def release(self, lane: Lane) -> None:
        with self._lock:
            lane.games -= 1

    def close(self) -> None:
        for lane in self.lanes:
            lane.close()

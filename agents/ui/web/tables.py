"""Games at the browser table: one ``GameSession`` per game, kept in a ``GameStore``.

The person sits at seat 0 (``player_0``); bots fill the other seats. A session owns its
``raw_env`` and advances it one decision per request: the person's move (checked against
the env's mask), or one bot move. A bot move is *started* by a request and made in a bot
lane (``bots``), off the request path; until it is in, the game's status is
``bot_thinking`` and the page polls. When a deal ends the session pauses on the finished
position (charges, winner, every hand) until the page asks for the next deal.

Every request that changes a game names the version (the number of moves) it has seen;
a request made from an older view is refused with ``409`` and changes nothing, so a
double click or a second tab cannot play a move twice. Bad requests raise ``WebError``
with the HTTP status and a message for the page.

Each bot is shown the observation of the layout it was built for (``layout_version``:
a v1 network the ``pis_yedili_v1`` observation, a v0 network and the rule-based bots the
v0 one), encoded for its seat from the game as the tournament seats mixed tables
(``agents.tournament.worker.seat_observation``), so networks of both layouts can sit at
one table.

What a game's state holds is what seat 0 may see: no seed, no deck, no bot's hand, and a
bot's policy (its probabilities over its legal moves, which name cards in its hand) only
when the operator chose to show it (``TableConfig.show_bot_policy``). The exported
history (every deck) is handed out once the match is over.
"""

from __future__ import annotations

import logging
import pickle
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from agents.tournament.worker import seat_observation
from agents.ui.play import describe
from agents.ui.web.bots import BotError, BotWorkers, Busy, Lane
from agents.ui.web.policy import PolicyView
from agents.ui.web.views import move_label, position
from pis_env import Rules, raw_env
from pis_env.engine import NUM_ACTIONS, GameState, action_name

log = logging.getLogger(__name__)

#: The seat of the person at the table.
YOU = 0
#: What a game weighs besides its bots: the env, its move log and its views (a generous
#: round figure: a 1000-turn match's log is about 150 KiB, a one-deal game's 10 KiB).
GAME_BYTES = 64 * 1024


class WebError(Exception):
    """A request the server refuses: ``status`` (a 4xx code) and a message for the page."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class TableConfig:
    """What the server's command line fixed: the rules, the default lineup of bots (one
    spec per other seat), the specs a new game may choose from, the seed, the delay, the
    limits on games kept, and whether a ppo bot's policy is shown during play."""

    rules: Rules
    bots: tuple[str, ...]
    offered: tuple[str, ...]
    seed: int | None = None
    delay_ms: int = 600
    max_games: int = 200
    max_memory_mb: float = 256.0
    show_bot_policy: bool = False
    bot_workers: int = 0
    move_time_limit: float = 30.0

    def __post_init__(self):
        n = self.rules.num_players
        if len(self.bots) != n - 1:
            raise ValueError(f"a {n}-player table needs {n - 1} bot(s), got {list(self.bots)}")
        missing = [b for b in self.bots if b not in self.offered]
        if missing:
            raise ValueError(f"the default bots {missing} must be offered")


def names_for(bots) -> list[str]:
    """Display names: "You", then each bot's spec (numbered when a spec repeats)."""
    counts = {b: list(bots).count(b) for b in bots}
    return ["You"] + [b if counts[b] == 1 else f"{b} #{i}" for i, b in enumerate(bots, start=1)]


def bot_bytes(agent) -> int:
    """What one copy of a bot weighs, for the memory cap: its pickled size (a game's bot
    is a deep copy of the prototype; the pickle counts its arrays and tensors, which a
    Python allocation tracer does not see). Measured once per spec at start-up."""
    return len(pickle.dumps(agent, protocol=pickle.HIGHEST_PROTOCOL))


@dataclass
class GameSession:
    """One game: the env, where its bots think, the move log and the pause at a deal's
    end."""

    id: str
    config: TableConfig
    bots: tuple[str, ...]
    env: raw_env
    lane: Lane
    generation: int
    views: dict[int, PolicyView]
    names: list[str]
    layouts: dict[int, int] = field(default_factory=dict)  # seat -> its bot's layout
    weight: int = 0
    log: list[dict] = field(default_factory=list)
    finished: GameState | None = None
    thinking: int | None = None  # the seat whose move is being made in a bot lane
    broken: str | None = None  # why the game cannot go on (its bots were lost)
    lock: threading.RLock = field(default_factory=threading.RLock)
    encoders: dict = field(default_factory=dict)  # layout -> encoder, for this game only

    # ------------------------------------------------------------------ views
    @property
    def version(self) -> int:
        return len(self.log)

    def status(self) -> str:
        """``"your_turn"``, ``"bot_turn"`` (ask for the bot's move), ``"bot_thinking"``
        (poll), ``"deal_over"`` (next deal to start), ``"match_over"`` or ``"broken"``
        (``error`` says why; start a new game)."""
        if self.broken is not None:
            return "broken"
        if self.finished is not None:
            return "match_over" if self.finished.match_over else "deal_over"
        if self.thinking is not None:
            return "bot_thinking"
        return "your_turn" if self.env.game.current == YOU else "bot_turn"

    def state(self) -> dict:
        """Everything the page shows, from seat 0's point of view."""
        game = self.finished if self.finished is not None else self.env.game
        status = self.status()
        legal = []
        if status == "your_turn":
            mask = self.env.observe(self.env.possible_agents[YOU])["action_mask"]
            legal = [{"action": int(a), "label": move_label(int(a), game)}
                     for a in np.flatnonzero(mask)]
        return {
            "id": self.id,
            "version": self.version,
            "status": status,
            "error": self.broken,
            "bots": list(self.bots),
            "position": position(game, YOU, self.names),
            "legal": legal,
            "log": self.log,
        }

    # ------------------------------------------------------------------ moves
    def _check_version(self, version: int | None) -> None:
        if version is not None and version != self.version:
            raise WebError(409, f"stale request: the page showed move {version}, but the game "
                                f"is at move {self.version} (another tab or a double click?); "
                                "the table has been refreshed")

    def move(self, action: int, version: int | None) -> None:
        """The person's move; refused unless it is their turn and the move is legal."""
        self._check_version(version)
        status = self.status()
        if status != "your_turn":
            raise WebError(409, self._not_now(status))
        if isinstance(action, bool) or not isinstance(action, int) \
                or not 0 <= action < NUM_ACTIONS:
            raise WebError(400, f"action must be an int 0..{NUM_ACTIONS - 1}, got {action!r}")
        mask = self.env.observe(self.env.possible_agents[YOU])["action_mask"]
        if not mask[action]:
            legal = ", ".join(f"{a} ({action_name(int(a))})" for a in np.flatnonzero(mask))
            raise WebError(400, f"illegal move: {action} ({action_name(action)}) cannot be "
                                f"played now; legal moves: {legal}")
        self._step(YOU, action, None)

    def advance(self, version: int | None) -> None:
        """Start one bot move in the game's lane; refused when it is the person's turn, a
        bot is already thinking or the deal is over. The move is applied when the lane
        answers (``_bot_moved``); the page polls the game until then."""
        self._check_version(version)
        status = self.status()
        if status != "bot_turn":
            raise WebError(409, self._not_now(status))
        if self.lane.generation != self.generation:
            self._break("this game's bots were lost when their worker was restarted (a bot "
                        "ran past the move time limit): start a new game")
            raise WebError(409, self.broken)
        seat = self.env.game.current
        obs = self.observation(seat)
        try:
            future = self.lane.submit("act", self.id, seat, obs)
        except Busy as e:
            raise WebError(503, str(e)) from None
        self.thinking = seat
        future.add_done_callback(lambda f: self._bot_moved(f, seat, obs, version))

    def observation(self, seat: int) -> dict:
        """What the bot at ``seat`` is shown now: the observation of its own layout."""
        layout = self.layouts.get(seat, self.env.layout_version)
        return seat_observation(self.env, seat, layout, self.encoders)

    def _bot_moved(self, future, seat: int, obs: dict, version: int | None) -> None:
        with self.lock:
            if self.thinking != seat or self.broken is not None:
                return
            self.thinking = None
            error = future.exception()
            if error is not None:
                if not isinstance(error, BotError):
                    log.error("game %s: bot at seat %d failed", self.id, seat,
                              exc_info=error)
                self._break(str(error) if isinstance(error, BotError)
                            else "the bot failed (see the server's log): start a new game")
                return
            action = int(future.result())
            thought = None
            if self.config.show_bot_policy and seat in self.views:
                thought = self.views[seat].decision(self.env.game, seat, obs)
                thought["chosen"] = action
            try:
                self._step(seat, action, thought)
            except ValueError as e:  # an illegal bot move: a bug in the bot
                log.error("game %s: bot at seat %d played %d: %s", self.id, seat, action, e)
                self._break(f"the bot at seat {seat} played an illegal move: start a new game")

    def next_deal(self, version: int | None) -> None:
        self._check_version(version)
        status = self.status()
        if status != "deal_over":
            raise WebError(409, "the match is over: start a new game" if status == "match_over"
                           else self._not_now(status))
        self.finished = None
        try:
            self.lane.submit("reset", self.id)
        except Busy as e:
            raise WebError(503, str(e)) from None

    def _break(self, why: str) -> None:
        self.broken = why
        self.thinking = None

    def _not_now(self, status: str) -> str:
        if status == "broken":
            return self.broken
        if status == "deal_over":
            return "the deal is over: start the next deal first"
        if status == "match_over":
            return "the game is over: start a new game"
        if status == "your_turn":
            return "it is your turn: the bots wait for your move"
        if status == "bot_thinking":
            return f"{self.names[self.thinking]} is thinking: wait for its move"
        return f"it is not your turn: {self.names[self.env.game.current]} moves next"

    def _step(self, seat: int, action: int, thought: dict | None) -> None:
        game = self.env.game
        before = game.copy()
        after = game.copy()
        after.apply(action)
        self.env.step(action)
        entry = {"n": self.version + 1, "deal": before.deal_index, "seat": seat,
                 "action": action, "text": describe(before, after, seat, action,
                                                    self.names, YOU)}
        if thought is not None:
            entry["policy"] = thought
        self.log.append(entry)
        if after.deal_over:
            self.finished = after

    def history(self) -> str:
        """The whole match as ``export_history()`` JSON (the replay view loads it): only
        once it is over, since it holds every deck."""
        if self.status() != "match_over":
            raise WebError(409, "the history (every deck and hand) is available once the game "
                                "is over")
        return self.env.export_history()


class GameStore:
    """The games of one server, in memory. Past ``config.max_games`` games, or past
    ``config.max_memory_mb`` of their weight (``GAME_BYTES`` plus each bot's
    ``bot_bytes``), the least recently used go first. ``bot_layouts`` is each spec's
    observation layout (its prototype's ``layout_version``; 0 when not given)."""

    def __init__(self, config: TableConfig, workers: BotWorkers,
                 policy_views: dict[str, PolicyView], bot_weights: dict[str, int],
                 bot_layouts: dict[str, int] | None = None):
        self.config = config
        self.workers = workers
        self.policy_views = policy_views
        self.bot_weights = bot_weights
        self.bot_layouts = dict(bot_layouts or {})
        self.budget = int(config.max_memory_mb * 2**20)
        self._games: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()
        self._count = 0
        self._weight = 0

    def weight_of(self, bots) -> int:
        return GAME_BYTES + sum(self.bot_weights[b] for b in bots)

    def create(self, bots: list[str] | None = None, deck: list | None = None,
               dealer: int | None = None, seed: int | None = None) -> GameSession:
        cfg = self.config
        n = cfg.rules.num_players
        bots = tuple(cfg.bots if bots is None else bots)
        if len(bots) != n - 1:
            raise WebError(400, f"this server's table has {n} players: choose {n - 1} bot(s), "
                                f"got {len(bots)}")
        for b in bots:
            if b not in cfg.offered:
                raise WebError(400, f"bot {b!r} is not offered by this server; offered: "
                                    + ", ".join(cfg.offered))
        weight = self.weight_of(bots)
        if weight > self.budget:
            raise WebError(400, f"a game with these bots weighs {weight / 2**20:.1f} MiB, more "
                                f"than this server's --max-memory-mb {cfg.max_memory_mb:g}")
        with self._lock:
            self._count += 1
            count = self._count
        if seed is None:
            seed = cfg.seed * 100_003 + count if cfg.seed is not None else secrets.randbelow(
                2**31)
        env = raw_env(**cfg.rules.to_dict())
        options = {}
        if deck is not None:
            options["deck"] = deck
        if dealer is not None:
            options["dealer"] = dealer
        try:
            env.reset(seed=seed, options=options)
        except (ValueError, TypeError) as e:
            raise WebError(400, f"bad deck or dealer: {e}") from None
        game_id = secrets.token_urlsafe(12)
        lane = self.workers.assign()
        try:
            lane.submit("open", game_id, {seat: (spec, seed * 7 + seat)
                                          for seat, spec in enumerate(bots, start=1)})
        except Busy as e:
            self.workers.release(lane)
            raise WebError(503, str(e)) from None
        views = {seat: self.policy_views[spec] for seat, spec in enumerate(bots, start=1)
                 if spec in self.policy_views}
        layouts = {seat: self.bot_layouts.get(spec, 0)
                   for seat, spec in enumerate(bots, start=1)}
        session = GameSession(id=game_id, config=cfg, bots=bots, env=env, lane=lane,
                              generation=lane.generation, views=views, names=names_for(bots),
                              layouts=layouts, weight=weight)
        with self._lock:
            self._games[session.id] = session
            self._weight += weight
            while len(self._games) > cfg.max_games or self._weight > self.budget:
                _, old = self._games.popitem(last=False)
                self._drop(old)
        return session

    def _drop(self, session: GameSession) -> None:
        self._weight -= session.weight
        self.workers.release(session.lane)
        try:
            session.lane.submit("close", session.id)
        except Busy:  # the lane is full: its bots go when the worker is next restarted
            log.warning("game %s evicted while its bot lane was full", session.id)

    @property
    def weight(self) -> int:
        """The weight of the games kept, in bytes."""
        return self._weight

    def __len__(self) -> int:
        return len(self._games)

    def get(self, game_id: str) -> GameSession:
        with self._lock:
            session = self._games.get(game_id)
            if session is None:
                raise WebError(404, f"unknown game {game_id!r}: it has expired (this server "
                                    f"keeps its most recent games, up to {self.config.max_games}"
                                    f" and {self.config.max_memory_mb:g} MiB) or the server "
                                    "was restarted; start a new game")
            self._games.move_to_end(game_id)
            return session

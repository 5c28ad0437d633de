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

Fair deals: a game is dealt from 128 bits of the operating system's CSPRNG
(``secrets``), and each bot is seeded from its own 64 bits, so neither what one game
shows nor anything else a client sees (ids, cookies, other games) tells another deal or a
hidden card. A seed, deck or dealer chosen by a client, or the server's ``--seed``, is
accepted only when the operator allowed it (``TableConfig.allow_arranged``), and such a
game is marked ``arranged`` in its state.

Timing: a bot's move is shown no sooner than ``TableConfig.bot_min_s`` after it was
asked for, however fast the bot was, so that the time a move takes does not tell a
forced move (one legal choice) from a considered one.

Who may touch a game: the browser session that created it (``owner``, the session
cookie of ``sessions``). Another session gets the same ``404`` as for an unknown id.
"""

from __future__ import annotations

import logging
import math
import pickle
import secrets
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
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
#: Bits of CSPRNG output a deal is drawn from, and each bot's seed.
DEAL_BITS = 128
BOT_SEED_BITS = 64
#: Sessions whose new-game times are remembered (the least recently seen are forgotten).
MAX_SESSIONS = 10_000


def draw_bits(bits: int) -> int:
    """``bits`` bits from the operating system's CSPRNG: every deal and bot seed."""
    return secrets.randbits(bits)


class WebError(Exception):
    """A request the server refuses: ``status`` (a 4xx or 503 code), a message for the
    page, and extra response headers (``Retry-After``)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclass(frozen=True)
class TableConfig:
    """What the server's command line fixed: the rules, the default lineup of bots (one
    spec per other seat), the specs a new game may choose from, the seed, the delay, the
    limits on games kept, and whether a ppo bot's policy is shown during play.

    ``allow_arranged``: a client may choose a game's seed, deck or dealer (and ``seed``
    may be set); ``bot_min_ms``: the least time a bot's move takes to show (``None``:
    ``delay_ms``); ``max_games_per_session``, ``new_games_per_minute``: each browser
    session's quotas; ``protect_minutes``: an unfinished game that saw a move this
    recently is never evicted to make room for another session's game."""

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
    allow_arranged: bool = False
    bot_min_ms: int | None = None
    max_games_per_session: int = 20
    new_games_per_minute: int = 60
    protect_minutes: float = 5.0

    def __post_init__(self):
        n = self.rules.num_players
        if len(self.bots) != n - 1:
            raise ValueError(f"a {n}-player table needs {n - 1} bot(s), got {list(self.bots)}")
        missing = [b for b in self.bots if b not in self.offered]
        if missing:
            raise ValueError(f"the default bots {missing} must be offered")
        if self.seed is not None and not self.allow_arranged:
            raise ValueError("--seed arranges every deal: it needs --allow-arranged")
        if self.max_games_per_session < 1 or self.new_games_per_minute < 1 \
                or self.protect_minutes < 0:
            raise ValueError("per-session limits must be >= 1 and --protect-minutes >= 0")
        if self.bot_min_ms is not None and self.bot_min_ms < 0:
            raise ValueError("--bot-min-ms must be >= 0")

    @property
    def bot_min_s(self) -> float:
        return (self.delay_ms if self.bot_min_ms is None else self.bot_min_ms) / 1000


def names_for(bots) -> list[str]:
    """Display names: "You", then each bot's spec (numbered when a spec repeats)."""
    counts = {b: list(bots).count(b) for b in bots}
    return ["You"] + [b if counts[b] == 1 else f"{b} #{i}" for i, b in enumerate(bots, start=1)]


def bot_bytes(agent) -> int:
    """What one copy of a bot weighs, for the memory cap: its pickled size (a game's bot
    is a deep copy of the prototype; the pickle counts its arrays and tensors, which a
    Python allocation tracer does not see). ``bots.warm_weight`` measures a bot after it
    has played, its per-game state grown."""
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
    owner: str = ""
    arranged: bool = False
    clock: Callable[[], float] = time.monotonic
    created: float = 0.0
    moved_at: float | None = None  # when the last move was made (eviction protection)
    log: list[dict] = field(default_factory=list)
    deals: list[dict] = field(default_factory=list)  # each finished deal's charges, totals
    finished: GameState | None = None
    thinking: int | None = None  # the seat whose move is being made in a bot lane
    asked_at: float = 0.0  # when that move was asked for
    pending: tuple | None = None  # (seat, action, observation): made, not yet shown
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
        self._catch_up()
        if self.broken is not None:
            return "broken"
        if self.finished is not None:
            return "match_over" if self.finished.match_over else "deal_over"
        if self.thinking is not None:
            return "bot_thinking"
        return "your_turn" if self.env.game.current == YOU else "bot_turn"

    @property
    def unfinished(self) -> bool:
        return self.broken is None and not (self.finished is not None
                                            and self.finished.match_over)

    def state(self, since: int | None = 0) -> dict:
        """Everything the page shows, from seat 0's point of view; the move log from move
        ``since`` on (``log_from``), so that a page that has the log so far is sent only
        what is new."""
        status = self.status()
        since = self.version if since is None else since
        if not 0 <= since <= self.version:
            raise WebError(400, f"since must be 0..{self.version} (the game's version), "
                                f"got {since}")
        game = self.finished if self.finished is not None else self.env.game
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
            "arranged": self.arranged,
            "position": position(game, YOU, self.names),
            "deals": self.deals,
            "legal": legal,
            "log_from": since,
            "log": self.log[since:],
        }

    # ------------------------------------------------------------------ moves
    def _check_version(self, version: int) -> None:
        if version != self.version:
            raise WebError(409, f"stale request: the page showed move {version}, but the game "
                                f"is at move {self.version} (another tab or a double click?); "
                                "the table has been refreshed")

    def move(self, action: int, version: int) -> None:
        """The person's move; refused unless it is their turn and the move is legal."""
        status = self.status()
        self._check_version(version)
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

    def advance(self, version: int) -> None:
        """Start one bot move in the game's lane; refused when it is the person's turn, a
        bot is already thinking or the deal is over. The move is shown when the lane has
        answered and ``bot_min_s`` has passed since this request (``_catch_up``); the page
        polls the game until then."""
        status = self.status()
        self._check_version(version)
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
            raise WebError(503, str(e), {"Retry-After": "1"}) from None
        self.thinking = seat
        self.asked_at = self.clock()
        future.add_done_callback(lambda f: self._bot_moved(f, seat, obs))

    def observation(self, seat: int) -> dict:
        """What the bot at ``seat`` is shown now: the observation of its own layout."""
        layout = self.layouts.get(seat, self.env.layout_version)
        return seat_observation(self.env, seat, layout, self.encoders)

    def _bot_moved(self, future, seat: int, obs: dict) -> None:
        """The lane's answer (in the lane's thread): an error ends the game at once; a move
        waits in ``pending`` until it may be shown."""
        with self.lock:
            if self.thinking != seat or self.broken is not None:
                return
            error = future.exception()
            if error is not None:
                if not isinstance(error, BotError):
                    log.error("game %s: bot at seat %d failed", self.id, seat,
                              exc_info=error)
                self._break(str(error) if isinstance(error, BotError)
                            else "the bot failed (see the server's log): start a new game")
                return
            self.pending = (seat, int(future.result()), obs)
            self._catch_up()

    def _catch_up(self) -> None:
        """Show a bot's move once it is in and ``bot_min_s`` has passed since it was asked
        for. Called by every look at the game, so no timer thread is needed: until then the
        game stays ``bot_thinking``."""
        if self.pending is None or self.clock() < self.asked_at + self.config.bot_min_s:
            return
        seat, action, obs = self.pending
        self.pending = None
        self.thinking = None
        thought = None
        if self.config.show_bot_policy and seat in self.views:
            thought = self.views[seat].decision(self.env.game, seat, obs)
            thought["chosen"] = action
        try:
            self._step(seat, action, thought)
        except ValueError as e:  # an illegal bot move: a bug in the bot
            log.error("game %s: bot at seat %d played %d: %s", self.id, seat, action, e)
            self._break(f"the bot at seat {seat} played an illegal move: start a new game")

    def next_deal(self, version: int) -> None:
        """Deal the next deal of the match: the bots are reset first, so that a lane too
        busy to take the reset (``503``) leaves the game as it was, and a retry works."""
        status = self.status()
        self._check_version(version)
        if status != "deal_over":
            raise WebError(409, "the match is over: start a new game" if status == "match_over"
                           else self._not_now(status))
        try:
            self.lane.submit("reset", self.id)
        except Busy as e:
            raise WebError(503, str(e), {"Retry-After": "1"}) from None
        self.finished = None

    def _break(self, why: str) -> None:
        self.broken = why
        self.thinking = None
        self.pending = None

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
        self.moved_at = self.clock()
        if after.deal_over:
            self.finished = after
            self.deals.append({"deal": after.deal_index, "charges": list(after.charges),
                               "totals": list(after.totals)})

    def history(self) -> str:
        """The whole match as ``export_history()`` JSON (the replay view loads it): only
        once it is over, since it holds every deck."""
        if self.status() != "match_over":
            raise WebError(409, "the history (every deck and hand) is available once the game "
                                "is over")
        return self.env.export_history()


class GameStore:
    """The games of one server, in memory, each owned by the browser session that made it.

    Limits, checked when a game is made: a session makes at most
    ``config.new_games_per_minute`` games a minute (``429``) and keeps at most
    ``config.max_games_per_session`` (past it, its own least recently used game goes).
    Past ``config.max_games`` games or ``config.max_memory_mb`` of their weight
    (``GAME_BYTES`` plus each bot's measured weight, ``bot_weights``), the least recently
    used games go first, but never an unfinished game that saw a move in the last
    ``config.protect_minutes``: when only such games are left, making a game is refused
    with ``503`` and ``Retry-After``. An evicted game's bots are always closed.
    ``bot_layouts`` is each spec's observation layout (0 when not given)."""

    def __init__(self, config: TableConfig, workers: BotWorkers,
                 policy_views: dict[str, PolicyView], bot_weights: dict[str, int],
                 bot_layouts: dict[str, int] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.workers = workers
        self.policy_views = policy_views
        self.bot_weights = bot_weights
        self.bot_layouts = dict(bot_layouts or {})
        self.budget = int(config.max_memory_mb * 2**20)
        self.clock = clock
        self._games: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()
        self._count = 0
        self._weight = 0
        self._owned: Counter[str] = Counter()
        self._made: OrderedDict[str, deque] = OrderedDict()  # session -> its creation times

    def weight_of(self, bots) -> int:
        return GAME_BYTES + sum(self.bot_weights[b] for b in bots)

    def create(self, owner: str, bots: list[str] | None = None, deck: list | None = None,
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
        chosen = deck is not None or dealer is not None or seed is not None
        if chosen and not cfg.allow_arranged:
            raise WebError(403, "this server deals every game itself: a chosen seed, deck or "
                                "dealer needs a server started with --allow-arranged")
        weight = self.weight_of(bots)
        if weight > self.budget:
            raise WebError(400, f"a game with these bots weighs {weight / 2**20:.1f} MiB, more "
                                f"than this server's --max-memory-mb {cfg.max_memory_mb:g}")
        with self._lock:
            now = self.clock()
            self._check_rate(owner, now)
            self._count += 1
            if seed is None and cfg.seed is not None:
                seed = cfg.seed * 100_003 + self._count
            arranged = chosen or cfg.seed is not None
            env = raw_env(**cfg.rules.to_dict())
            options = {}
            if deck is not None:
                options["deck"] = deck
            if dealer is not None:
                options["dealer"] = dealer
            try:
                env.reset(seed=draw_bits(DEAL_BITS) if seed is None else seed,
                          options=options)
            except (ValueError, TypeError) as e:
                raise WebError(400, f"bad deck or dealer: {e}") from None
            self._make_room(owner, weight, now)
            game_id = secrets.token_urlsafe(16)
            lane = self.workers.assign()
            try:
                lane.submit("open", game_id, {seat: (spec, draw_bits(BOT_SEED_BITS))
                                              for seat, spec in enumerate(bots, start=1)})
            except Busy as e:
                self.workers.release(lane)
                raise WebError(503, str(e), {"Retry-After": "1"}) from None
            views = {seat: self.policy_views[spec] for seat, spec in enumerate(bots, start=1)
                     if spec in self.policy_views}
            layouts = {seat: self.bot_layouts.get(spec, 0)
                       for seat, spec in enumerate(bots, start=1)}
            session = GameSession(id=game_id, config=cfg, bots=bots, env=env, lane=lane,
                                  generation=lane.generation, views=views,
                                  names=names_for(bots), layouts=layouts, weight=weight,
                                  owner=owner, arranged=arranged, clock=self.clock,
                                  created=now)
            self._games[session.id] = session
            self._weight += weight
            self._owned[owner] += 1
            self._made.setdefault(owner, deque()).append(now)
            self._made.move_to_end(owner)
            while len(self._made) > MAX_SESSIONS:
                self._made.popitem(last=False)
        return session

    def _check_rate(self, owner: str, now: float) -> None:
        made = self._made.get(owner)
        if made is None:
            return
        while made and made[0] <= now - 60:
            made.popleft()
        if len(made) >= self.config.new_games_per_minute:
            wait = max(1, math.ceil(made[0] + 60 - now))
            raise WebError(429, f"too many new games: at most "
                                f"{self.config.new_games_per_minute} a minute per browser "
                                f"session; try again in {wait} s", {"Retry-After": str(wait)})

    def _protected(self, game: GameSession, now: float) -> bool:
        window = self.config.protect_minutes * 60
        return game.unfinished and game.moved_at is not None and now - game.moved_at < window

    def _make_room(self, owner: str, weight: int, now: float) -> None:
        """Evict what a new game of ``owner`` weighing ``weight`` needs (see the class
        docstring), or refuse with ``503`` having evicted nothing."""
        cfg = self.config
        drop: list[GameSession] = []
        if self._owned[owner] >= cfg.max_games_per_session:  # the owner's own oldest
            drop.append(next(g for g in self._games.values() if g.owner == owner))
        count = len(self._games) - len(drop) + 1
        weight_after = self._weight - sum(g.weight for g in drop) + weight
        protected_until = []
        for game in self._games.values():
            if count <= cfg.max_games and weight_after <= self.budget:
                break
            if game in drop:
                continue
            if self._protected(game, now):
                protected_until.append(game.moved_at + cfg.protect_minutes * 60)
                continue
            drop.append(game)
            count -= 1
            weight_after -= game.weight
        if count > cfg.max_games or weight_after > self.budget:
            wait = max(1, math.ceil(min(protected_until, default=now + 1) - now))
            raise WebError(503, "the table is full of games in play: try again in "
                                f"{wait} s", {"Retry-After": str(wait)})
        for game in drop:
            del self._games[game.id]
            self._drop(game)

    def _drop(self, session: GameSession) -> None:
        self._weight -= session.weight
        self._owned[session.owner] -= 1
        if not self._owned[session.owner]:
            del self._owned[session.owner]
        self.workers.release(session.lane)
        session.lane.close_game(session.id)

    @property
    def weight(self) -> int:
        """The weight of the games kept, in bytes."""
        return self._weight

    def __len__(self) -> int:
        return len(self._games)

    def peek(self, game_id: str) -> GameSession | None:
        """The game ``game_id`` whoever owns it, or ``None``: for the server's operator
        and its tests, never for a request."""
        with self._lock:
            return self._games.get(game_id)

    def get(self, game_id: str, owner: str) -> GameSession:
        """The game ``game_id`` of session ``owner``; another session's game is as unknown
        as a game that never was."""
        with self._lock:
            session = self._games.get(game_id)
            if session is None or not secrets.compare_digest(session.owner, owner):
                raise WebError(404, f"unknown game {game_id[:40]!r}: it has expired (this "
                                    f"server keeps its most recent games, up to "
                                    f"{self.config.max_games} and "
                                    f"{self.config.max_memory_mb:g} MiB), the server was "
                                    "restarted or it is another browser's; start a new game")
            self._games.move_to_end(game_id)
            return session

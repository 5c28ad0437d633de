"""Games at the browser table: one ``GameSession`` per game, kept in a ``GameStore``.

The person sits at seat 0 (``player_0``); bots fill the other seats. A session owns its
``raw_env`` and advances it one decision per request: the person's move (checked against
the env's mask), or one bot move (the page asks for those one at a time, with its delay
between them, so that a person can follow). When a deal ends the session pauses on the
finished position (charges, winner, every hand) until the page asks for the next deal.

Every request that changes a game names the version (the number of moves) it has seen;
a request made from an older view is refused with ``409`` and changes nothing, so a
double click or a second tab cannot play a move twice. Bad requests raise ``WebError``
with the HTTP status and a message for the page.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pis_env import Rules, raw_env
from pis_env.engine import NUM_ACTIONS, GameState, action_name

from .. import make_for_table
from ..play import describe
from .policy import PolicyView
from .views import move_label, position

#: The seat of the person at the table.
YOU = 0


class WebError(Exception):
    """A request the server refuses: ``status`` (a 4xx code) and a message for the page."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class TableConfig:
    """What the server's command line fixed: the rules, the default lineup of bots (one
    spec per other seat), the specs a new game may choose from, the seed and the delay."""

    rules: Rules
    bots: tuple[str, ...]
    offered: tuple[str, ...]
    seed: int | None = None
    delay_ms: int = 600
    max_games: int = 200

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


@dataclass
class GameSession:
    """One game: the env, its bots, the move log and the pause at a deal's end."""

    id: str
    config: TableConfig
    bots: tuple[str, ...]
    seed: int
    env: raw_env
    agents: dict[int, Any]
    views: dict[int, PolicyView]
    names: list[str]
    log: list[dict] = field(default_factory=list)
    finished: GameState | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    # ------------------------------------------------------------------ views
    @property
    def version(self) -> int:
        return len(self.log)

    def status(self) -> str:
        """``"your_turn"``, ``"bot_turn"``, ``"deal_over"`` (next deal to start) or
        ``"match_over"``."""
        if self.finished is not None:
            return "match_over" if self.finished.match_over else "deal_over"
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
            "seed": self.seed,
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
        """One bot move; refused when it is the person's turn or the deal is over."""
        self._check_version(version)
        status = self.status()
        if status != "bot_turn":
            raise WebError(409, self._not_now(status))
        seat = self.env.game.current
        obs = self.env.observe(self.env.possible_agents[seat])
        thought = None
        if seat in self.views:
            thought = self.views[seat].decision(self.env.game, seat, obs)
        action = int(self.agents[seat].act(obs))
        if thought is not None:
            thought["chosen"] = action
        self._step(seat, action, thought)

    def next_deal(self, version: int | None) -> None:
        self._check_version(version)
        status = self.status()
        if status != "deal_over":
            raise WebError(409, "the match is over: start a new game" if status == "match_over"
                           else "the deal is still being played")
        self.finished = None
        for agent in self.agents.values():
            agent.reset()

    def _not_now(self, status: str) -> str:
        if status == "deal_over":
            return "the deal is over: start the next deal first"
        if status == "match_over":
            return "the game is over: start a new game"
        if status == "your_turn":
            return "it is your turn: the bots wait for your move"
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
        """The game so far as ``export_history()`` JSON (the replay view loads it)."""
        return self.env.export_history()


class GameStore:
    """The games of one server, in memory; the least recently used go first when more
    than ``config.max_games`` are open."""

    def __init__(self, config: TableConfig, policy_views: dict[str, PolicyView]):
        self.config = config
        self.policy_views = policy_views
        self._games: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()
        self._count = 0

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
        rules = cfg.rules.to_dict()
        agents = {seat: make_for_table(spec, rules, seed=seed * 7 + seat)
                  for seat, spec in enumerate(bots, start=1)}
        views = {seat: self.policy_views[spec] for seat, spec in enumerate(bots, start=1)
                 if spec in self.policy_views}
        session = GameSession(id=secrets.token_urlsafe(12), config=cfg, bots=bots, seed=seed,
                              env=env, agents=agents, views=views, names=names_for(bots))
        with self._lock:
            self._games[session.id] = session
            while len(self._games) > cfg.max_games:
                self._games.popitem(last=False)
        return session

    def get(self, game_id: str) -> GameSession:
        with self._lock:
            session = self._games.get(game_id)
            if session is None:
                raise WebError(404, f"unknown game {game_id!r}: it has expired (this server "
                                    f"keeps its {self.config.max_games} most recent games) or "
                                    "the server was restarted; start a new game")
            self._games.move_to_end(game_id)
            return session

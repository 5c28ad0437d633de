"""Replays of exported histories: every position of a match, to step through.

A history is loaded with ``raw_env.from_history`` and nothing else: the env class given
to it is a subclass of ``raw_env`` whose ``step`` keeps a copy of the position after each
move. So the positions are the ones the env itself reaches (its checks, digests and
reshuffle orders included), and this module never reads the history's fields.

Frames: the deal's first position, then the position after each move. A move that ends a
deal of a match gets a frame of the finished deal (charges, every hand) before the next
deal's first position.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from pis_env import IllegalActionError, raw_env
from pis_env.engine import GameState

from ..play import describe
from .policy import PolicyView
from .tables import WebError
from .views import position

#: Largest history text accepted (a 1000-turn reshuffle match is far smaller).
MAX_HISTORY_BYTES = 20_000_000


@dataclass
class Frame:
    game: GameState
    seat: int | None = None  # who moved into this position, and how
    action: int | None = None
    text: str = ""


class _RecordingEnv(raw_env):
    """``raw_env`` that keeps a ``Frame`` per position while ``from_history`` steps it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.frames: list[Frame] = []

    def step(self, action):
        game = self.game
        if game is None or game.deal_over:
            return super().step(action)
        before = game.copy()
        if not self.frames:
            self.frames.append(Frame(before.copy(), text="the deal starts"))
        seat, deal = game.current, game.deal_index
        super().step(action)
        game = self.game
        if game.deal_index == deal:
            after = game.copy()
        else:  # the env dealt the next deal at once: rebuild the finished position
            after = before.copy()
            try:
                after.apply(action)
            except IllegalActionError:
                after.forfeit(seat)
        names = [f"player_{i}" for i in range(game.num_players)]
        if after.end_reason == "illegal":
            text = f"player_{seat} made an illegal move ({int(action)}) and forfeits"
        else:
            text = describe(before, after, seat, int(action), names, -1)
        self.frames.append(Frame(after, seat, int(action), text))
        if game.deal_index != deal:
            self.frames.append(Frame(game.copy(), text=f"deal {game.deal_index + 1} starts"))


class Replay:
    """An exported history's frames, and views of them."""

    def __init__(self, history: str, policy_views: list[PolicyView]):
        if len(history) > MAX_HISTORY_BYTES:
            raise WebError(413, f"history too large ({len(history)} bytes; at most "
                                f"{MAX_HISTORY_BYTES})")
        try:
            env = _RecordingEnv.from_history(history)
        except json.JSONDecodeError as e:
            raise WebError(400, f"not a history: the file is not valid JSON ({e})") from None
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
            why = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
            raise WebError(400, f"not a replayable history: {why}") from None
        frames = env.frames or [Frame(env.game.copy(), text="the deal starts")]
        self.frames = frames
        self.id = secrets.token_urlsafe(12)
        game = env.game
        self.num_players = game.num_players
        self.num_deals = game.rules.num_deals
        self.rules = game.rules.to_dict()
        self.names = [f"player_{i}" for i in range(self.num_players)]
        self.policy = next((v for v in policy_views
                            if v.fits(self.num_players, self.num_deals)), None)

    def summary(self) -> dict:
        return {
            "id": self.id,
            "frames": len(self.frames),
            "names": self.names,
            "rules": self.rules,
            "moves": [{"frame": k, "seat": f.seat, "text": f.text}
                      for k, f in enumerate(self.frames)],
            "policy": self.policy.spec if self.policy else None,
        }

    def frame(self, k: int, view: str, with_policy: bool) -> dict:
        """Frame ``k`` seen by ``view`` (``"table"`` or a seat number). With
        ``with_policy``, the policy's view of the decision in this position when it is
        the viewed seat's (any seat's in the full-table view)."""
        if not 0 <= k < len(self.frames):
            raise WebError(404, f"frame {k} does not exist: this replay has frames "
                                f"0..{len(self.frames) - 1}")
        seat = _seat_of(view, self.num_players)
        frame = self.frames[k]
        game = frame.game
        out = {"index": k, "count": len(self.frames), "view": view, "text": frame.text,
               "mover": frame.seat, "action": frame.action,
               "next": self.frames[k + 1].action if k + 1 < len(self.frames) else None,
               "position": position(game, seat, self.names), "policy": None}
        if with_policy:
            out["policy"] = self._policy(game, seat)
        return out

    def _policy(self, game: GameState, seat: int | None) -> dict | None:
        if self.policy is None:
            return {"note": "the server has no ppo policy for this table size"}
        if game.deal_over:
            return {"note": "no decision: the deal is over"}
        mover = game.current
        if seat is not None and seat != mover:
            return {"note": f"player_{mover} is to move: switch to that seat or the full "
                            "table to see the policy"}
        return self.policy.decision(game, mover, full_table=seat is None)


def _seat_of(view: str, num_players: int) -> int | None:
    if view == "table":
        return None
    try:
        seat = int(view)
    except (TypeError, ValueError):
        seat = -1
    if not 0 <= seat < num_players:
        raise WebError(400, f"view must be 'table' or a seat 0..{num_players - 1}, got {view!r}")
    return seat


class ReplayStore:
    """Loaded replays, in memory, the least recently used dropped past ``max_replays``."""

    def __init__(self, policy_views: list[PolicyView], max_replays: int = 50):
        self.policy_views = policy_views
        self.max_replays = max_replays
        self._replays: OrderedDict[str, Replay] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, history: str) -> Replay:
        replay = Replay(history, self.policy_views)
        with self._lock:
            self._replays[replay.id] = replay
            while len(self._replays) > self.max_replays:
                self._replays.popitem(last=False)
        return replay

    def get(self, replay_id: str) -> Replay:
        with self._lock:
            replay = self._replays.get(replay_id)
            if replay is None:
                raise WebError(404, f"unknown replay {replay_id!r}: it has expired or the "
                                    "server was restarted; load the history again")
            self._replays.move_to_end(replay_id)
            return replay

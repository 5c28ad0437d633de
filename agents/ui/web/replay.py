"""Replays of exported histories: every position of a match, to step through.

A history is loaded with ``raw_env.from_history`` and nothing else: the env class given
to it is a subclass of ``raw_env`` whose ``step`` notes each move. So the positions are
the ones the env itself reaches (its checks, digests and reshuffle orders included), and
this module never reads the history's fields.

Frames: the deal's first position, then the position after each move. A move that ends a
deal of a match gets a frame of the finished deal (charges, every hand) before the next
deal's first position.

Memory is linear in the history's length with a small constant, not quadratic: a frame
keeps who moved, the move and its sentence (about 200 bytes); a copy of the position is
kept only every ``SNAPSHOT_EVERY`` frames, and frame ``k`` is rebuilt from the snapshot at
or before it by applying at most ``SNAPSHOT_EVERY - 1`` moves (``GameState.copy`` shares
the action history, so a snapshot costs the same at move 10 or 10,000). A replay has at
most ``MAX_REPLAY_ACTIONS`` moves, and ``ReplayStore`` keeps at most ``max_frames``
frames over all its replays, loads in flight included: before a load it reserves the most
frames the history can have (``frame_bound``: every move is at least one comma of its
text), dropping older replays to make room, and the load stops past that many moves. At
most ``max_loading`` loads run at once; past it, or when the reservation cannot be made,
a load is refused with ``503`` and ``Retry-After``.

Answers stay small whatever the history's length: the summary carries counts, and the
move list is served in pages of at most ``MOVES_PAGE`` (``Replay.moves``).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from agents.ui.play import describe
from agents.ui.web.policy import PolicyView
from agents.ui.web.tables import WebError
from agents.ui.web.views import position
from pis_env import IllegalActionError, raw_env
from pis_env.engine import GameState
from pis_env.rules import MAX_NUM_DEALS

#: Largest history text accepted (the server's body limit is usually smaller).
MAX_HISTORY_BYTES = 20_000_000
#: Most moves in one replay: 50 deals of 2,000 turns.
MAX_REPLAY_ACTIONS = 100_000
#: A copy of the position every this many frames; others are rebuilt from the last one.
SNAPSHOT_EVERY = 64
#: Most entries of the move list in one answer.
MOVES_PAGE = 500
#: Frames a history of ``d`` deals adds to its moves: each deal's first position and the
#: finished deal's frame (bounded with the rules' deal limit).
FRAMES_PER_DEAL = 2

MOVE, DEAL = "move", "deal"


@dataclass(frozen=True)
class Frame:
    kind: str  # MOVE: ``action`` by ``seat`` led here; DEAL: a new deal was dealt
    seat: int | None = None
    action: int | None = None
    text: str = ""


def _rebuild(game: GameState, frame: Frame) -> None:
    """Step ``game`` (a copy of the previous frame's position) into ``frame``'s."""
    if frame.kind == DEAL:
        game.next_deal()
        return
    try:
        game.apply(frame.action)
    except IllegalActionError:  # the forfeit of illegal_action="terminate"
        game.forfeit(frame.seat)


class _RecordingEnv(raw_env):
    """``raw_env`` that notes a ``Frame`` per position while ``from_history`` steps it,
    and keeps a snapshot of the position every ``SNAPSHOT_EVERY`` frames."""

    #: The most moves this load may step (``ReplayStore`` sets it per load, in a
    #: subclass made for that load).
    max_moves = MAX_REPLAY_ACTIONS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.frames: list[Frame] = []
        self.snapshots: dict[int, GameState] = {}
        self._moves = 0

    def _note(self, frame: Frame, game: GameState) -> None:
        if len(self.frames) % SNAPSHOT_EVERY == 0:
            self.snapshots[len(self.frames)] = game.copy()
        self.frames.append(frame)

    def step(self, action):
        game = self.game
        if game is None or game.deal_over:
            return super().step(action)
        self._moves += 1
        if self._moves > min(self.max_moves, MAX_REPLAY_ACTIONS):
            raise WebError(413, "history too long: more than "
                                f"{min(self.max_moves, MAX_REPLAY_ACTIONS)} moves")
        before = game.copy()
        if not self.frames:
            self._note(Frame(DEAL, text="the deal starts"), before)
        seat, deal = game.current, game.deal_index
        super().step(action)
        game = self.game
        if game.deal_index == deal:
            after = game
        else:  # the env dealt the next deal at once: rebuild the finished position
            after = before.copy()
            _rebuild(after, Frame(MOVE, seat, int(action)))
        names = [f"player_{i}" for i in range(game.num_players)]
        if after.end_reason == "illegal":
            text = f"player_{seat} made an illegal move ({int(action)}) and forfeits"
        else:
            text = describe(before, after, seat, int(action), names, -1)
        self._note(Frame(MOVE, seat, int(action), text), after)
        if game.deal_index != deal:
            self._note(Frame(DEAL, text=f"deal {game.deal_index + 1} starts"), game)


class Replay:
    """An exported history's frames, and views of them."""

    def __init__(self, history: str, policy_views: list[PolicyView],
                 max_moves: int = MAX_REPLAY_ACTIONS):
        if len(history) > MAX_HISTORY_BYTES:
            raise WebError(413, f"history too large ({len(history)} bytes; at most "
                                f"{MAX_HISTORY_BYTES})")
        recorder = type("_BoundedRecordingEnv", (_RecordingEnv,), {"max_moves": max_moves})
        try:  # malformed JSON and deep nesting are ``HistoryError``s (a ValueError)
            env = recorder.from_history(history)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
            why = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
            raise WebError(400, f"not a replayable history: {why}") from None
        if not env.frames:
            env._note(Frame(DEAL, text="the deal starts"), env.game)
        self.frames = env.frames
        self.snapshots = env.snapshots
        self._last: tuple[int, GameState] | None = None  # the last frame rebuilt
        self.id = secrets.token_urlsafe(12)
        game = env.game
        self.num_players = game.num_players
        self.num_deals = game.rules.num_deals
        self.rules = game.rules.to_dict()
        self.names = [f"player_{i}" for i in range(self.num_players)]
        self.policy = next((v for v in policy_views
                            if v.fits(self.num_players, self.num_deals)), None)

    def summary(self) -> dict:
        """What the page needs to open the replay; the move list comes in pages."""
        return {
            "id": self.id,
            "frames": len(self.frames),
            "names": self.names,
            "rules": self.rules,
            "moves_page": MOVES_PAGE,
            "policy": self.policy.spec if self.policy else None,
        }

    def moves(self, start: int, count: int) -> dict:
        """Entries ``start .. start + count - 1`` of the move list (one per frame: who
        moved and the sentence), ``count`` at most ``MOVES_PAGE``."""
        if not 0 <= start < len(self.frames):
            raise WebError(404, f"frame {start} does not exist: this replay has frames "
                                f"0..{len(self.frames) - 1}")
        count = max(1, min(count, MOVES_PAGE))
        return {"start": start, "frames": len(self.frames), "moves": [
            {"frame": k, "seat": f.seat, "text": f.text}
            for k, f in enumerate(self.frames[start:start + count], start=start)]}

    def frame(self, k: int, view: str, with_policy: bool) -> dict:
        """Frame ``k`` seen by ``view`` (``"table"`` or a seat number). With
        ``with_policy``, the policy's view of the decision in this position when it is
        the viewed seat's (any seat's in the full-table view)."""
        if not 0 <= k < len(self.frames):
            raise WebError(404, f"frame {k} does not exist: this replay has frames "
                                f"0..{len(self.frames) - 1}")
        seat = _seat_of(view, self.num_players)
        frame = self.frames[k]
        game = self.position_at(k)
        following = self.frames[k + 1] if k + 1 < len(self.frames) else None
        out = {"index": k, "count": len(self.frames), "view": view, "text": frame.text,
               "mover": frame.seat, "action": frame.action,
               "next": following.action if following is not None else None,
               "position": position(game, seat, self.names), "policy": None}
        if with_policy:
            out["policy"] = self._policy(game, seat)
        return out

    def position_at(self, k: int) -> GameState:
        """Frame ``k``'s position (a copy of its own): from the snapshot at or before it,
        or from the last frame rebuilt when that is closer, stepping the moves between."""
        start = k - k % SNAPSHOT_EVERY
        last = self._last
        if last is not None and start <= last[0] <= k:
            start, game = last[0], last[1].copy()
        else:
            game = self.snapshots[start].copy()
        for j in range(start + 1, k + 1):
            _rebuild(game, self.frames[j])
        self._last = (k, game.copy())
        return game

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


def move_bound(history: str) -> int:
    """The most moves ``history`` (JSON text) can hold, read without parsing it: a move
    is at least one comma of the text (between the two numbers of its action pair)."""
    return min(history.count(","), MAX_REPLAY_ACTIONS)


def frame_bound(moves: int) -> int:
    """The most frames of a replay of ``moves`` moves: one per move, the first position,
    and ``FRAMES_PER_DEAL`` per deal (at most ``MAX_NUM_DEALS`` deals)."""
    return moves + 1 + FRAMES_PER_DEAL * MAX_NUM_DEALS


class ReplayStore:
    """Loaded replays, in memory, the least recently used dropped past ``max_replays``
    replays or ``max_frames`` frames over all of them and the loads in flight (see the
    module docstring); ``max_loading`` loads at once."""

    def __init__(self, policy_views: list[PolicyView], max_replays: int = 50,
                 max_frames: int = 500_000, max_loading: int = 2):
        self.policy_views = policy_views
        self.max_replays = max_replays
        self.max_frames = max_frames
        self._replays: OrderedDict[str, Replay] = OrderedDict()
        self._frames = 0
        self._reserved = 0  # frames reserved by loads in flight
        self._loading = threading.BoundedSemaphore(max_loading)
        self._lock = threading.Lock()

    def load(self, history: str) -> Replay:
        if len(history) > MAX_HISTORY_BYTES:
            raise WebError(413, f"history too large ({len(history)} bytes; at most "
                                f"{MAX_HISTORY_BYTES})")
        if not self._loading.acquire(blocking=False):
            raise WebError(503, "other replays are being loaded: try again in a moment",
                           {"Retry-After": "2"})
        try:
            moves = move_bound(history)
            bound = frame_bound(moves)
            self._reserve(bound)
            try:
                replay = Replay(history, self.policy_views, max_moves=moves)
            finally:
                with self._lock:
                    self._reserved -= bound
            with self._lock:
                self._replays[replay.id] = replay
                self._frames += len(replay.frames)
                self._evict(keep=replay.id)
            return replay
        finally:
            self._loading.release()

    def _reserve(self, frames: int) -> None:
        """Make room for ``frames`` more frames (dropping the least recently used
        replays), or refuse with ``503``."""
        with self._lock:
            while self._replays and self._frames + self._reserved + frames > self.max_frames:
                _, old = self._replays.popitem(last=False)
                self._frames -= len(old.frames)
            if self._frames + self._reserved + frames > self.max_frames:
                raise WebError(503, "the server is loading other long replays: try again "
                                    "in a moment", {"Retry-After": "2"})
            self._reserved += frames

    def _evict(self, keep: str) -> None:
        while len(self._replays) > 1 and (len(self._replays) > self.max_replays
                                          or self._frames > self.max_frames):
            oldest = next(iter(self._replays))
            if oldest == keep:
                self._replays.move_to_end(keep)
                continue
            old = self._replays.pop(oldest)
            self._frames -= len(old.frames)

    def get(self, replay_id: str) -> Replay:
        with self._lock:
            replay = self._replays.get(replay_id)
            if replay is None:
                raise WebError(404, f"unknown replay {replay_id[:40]!r}: it has expired or "
                                    "the server was restarted; load the history again")
            self._replays.move_to_end(replay_id)
            return replay

"""The public record of a match, as the ``pis_yedili_v1`` observation carries it.

A person at the table sees every play, draw, pass, nomination and penalty as it happens;
a bot is shown the table only at its own turns. So the v1 observation adds, for the
observer, the **events since its own last action** (that action first, also one the env
or a wrapper played for it), and a per-opponent **summary** of the deal so far. This
module owns both: ``DealReplay`` walks a deal's ``(player, action)`` pairs keeping only
public facts (top card, active suit, pending sevens, stock and pile sizes), which is all
that is needed to turn an action into an event with its card count and to say what an
opponent refused; ``public_window`` cuts the observer's window out of a state's
histories; ``PublicHistory`` rebuilds the whole public history of a match from one
seat's v1 observations alone.

Events are ``(seat, kind, value)``, the seat relative to the observer (0 = itself):

========== ====== ==============================================================
kind       code   value
========== ====== ==============================================================
``play``   0–51   the card id played
``nominate`` 52–55 the suit nominated after a Jack (0 clubs … 3 spades)
``draw``   56     cards drawn (consecutive draws of one seat are one event)
``pass``   57     None
``penalty`` 58    cards taken for the pending sevens
``deal``   59     None: a deal starts; its seat is the dealer
========== ====== ==============================================================

Why a window since the observer's own last action: concatenating the windows of a
seat's decisions gives the whole stream without overlap, so nothing has to be
remembered by the env, and the window is a function of the state alone (the batched
engine and every search clone encode it the same way). It spans deals: a deal's last
events, then ``deal``, then the next deal's.

When a window holds more events than the log's slots (``observation.event_slots``), the
**oldest are dropped** and counted (``events_dropped``), save the window's first event
(the observer's own action, which ties the window to the previous one: a draw that ended
a deal continues the run of draws before it). That needs long runs of skips
and Ace chains, or a large table's draw-heavy round, and is rare; what inference needs
from the dropped part (cards drawn, refusals, nominations) is still in the summary,
which is cumulative over the deal and never truncated.
"""

from __future__ import annotations

from .actions import DRAW, NOMINATE_BASE, PASS
from .cards import CARDS_PER_HAND, CLUBS, JACK, NUM_CARDS, SEVEN
from .engine import refill_size

PENALTY = 58
NEW_DEAL = 59
NUM_EVENT_CODES = 60
KINDS = {DRAW: "draw", PASS: "pass", PENALTY: "penalty", NEW_DEAL: "deal"}
_JACK_BIT = 1 << JACK


def kind_of(code: int) -> str:
    """The event kind of an event code (``"play"``, ``"nominate"``, ``"draw"``, ...)."""
    if 0 <= code < NUM_CARDS:
        return "play"
    if NOMINATE_BASE <= code < DRAW:
        return "nominate"
    return KINDS[code]


def event_tuple(seat: int, code: int, count: int) -> tuple:
    """The ``(seat, kind, value)`` an event code decodes to."""
    kind = kind_of(code)
    if kind == "play":
        return (seat, kind, code)
    if kind == "nominate":
        return (seat, kind, code - NOMINATE_BASE)
    if kind in ("draw", "penalty"):
        return (seat, kind, count)
    return (seat, kind, None)


class DealReplay:
    """One deal's public facts, advanced action by action (``step``).

    ``events`` holds one ``[seat, code, count]`` per action, absolute seats, the deal's
    ``deal`` marker first; ``last_own[p]`` the index of seat ``p``'s latest action there.
    Per seat, cumulative over the deal: ``drawn``, ``since_play`` (drawn since its last
    play), ``refused_suits`` / ``refused_ranks`` (bit masks: what it could have played
    when it drew, passed or took a penalty, cleared by a play of that suit / rank) and
    ``nominated`` (its latest nomination, -1 for none)."""

    __slots__ = ("n", "_first_round", "_double", "_reshuffle", "top", "suit", "pending",
                 "opened", "any_play", "stock", "pile", "events", "last_own", "drawn",
                 "since_play", "refused_suits", "refused_ranks", "nominated")

    def __init__(self, rules, dealer: int):
        n = rules.num_players
        self.n = n
        self._first_round = rules.opening == "first_round"
        self._double = rules.seven_penalty == "double"
        self._reshuffle = rules.empty_stock == "reshuffle"
        self.top, self.suit, self.pending = -1, CLUBS, 0
        self.opened, self.any_play = 0, False
        self.stock, self.pile = NUM_CARDS - CARDS_PER_HAND * n, 0
        self.events = [[dealer, NEW_DEAL, 0]]
        self.last_own = [-1] * n
        self.drawn = [0] * n
        self.since_play = [0] * n
        self.refused_suits = [0] * n
        self.refused_ranks = [0] * n
        self.nominated = [-1] * n

    def _opening(self, p: int) -> bool:
        return not (self.opened >> p) & 1 if self._first_round else not self.any_play

    def _take(self, count: int) -> int:
        """Cards actually drawn of ``count`` (the engine's ``_take``: the stock running dry
        reshuffles the pile under its top card, or ends the deal)."""
        for taken in range(1, count + 1):
            self.stock -= 1
            if not self.stock:
                self.stock = refill_size(self._reshuffle, self.pile)
                if not self.stock:
                    return taken
                self.pile = 1
        return count

    def step(self, p: int, action: int) -> None:
        """Take in seat ``p``'s legal ``action`` (the engine applied it)."""
        self.last_own[p] = len(self.events)
        count = 0
        code = action
        if action < NUM_CARDS:
            suit, rank = divmod(action, 13)
            opening = self._opening(p)
            self.top = action
            self.pile += 1
            self.opened |= 1 << p
            self.any_play = True
            self.since_play[p] = 0
            self.refused_suits[p] &= ~(1 << suit)
            self.refused_ranks[p] &= ~(1 << rank)
            if opening or rank != JACK:
                self.suit = suit
            if rank == SEVEN and not opening:
                self.pending += 1
        elif action == DRAW:
            if self.pending:
                k = self.pending
                code = PENALTY
                count = self._take(3 * (1 << (k - 1)) if self._double else 3 * k)
                self.pending = 0
                self.refused_ranks[p] |= 1 << SEVEN
            else:
                self._refuse(p)
                count = self._take(1)
            self.drawn[p] += count
            self.since_play[p] += count
        elif action == PASS:
            self._refuse(p)
        else:
            self.suit = action - NOMINATE_BASE
            self.nominated[p] = self.suit
        self.events.append([p, code, count])

    def _refuse(self, p: int) -> None:
        """Seat ``p`` drew or passed where it could have played: in the opening a club;
        else the active suit, and unless a Jack is on top its rank and the Jacks (the
        Ace's extra play offers the same: its suit, Aces, Jacks)."""
        if self._opening(p):
            self.refused_suits[p] |= 1 << CLUBS
            return
        self.refused_suits[p] |= 1 << self.suit
        rank = self.top % 13
        if rank != JACK:
            self.refused_ranks[p] |= (1 << rank) | _JACK_BIT


def merged(events) -> list[list[int]]:
    """``[seat, code, count]`` events with each run of one seat's draws made one event."""
    out: list[list[int]] = []
    for seat, code, count in events:
        if code == DRAW and out and out[-1][1] == DRAW and out[-1][0] == seat:
            out[-1][2] += count
        else:
            out.append([seat, code, count])
    return out


class ReplayCache:
    """The replay of a state's current deal, kept between calls and advanced by the
    actions appended since (an ``ActionLog`` is a persistent list: a node seen before is
    the same position of the same deal). Finished deals' replays are kept by their logs,
    which never change. Why: an env step then costs one ``step``, not a replay of the
    whole deal, and a search clone that branched off costs only its own actions."""

    def __init__(self) -> None:
        self._node: tuple | None = None
        self._replay: DealReplay | None = None
        self._finished: dict[int, tuple] = {}

    def current(self, state) -> DealReplay:
        log = state.history
        node = getattr(log, "_node", None)
        if node is None or not hasattr(log, "_node"):
            replay = DealReplay(state.rules, state.dealer)
            for p, a in log:
                replay.step(p, a)
            self._node, self._replay = None, None
            return replay
        if node is self._node and self._replay is not None:
            return self._replay
        pending = []
        walk = node
        while walk is not None and walk is not self._node:
            walk, pair = walk
            pending.append(pair)
        if walk is None or self._replay is None:  # not an extension of the cached deal
            replay = DealReplay(state.rules, state.dealer)  # from the start
        else:
            replay = self._replay
        for p, a in reversed(pending):
            replay.step(p, a)
        self._node, self._replay = node, replay
        return replay

    def finished(self, log, rules, dealer: int) -> DealReplay:
        key = id(log)
        hit = self._finished.get(key)
        if hit is not None and hit[0] is log:
            return hit[1]
        replay = DealReplay(rules, dealer)
        for p, a in log:
            replay.step(p, a)
        if len(self._finished) > 16:
            self._finished.clear()
        self._finished[key] = (log, replay)
        return replay


def public_window(state, observer: int, cache: ReplayCache) -> tuple[DealReplay, list]:
    """The current deal's replay, and ``observer``'s window: the events since its own
    last action (that action first), across deal boundaries, absolute seats, merged."""
    replay = cache.current(state)
    start = replay.last_own[observer]
    if start >= 0:
        return replay, merged(replay.events[start:])
    parts = [replay.events]
    dealer = state.dealer
    histories = state.histories
    n = state.num_players
    for back in range(2, len(histories) + 1):
        dealer = (dealer - 1) % n  # each deal's dealer sits one seat right of the next's
        older = cache.finished(histories[-back], state.rules, dealer)
        start = older.last_own[observer]
        parts.append(older.events[max(start, 0):])
        if start >= 0:
            break
    return replay, merged([e for part in reversed(parts) for e in part])


class PublicHistory:
    """The public history of a match rebuilt by one seat from its v1 observations alone.

    Feed ``observe(decoded)`` (``decode_observation(..., version=1)``) with the seat's
    observation at each of its decisions, once each, and its last one when the match
    ends. ``deals[d]`` is then deal ``d``'s events ``(seat, kind, value)`` (relative
    seats, the dealer's ``deal`` marker first, draws of one turn as one event), exactly
    the stream of the table; ``dropped[d]`` is non-zero when deal ``d`` lost events the
    log could not hold: a ``(None, "dropped", k)`` entry stands for ``k`` events of the
    stream (deal starts included), a deal that began inside such a gap starts with
    ``(None, "dropped", None)``. ``summary()``
    replays a complete deal to the per-opponent facts of the observation."""

    def __init__(self, num_players: int):
        self.num_players = num_players
        self.deals: list[list[tuple]] = []
        self.dropped: list[int] = []

    def observe(self, decoded) -> None:
        events = decoded["events"]
        dropped = decoded["events_dropped"]
        if not dropped:
            self._extend(events)
            return
        # The gap lies after the window's first event. It starts in the last deal seen;
        # deals that began inside it (the observation's deal index says how many) start
        # with an unknown part of it.
        self._extend(events[:1])
        self.deals[-1].append((None, "dropped", dropped))
        self.dropped[-1] += dropped
        starts = sum(1 for _, kind, _ in events[1:] if kind == "deal")
        while len(self.deals) <= decoded.get("deal", 0) - starts:
            self.deals.append([(None, "dropped", None)])
            self.dropped.append(dropped)
        self._extend(events[1:])

    def _extend(self, events) -> None:
        for event in events:
            seat, kind, value = event
            if kind == "deal" or not self.deals:
                self.deals.append([])
                self.dropped.append(0)
            deal = self.deals[-1]
            if kind == "draw" and deal and deal[-1][1] == "draw" and deal[-1][0] == seat:
                deal[-1] = (seat, "draw", deal[-1][2] + value)
            else:
                deal.append(tuple(event))

    def summary(self, rules, deal: int = -1) -> dict:
        """The per-opponent facts of deal ``deal`` replayed from its events (relative
        seats, opponent ``k`` at index ``k - 1``), as ``decode_observation`` names them."""
        events = self.deals[deal]
        if self.dropped[deal]:
            raise ValueError("this deal lost events to the log's size: read the observation's"
                             " summary instead")
        if not events or events[0][1] != "deal":
            raise ValueError("the deal's start was not observed")
        replay = DealReplay(rules, events[0][0])
        for seat, kind, value in events[1:]:
            if kind == "play":
                replay.step(seat, value)
            elif kind == "nominate":
                replay.step(seat, NOMINATE_BASE + value)
            elif kind == "pass":
                replay.step(seat, PASS)
            elif kind == "penalty":
                replay.step(seat, DRAW)
            else:
                for _ in range(value):
                    replay.step(seat, DRAW)
        return summary_of(replay, 0)


def summary_of(replay: DealReplay, observer: int) -> dict:
    """The per-opponent summary of ``replay`` as ``observer`` reads it (opponent ``k``,
    the ``k``-th to its left, at index ``k - 1``)."""
    n = replay.n
    seats = [(observer + k) % n for k in range(1, n)]
    cap = NUM_CARDS  # the observation's cap (observation.DRAWN_CAP)
    return {
        "opp_drawn": [min(replay.drawn[s], cap) for s in seats],
        "opp_drawn_since_play": [min(replay.since_play[s], cap) for s in seats],
        "opp_refused_suits": [[x for x in range(4) if replay.refused_suits[s] >> x & 1]
                              for s in seats],
        "opp_refused_ranks": [[r for r in range(13) if replay.refused_ranks[s] >> r & 1]
                              for s in seats],
        "opp_nominated": [None if replay.nominated[s] < 0 else replay.nominated[s]
                          for s in seats],
    }


__all__ = ["NEW_DEAL", "PENALTY", "DealReplay", "PublicHistory", "ReplayCache",
           "event_tuple", "kind_of", "merged", "public_window", "summary_of"]

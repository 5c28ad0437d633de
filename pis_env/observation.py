"""The observation vector: one declared table of named segments, used by both the encoder
and ``decode_observation`` (OpenSpiel's observer is the model).

Every value lies in [0, 1]. Counts are scaled so that they decode exactly: hand and stock
sizes by 1/52; match totals are squashed as ``t / (t + 100)``, which is unbounded in
``t`` yet stays inside the box. Seats are relative: index 0 of every per-player segment
is the observer, then the players to its left in clockwise order.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .cards import NUM_CARDS
from .engine import PHASE_NAMES, GameState
from .events import NUM_EVENT_CODES, ReplayCache, event_tuple, kind_of, public_window

#: The layout of ``pis_yedili_v0`` (what a bare ``Layout.of(n)`` and ``ObservationEncoder``
#: mean). Each env version ``pis_yedili_v{N}`` has layout version N (``LAYOUT_VERSIONS``);
#: policies, checkpoints and histories record theirs.
LAYOUT_VERSION = 0
#: Every layout version this package encodes and decodes.
LAYOUT_VERSIONS = (0, 1)
MAX_PENDING_SEVENS = 4
SIZE_SCALE = 52.0
SCORE_SCALE = 100.0
#: v1 event slots hold (relative seat + 1) / 8 and (event code + 1) / 64: exact in float32.
SEAT_SCALE = 8.0
CODE_SCALE = 64.0
#: v1 ``events_dropped`` holds d / (d + 16) (unbounded, yet inside the box).
DROPPED_SCALE = 16.0
#: v1 per-opponent draw counts are capped at 52 (a reshuffling deal can draw more; a
#: seat's run of draws in one turn cannot: the pile does not grow while it draws).
DRAWN_CAP = 52


def event_slots(num_players: int) -> int:
    """How many events the v1 log holds: ``63 - 6 n`` (51 at 2 players, 21 at 7), what keeps
    the v1 observation under twice the v0 one once the per-opponent summary is in."""
    return 63 - 6 * num_players


def check_layout_version(version) -> int:
    """``version`` itself when this package has that layout; else a ValueError naming them."""
    if isinstance(version, bool) or version not in LAYOUT_VERSIONS:
        raise ValueError(f"layout version {version!r}: this pis_env has layout versions "
                         + ", ".join(map(str, LAYOUT_VERSIONS)))
    return int(version)


def layout_mismatch(have: int, table: int | None, num_players: int = 2, num_deals: int = 1,
                    size: int | None = None) -> str:
    """The message for a reader of layout ``have`` at a table of layout ``table`` (or, with
    ``table=None``, shown a vector of ``size``: ``""`` unless that is another layout's
    size at this table): both layouts and their env versions named."""
    if table is None:
        table = next((v for v in LAYOUT_VERSIONS if v != have
                      and Layout.of(num_players, num_deals, v).size == size), None)
        if table is None:
            return ""
    return (f"built for observation layout version {have} (pis_yedili_v{have}), but the "
            f"table shows layout version {table} (pis_yedili_v{table}): seat it at a "
            f"pis_yedili_v{have} table, or use a bot built for pis_yedili_v{table}")


def segment_table(num_players: int, num_deals: int = 1,
                  version: int = LAYOUT_VERSION) -> list[tuple[str, int]]:
    """The ``(name, length)`` segments of the observation, in order. Layout 1 is layout 0
    followed by the public record (so ``v1[:len(v0)]`` is the v0 observation)."""
    version = check_layout_version(version)
    segments = [
        ("hand", NUM_CARDS),                       # 1 where the observer holds the card
        ("top_card", NUM_CARDS),                   # one-hot; all zeros before the opening
        ("active_suit", 4),                        # one-hot C D H S
        ("pending_sevens", MAX_PENDING_SEVENS + 1),  # one-hot count 0..4 of the live chain
        ("phase", len(PHASE_NAMES)),               # one-hot opening, play, nominate, ace
        ("has_drawn", 1),                          # the observer drew this turn
        ("direction", 1),                          # 1 clockwise, 0 anticlockwise
        ("hand_sizes", num_players),               # cards / 52, observer first
        ("stock_size", 1),                         # cards / 52
        ("discard", NUM_CARDS),                    # cards on the discard pile
        ("drew_on_suit", 4 * (num_players - 1)),   # per opponent (left first), the suits
                                                   # active when it drew since it last
                                                   # played that suit: likely voids
    ]
    if num_deals > 1:
        segments += [
            ("deal", num_deals),                   # one-hot index of the current deal
            ("scores", num_players),               # totals t as t / (t + 100), observer first
        ]
    if version >= 1:
        k, slots = num_players - 1, event_slots(num_players)
        segments += [
            # per opponent (left first), this deal, from its public actions (pis_env.events)
            ("opp_drawn", k),                      # cards drawn (penalties too) / 52, capped
            ("opp_drawn_since_play", k),           # cards drawn since its last play, same
            ("opp_refused_suits", 4 * k),          # suits it could follow when it drew or
                                                   # passed, not played since
            ("opp_refused_ranks", 13 * k),         # ranks it could match (and Jacks, 7s
                                                   # facing a penalty), not played since
            ("opp_nominated", 4 * k),              # one-hot suit of its latest nomination
            # the events since the observer's own last action (that one first), oldest first
            ("event_seat", slots),                 # (relative seat + 1) / 8; 0 = empty slot
            ("event_action", slots),               # (event code + 1) / 64 (pis_env.events)
            ("event_count", slots),                # cards drawn / 52 (draws, penalties)
            ("events_dropped", 1),                 # d / (d + 16): older events not held
        ]
    return segments


@dataclass(frozen=True)
class Layout:
    num_players: int
    num_deals: int
    offsets: dict[str, slice]
    size: int
    version: int = LAYOUT_VERSION

    @classmethod
    def of(cls, num_players: int, num_deals: int = 1, version: int = LAYOUT_VERSION) -> Layout:
        offsets, pos = {}, 0
        for name, length in segment_table(num_players, num_deals, version):
            offsets[name] = slice(pos, pos + length)
            pos += length
        return cls(num_players, num_deals, offsets, pos, version)


#: The segments a match observation adds to the deal observation (``num_deals > 1``).
MATCH_SEGMENTS = ("deal", "scores")


@functools.lru_cache(maxsize=64)
def deal_view_indices(num_players: int, num_deals: int,
                      version: int = LAYOUT_VERSION) -> np.ndarray:
    """The positions, in a match observation of ``num_deals`` deals, of the one-deal
    observation of the same layout version: every segment but ``deal`` and ``scores``,
    found by name in both layouts (never by fixed offsets, so a layout that moves them
    keeps the view right). ``match_obs[deal_view_indices(...)]`` is what the same seat
    would be shown at a one-deal table in the same position: how a network trained on
    single deals plays each deal of a match (``agents.ppo``). Read-only."""
    table = Layout.of(num_players, num_deals, version)
    deal = Layout.of(num_players, 1, version)
    parts = [np.arange(table.offsets[name].start, table.offsets[name].stop)
             for name in deal.offsets]
    index = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    if index.size != deal.size or any(name not in deal.offsets and name not in MATCH_SEGMENTS
                                      for name in table.offsets):
        raise ValueError(f"layout version {version}: the match layout is not the deal "
                         "layout plus the match segments")
    index.setflags(write=False)
    return index


def _two_masks_bits(low: int, high: int) -> np.ndarray:
    """Bits 0..63 of ``low`` then bits 0..63 of ``high`` as uint8 0/1 (one unpack call)."""
    packed = ((high << 64) | low).to_bytes(16, "little")
    return np.unpackbits(np.frombuffer(packed, dtype=np.uint8), bitorder="little")


class ObservationEncoder:
    """Writes a state, seen from one seat, into a float32 vector of the layout.

    As OpenSpiel's observers do, it owns one flat ``tensor`` and a dict of named views
    into it (``dict["hand"]``, ``dict["drew_on_suit"]`` shaped ``(n - 1, 4)``, ...), one per
    segment of :func:`segment_table`: :meth:`set_from` writes a position through the names,
    :meth:`encode` returns a copy of the tensor. This class writes layout 0
    (``pis_yedili_v0``); :class:`ObservationEncoderV1` layout 1."""

    #: The layout version this encoder writes.
    version = 0

    def __init__(self, num_players: int, num_deals: int = 1):
        self.layout = Layout.of(num_players, num_deals, self.version)
        self.tensor = np.zeros(self.layout.size, dtype=np.float32)
        self.dict = {name: self.tensor[s] for name, s in self.layout.offsets.items()}
        self.dict["drew_on_suit"] = self.dict["drew_on_suit"].reshape(num_players - 1, 4)
        self._views = tuple(self.dict[name] for name, _ in segment_table(num_players)[:11])
        self._match_views = (self.dict["deal"], self.dict["scores"]) if num_deals > 1 else ()

    def set_from(self, state: GameState, observer: int) -> None:
        """Writes ``state`` seen by ``observer`` into :attr:`tensor`."""
        self.tensor.fill(0.0)
        (hand, top_card, active_suit, pending, phase, has_drawn, direction, sizes, stock,
         discard, drew) = self._views  # the dict's views, in segment order (hot path)
        n = state.num_players
        bits = _two_masks_bits(state.hands[observer], state.pile_mask)
        hand[:] = bits[:52]
        discard[:] = bits[64:116]
        if state.top >= 0:
            top_card[state.top] = 1.0
        active_suit[state.active_suit] = 1.0
        pending[state.pending_sevens] = 1.0
        phase[state.phase] = 1.0
        if state.has_drawn and state.current == observer:
            has_drawn[0] = 1.0
        if state.direction == 1:
            direction[0] = 1.0
        hands = state.hands
        drew_on = state.drew_on
        for k in range(n):
            seat = (observer + k) % n
            sizes[k] = hands[seat].bit_count() / SIZE_SCALE
            suits = drew_on[seat]
            if k and suits:
                for s in range(4):
                    if (suits >> s) & 1:
                        drew[k - 1, s] = 1.0
        stock[0] = len(state.stock) / SIZE_SCALE
        if self._match_views:
            deal, scores = self._match_views
            deal[state.deal_index] = 1.0
            for k in range(n):
                t = state.totals[(observer + k) % n]
                scores[k] = t / (t + SCORE_SCALE)

    def encode(self, state: GameState, observer: int) -> np.ndarray:
        """The observation of ``observer`` as a new float32 array."""
        self.set_from(state, observer)
        return self.tensor.copy()


class ObservationEncoderV1(ObservationEncoder):
    """Layout 1 (``pis_yedili_v1``): layout 0, then the public record of
    :mod:`pis_env.events`, the per-opponent summary and the observer's event window.

    The deal's replay is cached between calls and advanced by the new actions only
    (``events.ReplayCache``), so an env step costs one replay step, not the deal's."""

    version = 1

    def __init__(self, num_players: int, num_deals: int = 1):
        super().__init__(num_players, num_deals)
        d, k = self.dict, num_players - 1
        for name, width in (("opp_refused_suits", 4), ("opp_refused_ranks", 13),
                            ("opp_nominated", 4)):
            d[name] = d[name].reshape(k, width)
        self.slots = self.layout.offsets["event_seat"].stop - self.layout.offsets[
            "event_seat"].start
        self._cache = ReplayCache()

    def set_from(self, state: GameState, observer: int) -> None:
        super().set_from(state, observer)
        replay, window = public_window(state, observer, self._cache)
        d = self.dict
        n = state.num_players
        drawn, since = d["opp_drawn"], d["opp_drawn_since_play"]
        suits, ranks, nominated = d["opp_refused_suits"], d["opp_refused_ranks"], d[
            "opp_nominated"]
        for k in range(1, n):
            s = (observer + k) % n
            drawn[k - 1] = min(replay.drawn[s], DRAWN_CAP) / SIZE_SCALE
            since[k - 1] = min(replay.since_play[s], DRAWN_CAP) / SIZE_SCALE
            bits = replay.refused_suits[s]
            for x in range(4):
                if bits >> x & 1:
                    suits[k - 1, x] = 1.0
            bits = replay.refused_ranks[s]
            while bits:
                low = bits & -bits
                ranks[k - 1, low.bit_length() - 1] = 1.0
                bits ^= low
            if replay.nominated[s] >= 0:
                nominated[k - 1, replay.nominated[s]] = 1.0
        dropped = max(0, len(window) - self.slots)
        if dropped:  # keep the first event (the observer's own action: it ties the window
            window = window[:1] + window[dropped + 1:]  # to the previous one), drop the next
        seat_v, code_v, count_v = d["event_seat"], d["event_action"], d["event_count"]
        for i, (seat, code, count) in enumerate(window):
            seat_v[i] = ((seat - observer) % n + 1) / SEAT_SCALE
            code_v[i] = (code + 1) / CODE_SCALE
            count_v[i] = count / SIZE_SCALE
        d["events_dropped"][0] = dropped / (dropped + DROPPED_SCALE)


def observation_encoder(num_players: int, num_deals: int = 1,
                        version: int = LAYOUT_VERSION) -> ObservationEncoder:
    """The encoder of layout ``version`` (0: ``pis_yedili_v0``, 1: ``pis_yedili_v1``)."""
    version = check_layout_version(version)
    return (ObservationEncoderV1 if version == 1 else ObservationEncoder)(num_players, num_deals)


#: Segments that hold only 0/1 bits, and those of them that are one-hots (exactly one 1).
BINARY_SEGMENTS = ("hand", "top_card", "active_suit", "pending_sevens", "phase", "has_drawn",
                   "direction", "discard", "drew_on_suit", "deal", "opp_refused_suits",
                   "opp_refused_ranks", "opp_nominated")
ONE_HOT_SEGMENTS = ("active_suit", "pending_sevens", "phase", "deal")
_COUNT_TOLERANCE = 1e-3  # a count k / 52 in float32 is k to within 1e-5 after scaling
_JACK, _SEVEN = 9, 5


def _counts(values: list[float], name: str) -> list[int]:
    """Sizes stored as k / 52, back as ints 0..52; anything else is not such a vector."""
    counts = [round(v * SIZE_SCALE) for v in values]
    if any(abs(v * SIZE_SCALE - c) > _COUNT_TOLERANCE for v, c in zip(values, counts)):
        raise ValueError(f"{name} holds {values}, not card counts / 52")
    return counts


@functools.lru_cache(maxsize=64)
def _bit_checks(num_players: int, num_deals: int,
                version: int = LAYOUT_VERSION) -> tuple[np.ndarray, tuple]:
    """The positions of every binary value in the layout, and the one-hot segments'
    ``(name, start, stop)`` (cached: decoding is on the bots' per-move path)."""
    layout = Layout.of(num_players, num_deals, version)
    positions = [np.arange(layout.offsets[n].start, layout.offsets[n].stop)
                 for n in BINARY_SEGMENTS if n in layout.offsets]
    one_hots = tuple((n, layout.offsets[n].start, layout.offsets[n].stop)
                     for n in ONE_HOT_SEGMENTS if n in layout.offsets)
    return np.concatenate(positions), one_hots


_layout = functools.lru_cache(maxsize=64)(Layout.of)  # (num_players, num_deals, version)


def _check_bits(vec: np.ndarray, num_players: int, num_deals: int, where: str,
                version: int = LAYOUT_VERSION) -> None:
    """Only 0/1 in the binary segments, exactly one 1 in each one-hot, at most one top card:
    a vector decoded with the wrong ``num_players``/``num_deals`` usually breaks one."""
    positions, one_hots = _bit_checks(num_players, num_deals, version)
    bits = vec[positions]
    if not ((bits == 0.0) | (bits == 1.0)).all():
        layout = Layout.of(num_players, num_deals, version)
        pos = int(positions[np.flatnonzero((bits != 0.0) & (bits != 1.0))[0]])
        name = next(n for n, s in layout.offsets.items() if s.start <= pos < s.stop)
        raise ValueError(f"{where}: segment {name!r} must hold only 0/1, found {vec[pos]:g}")
    for name, start, stop in one_hots:
        ones = vec[start:stop].sum()
        if ones != 1.0:
            raise ValueError(f"{where}: segment {name!r} must be one-hot, found {ones:g} ones")


def _check_position(out: dict, where: str) -> None:
    """Facts that hold in every position the rules reach, final ones included (cards add up
    to 52, the top card is on the pile and sets the suit unless it is a Jack, a nomination
    follows a Jack, pending sevens lie on a 7). Not "phase ace means an Ace on top": going
    out in the Ace's extra play leaves the phase as it was."""
    hand, discard, top = out["hand"], set(out["discard"]), out["top_card"]
    sizes = out["hand_sizes"]
    problems = []
    if sum(sizes) + out["stock_size"] + len(discard) != NUM_CARDS:
        problems.append(f"hand sizes {sizes} + stock {out['stock_size']} + discard "
                        f"{len(discard)} do not add up to 52 cards")
    if sizes[0] != len(hand):
        problems.append(f"the observer holds {len(hand)} cards but its hand size says {sizes[0]}")
    if discard.intersection(hand):
        problems.append("a card is both in the hand and on the discard pile")
    if (top is None) != (not discard):
        problems.append("the top card and the discard pile disagree")
    elif top is not None and top not in discard:
        problems.append("the top card is not on the discard pile")
    rank = None if top is None else top % 13
    if rank is not None and rank != _JACK and out["active_suit"] != top // 13:
        problems.append("the active suit is not the top card's suit")
    if out["phase"] == "nominate" and rank != _JACK:
        problems.append("phase nominate without a Jack on top")
    if out["pending_sevens"] and rank != _SEVEN:
        problems.append("sevens pending without a 7 on top")
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))


def decode_observation(vector, num_players: int, num_deals: int = 1,
                       version: int = LAYOUT_VERSION) -> dict:
    """A plain dict of what an observation vector of layout ``version`` says
    (docs/environment.md).

    The vector is checked first: the right length, 0/1 only in the bit segments, one-hots
    with one 1, counts that are counts, and a position the rules can reach. So a vector
    read with the wrong ``num_players``/``num_deals`` (a 3-player 2-deal vector and a
    4-player 1-deal one are both 188 long) is a ``ValueError`` rather than a misreading,
    save in the rare positions that fit both layouts: keep the table size with a stored
    vector."""
    version = check_layout_version(version)
    vec = np.asarray(vector, dtype=np.float64)
    layout = _layout(num_players, num_deals, version)
    if vec.shape != (layout.size,):
        others = [v for v in LAYOUT_VERSIONS
                  if v != version and (_layout(num_players, num_deals, v).size,) == vec.shape]
        hint = f" (that is layout version {others[0]}'s size)" if others else ""
        raise ValueError(
            f"observation has shape {vec.shape}; layout version {version} for {num_players} "
            f"players and {num_deals} deals needs ({layout.size},){hint}"
        )
    where = (f"not an observation of {num_players} players and {num_deals} deal(s)"
             + (f" (layout version {version})" if version else ""))
    if not (vec >= 0.0).all() or not (vec <= 1.0).all():  # NaN fails both
        raise ValueError(f"{where}: values must lie in [0, 1]")
    _check_bits(vec, num_players, num_deals, where, version)
    o = layout.offsets
    # After the checks every bit is exactly 0 or 1 and every one-hot has one 1.
    ones = np.flatnonzero(vec).tolist()
    at = {name: [i - s.start for i in ones if s.start <= i < s.stop]
          for name, s in o.items() if name in BINARY_SEGMENTS}
    if len(at["top_card"]) > 1:
        raise ValueError(f"{where}: segment 'top_card' has more than one card")
    values = vec.tolist()
    out = {
        "hand": at["hand"],
        "top_card": at["top_card"][0] if at["top_card"] else None,
        "active_suit": at["active_suit"][0],
        "pending_sevens": at["pending_sevens"][0],
        "phase": PHASE_NAMES[at["phase"][0]],
        "has_drawn": bool(at["has_drawn"]),
        "direction": 1 if at["direction"] else -1,
        "hand_sizes": _counts(values[o["hand_sizes"]], f"{where}: hand_sizes"),
        "stock_size": _counts(values[o["stock_size"]], f"{where}: stock_size")[0],
        "discard": at["discard"],
        "drew_on_suit": [[b - 4 * k for b in at["drew_on_suit"] if 4 * k <= b < 4 * k + 4]
                         for k in range(num_players - 1)],
    }
    _check_position(out, where)
    if num_deals > 1:
        scores = values[o["scores"]]
        if max(scores) >= 1.0:
            raise ValueError(f"{where}: scores t / (t + 100) must be below 1")
        out["deal"] = at["deal"][0]
        out["scores"] = [int(round(SCORE_SCALE * v / (1.0 - v))) for v in scores]
    if version >= 1:
        out.update(_decode_public(vec, layout, at, where))
    return out


def _scaled_ints(values: np.ndarray, scale: float, name: str) -> list[int]:
    """Values stored as i / scale, back as ints; anything else is a ValueError."""
    ints = np.rint(values * scale)
    if (np.abs(values * scale - ints) > _COUNT_TOLERANCE).any():
        raise ValueError(f"{name} holds values that are not multiples of 1/{scale:g}")
    return ints.astype(int).tolist()


def _decode_public(vec: np.ndarray, layout: Layout, at: dict, where: str) -> dict:
    """Layout 1's public record: the per-opponent summary and the event window
    (``(seat, kind, value)`` tuples, oldest first, see :mod:`pis_env.events`)."""
    o, n = layout.offsets, layout.num_players
    k = n - 1

    def per_opponent(name: str, width: int) -> list[list[int]]:
        return [[b - width * i for b in at[name] if width * i <= b < width * (i + 1)]
                for i in range(k)]

    nominated = per_opponent("opp_nominated", 4)
    if any(len(x) > 1 for x in nominated):
        raise ValueError(f"{where}: segment 'opp_nominated' has two suits for one opponent")
    seats = _scaled_ints(vec[o["event_seat"]], SEAT_SCALE, f"{where}: event_seat")
    codes = _scaled_ints(vec[o["event_action"]], CODE_SCALE, f"{where}: event_action")
    counts = _counts(vec[o["event_count"]].tolist(), f"{where}: event_count")
    used = sum(1 for s in seats if s)
    if any(seats[used:]) or any(codes[used:]) or any(counts[used:]):
        raise ValueError(f"{where}: the event log has a gap (empty slots come last)")
    events = []
    for seat, code, count in zip(seats[:used], codes[:used], counts[:used]):
        if not 1 <= seat <= n or not 1 <= code <= NUM_EVENT_CODES:
            raise ValueError(f"{where}: event (seat {seat - 1}, code {code - 1}) is out of "
                             f"range for {n} players")
        counted = kind_of(code - 1) in ("draw", "penalty")
        if counted != (count > 0):
            raise ValueError(f"{where}: event code {code - 1} with card count {count}")
        events.append(event_tuple(seat - 1, code - 1, count))
    v = float(vec[o["events_dropped"]][0])
    if v >= 1.0:
        raise ValueError(f"{where}: events_dropped d / (d + 16) must be below 1")
    dropped = int(round(DROPPED_SCALE * v / (1.0 - v)))
    if dropped and used < len(seats):
        raise ValueError(f"{where}: events were dropped from a log that is not full")
    return {
        "opp_drawn": _counts(vec[o["opp_drawn"]].tolist(), f"{where}: opp_drawn"),
        "opp_drawn_since_play": _counts(vec[o["opp_drawn_since_play"]].tolist(),
                                        f"{where}: opp_drawn_since_play"),
        "opp_refused_suits": per_opponent("opp_refused_suits", 4),
        "opp_refused_ranks": per_opponent("opp_refused_ranks", 13),
        "opp_nominated": [x[0] if x else None for x in nominated],
        "events": events,
        "events_dropped": dropped,
    }

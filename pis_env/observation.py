"""The observation vector: one declared table of named segments, used by both the encoder
and ``decode_observation`` (OpenSpiel's observer is the model).

Every value lies in [0, 1]. Counts are scaled so that they decode exactly: hand and stock
sizes by 1/52; match totals are squashed as ``t / (t + 100)``, which is unbounded in
``t`` yet stays inside the box. Seats are relative: index 0 of every per-player segment
is the observer, then the players to its left in clockwise order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cards import NUM_CARDS
from .engine import PHASE_NAMES, GameState

#: Bumped whenever the layout or the rules change (the env is ``pis_yedili_v{N}``).
LAYOUT_VERSION = 0
MAX_PENDING_SEVENS = 4
SIZE_SCALE = 52.0
SCORE_SCALE = 100.0


def segment_table(num_players: int, num_deals: int = 1) -> list[tuple[str, int]]:
    """The ``(name, length)`` segments of the observation, in order."""
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
    return segments


@dataclass(frozen=True)
class Layout:
    num_players: int
    num_deals: int
    offsets: dict[str, slice]
    size: int

    @classmethod
    def of(cls, num_players: int, num_deals: int = 1) -> Layout:
        offsets, pos = {}, 0
        for name, length in segment_table(num_players, num_deals):
            offsets[name] = slice(pos, pos + length)
            pos += length
        return cls(num_players, num_deals, offsets, pos)


def _two_masks_bits(low: int, high: int) -> np.ndarray:
    """Bits 0..63 of ``low`` then bits 0..63 of ``high`` as uint8 0/1 (one unpack call)."""
    packed = ((high << 64) | low).to_bytes(16, "little")
    return np.unpackbits(np.frombuffer(packed, dtype=np.uint8), bitorder="little")


class ObservationEncoder:
    """Writes a state, seen from one seat, into a float32 vector of the layout."""

    def __init__(self, num_players: int, num_deals: int = 1):
        self.layout = Layout.of(num_players, num_deals)
        o = self.layout.offsets
        self._hand = o["hand"]
        self._top = o["top_card"].start
        self._suit = o["active_suit"].start
        self._pending = o["pending_sevens"].start
        self._phase = o["phase"].start
        self._drawn = o["has_drawn"].start
        self._direction = o["direction"].start
        self._sizes = o["hand_sizes"].start
        self._stock = o["stock_size"].start
        self._discard = o["discard"]
        self._drew = o["drew_on_suit"].start
        self._deal = o["deal"].start if "deal" in o else None
        self._scores = o["scores"].start if "scores" in o else None

    def encode(self, state: GameState, observer: int) -> np.ndarray:
        """The observation of ``observer`` as a new float32 array."""
        buf = np.zeros(self.layout.size, dtype=np.float32)
        n = state.num_players
        bits = _two_masks_bits(state.hands[observer], state.pile_mask)
        buf[self._hand] = bits[:52]
        buf[self._discard] = bits[64:116]
        if state.top >= 0:
            buf[self._top + state.top] = 1.0
        buf[self._suit + state.active_suit] = 1.0
        buf[self._pending + state.pending_sevens] = 1.0
        buf[self._phase + state.phase] = 1.0
        if state.has_drawn and state.current == observer:
            buf[self._drawn] = 1.0
        if state.direction == 1:
            buf[self._direction] = 1.0
        hands = state.hands
        drew_on = state.drew_on
        sizes = self._sizes
        for k in range(n):
            seat = (observer + k) % n
            buf[sizes + k] = hands[seat].bit_count() / SIZE_SCALE
            if k and drew_on[seat]:
                suits = drew_on[seat]
                base = self._drew + 4 * (k - 1)
                for s in range(4):
                    if (suits >> s) & 1:
                        buf[base + s] = 1.0
        buf[self._stock] = len(state.stock) / SIZE_SCALE
        if self._deal is not None:
            buf[self._deal + state.deal_index] = 1.0
            for k in range(n):
                t = state.totals[(observer + k) % n]
                buf[self._scores + k] = t / (t + SCORE_SCALE)
        return buf


def _one_hot_index(values: np.ndarray) -> int | None:
    hits = np.flatnonzero(values > 0.5)
    return int(hits[0]) if len(hits) else None


def decode_observation(vector, num_players: int, num_deals: int = 1) -> dict:
    """A plain dict of what an observation vector says (SPEC §5)."""
    vec = np.asarray(vector, dtype=np.float64)
    layout = Layout.of(num_players, num_deals)
    if vec.shape != (layout.size,):
        raise ValueError(
            f"observation has shape {vec.shape}; {num_players} players and {num_deals} deals "
            f"need ({layout.size},)"
        )
    seg = {name: vec[s] for name, s in layout.offsets.items()}
    drew = seg["drew_on_suit"].reshape(num_players - 1, 4)
    out = {
        "hand": np.flatnonzero(seg["hand"] > 0.5).tolist(),
        "top_card": _one_hot_index(seg["top_card"]),
        "active_suit": _one_hot_index(seg["active_suit"]),
        "pending_sevens": _one_hot_index(seg["pending_sevens"]),
        "phase": PHASE_NAMES[_one_hot_index(seg["phase"])],
        "has_drawn": bool(seg["has_drawn"][0] > 0.5),
        "direction": 1 if seg["direction"][0] > 0.5 else -1,
        "hand_sizes": [int(round(v * SIZE_SCALE)) for v in seg["hand_sizes"]],
        "stock_size": int(round(seg["stock_size"][0] * SIZE_SCALE)),
        "discard": np.flatnonzero(seg["discard"] > 0.5).tolist(),
        "drew_on_suit": [np.flatnonzero(row > 0.5).tolist() for row in drew],
    }
    if num_deals > 1:
        out["deal"] = _one_hot_index(seg["deal"])
        out["scores"] = [int(round(SCORE_SCALE * v / (1.0 - v))) for v in seg["scores"]]
    return out

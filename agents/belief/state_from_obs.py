"""Rebuild a ``GameState`` that agrees with everything one player can see.

A search bot only gets the observation dict (docs/environment.md). ``ObservedPosition`` turns its
decoded fields plus the table's rules into engine positions: the observer's hand, the top
card, the discard pile, every hand size, the stock size, the active suit, the live chain
of sevens, the phase, the has-drawn flag and the direction are copied; the cards the
observer cannot see (opponents' hands and the stock) are dealt at random from the unseen
cards, anew for every ``sample``. ``drew_on_suit`` hints (an opponent drew while a suit
was active and has not played that suit since: it probably holds none) may bias that deal.

Seats are relative, as in the observation: the observer is seat 0 of the rebuilt state,
seat ``k`` is the ``k``-th player to its left, and it is seat 0's turn. The rebuilt state is
one deal (``num_deals=1``): a search looks no further than the end of the current deal.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pis_env.cards import FULL_DECK, NUM_CARDS, cards_of, mask_of
from pis_env.engine import PHASE_NAMES, GameState
from pis_env.observation import decode_observation
from pis_env.rules import Rules

#: Relative chance that an opponent holds a card of a suit it is hinted to be void in.
DEFAULT_VOID_WEIGHT = 0.15


def search_rules(rules: Rules | Mapping | None = None, num_players: int | None = None,
                 max_turns: int | None = None) -> Rules:
    """The rules of a one-deal search position: the table's rules with ``num_deals=1``.

    ``max_turns`` (a rollout horizon counted from the rebuilt position) replaces the
    table's own when given."""
    if rules is None:
        rules = Rules()
    elif isinstance(rules, Mapping):
        rules = Rules.from_options(**rules)
    changes: dict = {"num_deals": 1, "illegal_action": "raise"}
    if num_players is not None:
        changes["num_players"] = num_players
    if max_turns is not None:
        changes["max_turns"] = max_turns
    return rules.replace(**changes)


class ObservedPosition:
    """What one observation says about the position, ready to be sampled many times.

    ``decoded`` is ``decode_observation``'s dict (or pass an ``observe()`` dict to
    ``from_observation``). ``sample(rng)`` returns a fresh ``GameState`` in which the hidden
    cards are dealt from ``rng``; the observer (seat 0) is to move."""

    def __init__(self, decoded: Mapping, rules: Rules | Mapping | None = None,
                 void_weight: float | None = DEFAULT_VOID_WEIGHT, max_turns: int | None = None,
                 own_drew_on: int = 0):
        sizes = list(decoded["hand_sizes"])
        n = len(sizes)
        self.rules = search_rules(rules, n, max_turns)
        self.num_players = n
        hand = mask_of(decoded["hand"])
        discard = mask_of(decoded["discard"])
        top = decoded["top_card"]
        if hand & discard:
            raise ValueError("observation lists a card both in hand and on the discard pile")
        if hand.bit_count() != sizes[0]:
            raise ValueError("observer's hand does not match its hand size")
        if top is not None and not (discard >> top) & 1:
            raise ValueError("the top card is not on the discard pile")
        self.hand = hand
        self.discard = discard
        self.top = -1 if top is None else int(top)
        self.sizes = sizes
        self.stock_size = int(decoded["stock_size"])
        unseen = FULL_DECK & ~hand & ~discard
        self.unseen = cards_of(unseen)
        if len(self.unseen) != sum(sizes[1:]) + self.stock_size:
            raise ValueError(
                f"{len(self.unseen)} unseen cards but opponents hold {sum(sizes[1:])} and the "
                f"stock has {self.stock_size}: the observation does not add up to 52 cards"
            )
        hints = decoded.get("drew_on_suit") or [[] for _ in range(n - 1)]
        # 4-bit suit masks per seat; the observer's own is not in its observation, but a bot
        # that remembers its draws may pass it (``own_drew_on``).
        self.void_hints = [int(own_drew_on)] + [mask_of(row) for row in hints]
        self.void_weight = void_weight
        self._weights = None
        if void_weight is not None and void_weight != 1.0 and any(self.void_hints[1:]):
            self._weights = {}
            unseen_arr = np.array(self.unseen)
            suits = unseen_arr // 13
            for k in range(1, n):
                v = self.void_hints[k]
                if v:
                    w = np.where([(v >> int(s)) & 1 for s in suits], void_weight, 1.0)
                    self._weights[k] = w
        self.active_suit = int(decoded["active_suit"])
        self.pending_sevens = int(decoded["pending_sevens"])
        self.phase = PHASE_NAMES.index(decoded["phase"])
        self.has_drawn = bool(decoded["has_drawn"])
        self.direction = int(decoded["direction"])
        self._template = self._build_template(decoded)

    @classmethod
    def from_observation(cls, observation: Mapping, num_players: int, num_deals: int = 1,
                         rules: Rules | Mapping | None = None, **kwargs) -> ObservedPosition:
        vector = observation["observation"] if isinstance(observation, Mapping) else observation
        return cls(decode_observation(vector, num_players, num_deals), rules, **kwargs)

    # ------------------------------------------------------------------ the fixed part
    def _build_template(self, decoded: Mapping) -> GameState:
        n = self.num_players
        state = GameState(self.rules, deck=list(range(NUM_CARDS)), dealer=n - 1)
        state.hands = [0] * n
        state.hands[0] = self.hand
        state.stock = []
        top = self.top
        pile = [c for c in cards_of(self.discard) if c != top]
        if top >= 0:
            pile.append(top)
        state.pile = pile
        state.pile_mask = self.discard
        state.top = top
        state.active_suit = int(decoded["active_suit"])
        state.pending_sevens = int(decoded["pending_sevens"])
        phase = PHASE_NAMES.index(decoded["phase"])
        state.phase = phase
        state.has_drawn = bool(decoded["has_drawn"])
        state.direction = int(decoded["direction"])
        state.current = 0
        state.opened = self._opened(phase, len(pile))
        state.drew_on = list(self.void_hints)
        state.turns = 0
        state.deal_over = False
        state.end_reason = None
        state.charges = None
        state.winners = None
        state.history = []
        state.histories = [state.history]
        state._decks_left = []
        state._legal = None
        return state

    def _opened(self, phase: int, plays: int) -> int:
        """Which seats have played their opening club (the engine's ``opened`` bits)."""
        n = self.num_players
        everyone = (1 << n) - 1
        if self.rules.opening == "opener":
            return everyone if plays else 0
        # "first_round": opening clubs have no effect, so the first round goes clockwise
        # and the players who opened are the ``plays`` seats just before the observer.
        if PHASE_NAMES[phase] != "opening":
            return everyone
        opened = 0
        for k in range(1, min(plays, n - 1) + 1):
            opened |= 1 << ((-k) % n)
        return opened

    def matches(self, state: GameState) -> bool:
        """Whether ``state`` (seats relative to the observer, observer to move) shows the
        observer exactly what this observation shows."""
        n = self.num_players
        hands = state.hands
        if (state.deal_over or state.current != 0 or hands[0] != self.hand
                or state.top != self.top or state.pile_mask != self.discard
                or state.active_suit != self.active_suit
                or state.pending_sevens != self.pending_sevens or state.phase != self.phase
                or state.has_drawn != self.has_drawn or state.direction != self.direction
                or len(state.stock) != self.stock_size):
            return False
        sizes = self.sizes
        hints = self.void_hints
        drew_on = state.drew_on
        for k in range(1, n):
            if hands[k].bit_count() != sizes[k] or drew_on[k] != hints[k]:
                return False
        return True

    # ------------------------------------------------------------------ sampling
    def deal_hidden(self, rng: np.random.Generator) -> tuple[list[int], list[int]]:
        """One random deal of the unseen cards: (hand masks by seat, stock order)."""
        unseen = self.unseen
        n = self.num_players
        hands = [0] * n
        hands[0] = self.hand
        if self._weights is None:
            order = rng.permutation(len(unseen)).tolist()
            pos = 0
            for k in range(1, n):
                size = self.sizes[k]
                hands[k] = mask_of(unseen[i] for i in order[pos:pos + size])
                pos += size
            stock = [unseen[i] for i in order[pos:]]
            return hands, stock
        # Hinted seats first, each drawing its cards with void suits down-weighted.
        available = np.ones(len(unseen), dtype=bool)
        seats = sorted(range(1, n), key=lambda k: (k not in self._weights, k))
        for k in seats:
            size = self.sizes[k]
            if not size:
                continue
            idx = np.flatnonzero(available)
            if k in self._weights:
                w = self._weights[k][idx]
                chosen = rng.choice(idx, size=size, replace=False, p=w / w.sum())
            else:
                chosen = rng.choice(idx, size=size, replace=False)
            available[chosen] = False
            hands[k] = mask_of(unseen[i] for i in chosen.tolist())
        rest = np.flatnonzero(available)
        stock = [unseen[i] for i in rng.permutation(rest).tolist()]
        return hands, stock

    def sample(self, rng: np.random.Generator) -> GameState:
        """A position consistent with the observation; hidden cards dealt from ``rng``
        (which the state also keeps for its own future draws, e.g. reshuffles)."""
        hands, stock = self.deal_hidden(rng)
        state = self._template.copy(rng)
        state.hands = hands
        state.stock = stock
        state._legal = None
        return state


def state_from_observation(observation: Mapping, num_players: int, num_deals: int = 1,
                           rules: Rules | Mapping | None = None,
                           rng: np.random.Generator | int | None = None,
                           void_weight: float | None = DEFAULT_VOID_WEIGHT) -> GameState:
    """One ``GameState`` consistent with an ``observe()`` dict (observer = seat 0, to move).

    ``observation`` may also be ``decode_observation``'s dict."""
    if "observation" in observation:
        decoded = decode_observation(observation["observation"], num_players, num_deals)
    else:
        decoded = observation
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    return ObservedPosition(decoded, rules, void_weight=void_weight).sample(rng)


__all__ = [
    "DEFAULT_VOID_WEIGHT", "ObservedPosition", "search_rules", "state_from_observation",
]

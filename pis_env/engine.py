"""The rules engine: a pure state machine for Pis Yedili deals and matches.

No PettingZoo or Gymnasium in here (OpenSpiel's ``State`` is the model): a ``GameState``
knows whose turn it is, which action ids are legal (RULES.md, Actions), how to apply one, when a
deal ends and who is charged what. Hands are 52-bit integers, so the legal set is a few
bit operations and a clone is a handful of list copies; that is what makes the engine
fast enough for search bots and large tournaments.

Randomness comes only from the state's own ``numpy.random.Generator``: the same seed
gives the same deals and stock order whatever else the process does with random numbers.
Every chance outcome is also recorded (``deal_decks``, ``deal_dealers``, ``deal_reshuffles``)
and can be given back (``deck``, ``dealer``, ``reshuffles``), which is what lets a hand
history replay a match exactly (``pis_env.history``).
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Sequence

import numpy as np

from . import scoring
from .actions import (  # noqa: F401  (re-exported: the engine's action ids)
    DRAW,
    DRAW_BIT,
    NOMINATE_BASE,
    NOMINATE_BITS,
    NUM_ACTIONS,
    PASS,
    PASS_BIT,
    Action,
)
from .cards import (
    ACE,
    CARDS_PER_HAND,
    CLUBS,
    EIGHT,
    FULL_DECK,
    JACK,
    JACKS,
    NUM_CARDS,
    RANK_MASKS,
    SEVEN,
    SEVENS,
    SUIT_MASKS,
    SUIT_NAMES,
    TEN,
    card_name,
    cards_of,
    parse_card,
    points_of,
)
from .rules import Rules

OPENING, PLAY, NOMINATE, ACE_PHASE = range(4)
PHASE_NAMES = ("opening", "play", "nominate", "ace")

_ACE_EXTRA = RANK_MASKS[ACE] | JACKS

# Why a deal ended.
GOING_OUT, EMPTY_STOCK, ILLEGAL, TRUNCATED = "going_out", "empty_stock", "illegal", "truncated"


class IllegalActionError(ValueError):
    """An action that is not legal in the current position (the state is unchanged)."""


class ChanceError(ValueError):
    """A state replaying given reshuffles (``GameState(reshuffles=...)``) needs one that was
    not given, or was given one that does not fit the pile. The action that raised it is
    half applied: the state is no longer usable."""


def refill_size(reshuffle: bool, pile_size: int) -> int:
    """Cards the stock gets back when it runs dry: the pile under its top card, when the
    variant reshuffles and the pile has more than its top; 0 ends the deal. The one
    statement of the rule in Python (``GameState`` and ``pis_env.events.DealReplay``)."""
    return pile_size - 1 if reshuffle and pile_size >= 2 else 0


def action_name(action: int) -> str:
    """A short human name for an action id: ``"7C"``, ``"nominate hearts"``, ``"draw"``."""
    if 0 <= action < NUM_CARDS:
        return card_name(action)
    if NOMINATE_BASE <= action < DRAW:
        return "nominate " + SUIT_NAMES[action - NOMINATE_BASE]
    if action == DRAW:
        return "draw"
    if action == PASS:
        return "pass"
    return f"<invalid action {action}>"


def _is_sequence(value) -> bool:
    """A list, tuple or array (not a string): how a list of decks is told from one deck."""
    return not isinstance(value, (str, bytes)) and hasattr(value, "__len__")


def parse_deck(deck: Sequence[int | str], name: str = "deck") -> list[int]:
    """Card ids of a stacked deck; ``ValueError`` unless it is a permutation of the 52 cards.
    ``name`` is how errors call the deck (``"deck"``, ``"deck[2]"``). The length is checked
    before any card is parsed and the rest is linear, so a huge list costs nothing."""
    if not _is_sequence(deck):
        raise ValueError(f"{name} must be a sequence of 52 card ids or names, got {deck!r}")
    if len(deck) != NUM_CARDS:
        raise ValueError(f"{name} must hold each of the 52 cards exactly once: got "
                         f"{len(deck)} cards")
    ids = []
    for i, card in enumerate(deck):
        try:
            ids.append(parse_card(card))
        except ValueError as e:
            raise ValueError(f"{name}[{i}]: {e}") from None
    counts = [0] * NUM_CARDS
    for c in ids:
        counts[c] += 1
    missing = [c for c in range(NUM_CARDS) if counts[c] == 0]
    if missing:
        dupes = [c for c in range(NUM_CARDS) if counts[c] > 1]
        raise ValueError(
            f"{name} must hold each of the 52 cards exactly once: missing "
            f"{[card_name(c) for c in missing]}, duplicated {[card_name(c) for c in dupes]}"
        )
    return ids


class ActionLog(Sequence):
    """A deal's ``(player, action)`` pairs as a persistent list: ``copy()`` and ``append``
    are O(1) and a copy shares every earlier entry with its original.

    WHY: a search bot clones the state thousands of times per decision and a replay keeps
    a state per position; copying the whole action list each time made both cost the
    history's length (quadratic memory for a long replay). Each entry is a node
    ``(parent, pair)``; a copy is a second reference to the same node, so appending to one
    never changes the other. Reading it (iteration, indexing, ``==`` with a list) walks the
    nodes, which is linear like reading a list; ``[-1]`` is O(1)."""

    __slots__ = ("_node", "_len")

    def __init__(self, pairs=()):
        self._node = None
        self._len = 0
        for pair in pairs:
            self.append(pair)

    def append(self, pair: tuple[int, int]) -> None:
        self._node = (self._node, pair)
        self._len += 1

    def copy(self) -> ActionLog:
        new = ActionLog.__new__(ActionLog)
        new._node = self._node
        new._len = self._len
        return new

    def __len__(self) -> int:
        return self._len

    def _pairs(self) -> list[tuple[int, int]]:
        out: list = [None] * self._len
        node, i = self._node, self._len
        while node is not None:
            i -= 1
            node, out[i] = node
        return out

    def __iter__(self):
        return iter(self._pairs())

    def __getitem__(self, index):
        if index == -1 and isinstance(index, int) and self._node is not None:
            return self._node[1]
        return self._pairs()[index]

    def __eq__(self, other):
        # (a class that defines __eq__ and no __hash__ is unhashable, like a list)
        if isinstance(other, (ActionLog, list, tuple)):
            return self._pairs() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"ActionLog({self._pairs()!r})"

    def __reduce__(self):
        # a flat list, not the nested nodes: pickling those would recurse per entry
        return (ActionLog, (self._pairs(),))


class GameState:
    """One match of ``rules.num_deals`` deals (one deal by default), position by position.

    Public fields are read by the observation encoder and the bots; change them only
    through ``apply``. ``hands[i]`` is player i's hand as a 52-bit mask; ``stock[-1]`` is
    the next card drawn; ``pile`` is the discard pile, bottom first. ``deal_decks``,
    ``deal_dealers`` and ``deal_reshuffles`` record, per deal, everything chance decided (a
    reshuffle's new stock first drawn first).
    """

    __slots__ = (
        "rules", "num_players", "rng", "_draw_rule", "_first_round", "_double", "_continue",
        "_reshuffle", "_nominate_other", "_max_turns",
        "hands", "stock", "pile", "pile_mask", "top", "active_suit", "pending_sevens", "phase",
        "has_drawn", "direction", "current", "dealer", "opened", "drew_on", "turns",
        "deal_over", "match_over", "end_reason", "charges", "winners", "deal_index",
        "totals", "history", "histories", "deal_decks", "deal_dealers", "_legal", "_decks_left",
        "deal_reshuffles", "_scripted",
    )
    # The types of the fields that change type during a deal (for type checkers; the
    # slots above hold the values).
    pile: list[int]
    end_reason: str | None
    charges: list[int] | None
    winners: list[bool] | None
    _legal: int | None
    _scripted: list[list[list[int]]] | None

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        deck: Sequence | None = None,
        dealer: int | None = None,
        rng: np.random.Generator | None = None,
        reshuffles: Sequence[Sequence[Sequence[int]]] | None = None,
    ):
        """Start a match. ``deck`` is one stacked deck (the first deal) or a list of
        ``num_deals`` decks; ``dealer`` the first deal's dealer seat. Whatever is not given
        is drawn from ``rng`` (or ``np.random.default_rng(seed)``).

        ``reshuffles`` (a replay's, one list per deal) replaces the generator's reshuffles:
        entry ``[k][j]`` is the new stock of deal ``k``'s ``j``-th reshuffle, first drawn
        first (the order ``deal_reshuffles`` records). A reshuffle it lacks raises
        ``ChanceError``."""
        rules = rules if rules is not None else Rules()
        n = rules.num_players
        self._set_rules(rules)
        self.rng = rng if rng is not None else np.random.default_rng(seed)

        decks: list[list[int]] = []
        if deck is not None:
            if _is_sequence(deck) and len(deck) > 0 and _is_sequence(deck[0]):
                if len(deck) > rules.num_deals:
                    raise ValueError(
                        f"got {len(deck)} decks for a match of {rules.num_deals} deals"
                    )
                decks = [parse_deck(d, f"deck[{k}]") for k, d in enumerate(deck)]
            else:
                decks = [parse_deck(deck)]
        if dealer is not None:
            if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)):
                raise ValueError(f"dealer must be a seat index 0..{n - 1}, got {dealer!r}")
            if not 0 <= dealer < n:
                raise ValueError(f"dealer must be a seat index 0..{n - 1}, got {dealer}")
        self._decks_left = decks
        self.deal_index = -1
        self.totals = [0] * n
        self.match_over = False
        self.deal_decks: list[list[int]] = []
        self.deal_dealers: list[int] = []
        self.histories: list[ActionLog] = []
        self.deal_reshuffles: list[list[list[int]]] = []
        self._scripted = None
        if reshuffles is not None:
            self._scripted = [[[int(c) for c in order] for order in deal] for deal in reshuffles]
        first_dealer = int(dealer) if dealer is not None else None
        self._start_deal(first_dealer)

    def _set_rules(self, rules: Rules) -> None:
        """The rules, and the options the hot paths read as plain ints and bools."""
        self.rules = rules
        self.num_players = rules.num_players
        self._draw_rule = ("free", "one", "until_playable").index(rules.draw_rule)
        self._first_round = rules.opening == "first_round"
        self._double = rules.seven_penalty == "double"
        self._continue = rules.after_penalty == "continue"
        self._reshuffle = rules.empty_stock == "reshuffle"
        self._nominate_other = rules.nominate == "other"
        self._max_turns = rules.max_turns or 0

    @classmethod
    def from_position(cls, rules: Rules, *, hands: Sequence[int], stock: Sequence[int],
                      pile: Sequence[int], top: int, active_suit: int, pending_sevens: int,
                      phase: int, has_drawn: bool, direction: int, current: int, dealer: int,
                      opened: int, drew_on: Sequence[int], turns: int, deal_index: int,
                      totals: Sequence[int], end_reason: str | None = None,
                      charges: Sequence[int] | None = None,
                      winners: Sequence[bool] | None = None, match_over: bool = False,
                      decks_left: Sequence[Sequence[int]] = (),
                      rng: np.random.Generator | None = None) -> GameState:
        """A state in a given position, from its public fields (``stock[-1]`` drawn next,
        ``pile`` bottom first, ``hands`` and ``drew_on`` per seat). What a position does
        not hold starts empty: the action history, the dealt decks and the record of
        reshuffles (so a history cannot be exported from it). ``decks_left``: stacked
        decks of the deals still to come; ``rng``: where its future randomness comes from
        (default: fresh entropy). The batched engine's ``game_state`` builds its states
        this way."""
        state = object.__new__(cls)
        state._set_rules(rules)
        state.rng = rng if rng is not None else np.random.default_rng()
        state.hands = [int(h) for h in hands]
        state.stock = [int(c) for c in stock]
        state.pile = [int(c) for c in pile]
        state.pile_mask = 0
        for c in state.pile:
            state.pile_mask |= 1 << c
        state.top = int(top)
        state.active_suit = int(active_suit)
        state.pending_sevens = int(pending_sevens)
        state.phase = int(phase)
        state.has_drawn = bool(has_drawn)
        state.direction = int(direction)
        state.current = int(current)
        state.dealer = int(dealer)
        state.opened = int(opened)
        state.drew_on = [int(d) for d in drew_on]
        state.turns = int(turns)
        state.deal_over = end_reason is not None
        state.match_over = bool(match_over)
        state.end_reason = end_reason
        state.charges = None if charges is None else [int(c) for c in charges]
        state.winners = None if winners is None else [bool(w) for w in winners]
        state.deal_index = int(deal_index)
        state.totals = [int(t) for t in totals]
        state.history = ActionLog()
        state.histories = [ActionLog() for _ in range(state.deal_index)] + [state.history]
        state.deal_decks = []
        state.deal_dealers = []
        state._legal = None
        state._decks_left = [list(d) for d in decks_left]
        state._scripted = None
        return state

    # ------------------------------------------------------------------ dealing
    def _start_deal(self, dealer: int | None) -> None:
        n = self.num_players
        if self._decks_left:
            deck = self._decks_left.pop(0)
        else:
            deck = self.rng.permutation(NUM_CARDS).tolist()
        if dealer is None:
            dealer = int(self.rng.integers(n))
        self.deal_index += 1
        self.deal_decks.append(deck)
        self.deal_dealers.append(dealer)
        log = _reshuffle_log(self)
        if log is not None:
            log.append([])
        self.dealer = dealer
        hands = [0] * n
        for i in range(CARDS_PER_HAND * n):
            hands[(dealer + 1 + i) % n] |= 1 << deck[i]
        self.hands = hands
        self.stock = deck[CARDS_PER_HAND * n:][::-1]
        self.pile = []
        self.pile_mask = 0
        self.top = -1
        self.active_suit = CLUBS
        self.pending_sevens = 0
        self.phase = OPENING
        self.has_drawn = False
        self.direction = 1
        self.current = (dealer + 1) % n
        self.opened = 0
        self.drew_on = [0] * n
        self.turns = 0
        self.deal_over = False
        self.end_reason = None
        self.charges = None
        self.winners = None
        self.history = ActionLog()
        self.histories.append(self.history)
        self._legal = None

    def next_deal(self) -> None:
        """Deal the next deal of the match; the dealer moves one seat clockwise."""
        if not self.deal_over or self.match_over:
            raise RuntimeError("next_deal() is only valid after a deal of an unfinished match")
        self._start_deal((self.dealer + 1) % self.num_players)

    # ------------------------------------------------------------------ queries
    def legal_mask(self) -> int:
        """The legal action ids as a 58-bit integer (bit ``a`` set when ``a`` is legal)."""
        legal = self._legal
        if legal is not None:
            return legal
        if self.deal_over:
            legal = 0
        else:
            phase = self.phase
            hand = self.hands[self.current]
            if phase == PLAY:
                if self.pending_sevens:
                    legal = (hand & SEVENS) | DRAW_BIT
                else:
                    top = self.top
                    if top % 13 == JACK:
                        cards = hand & SUIT_MASKS[self.active_suit] & ~JACKS
                    else:
                        cards = hand & (SUIT_MASKS[self.active_suit] | RANK_MASKS[top % 13] | JACKS)
                    rule = self._draw_rule
                    if rule == 0:
                        legal = cards | DRAW_BIT | (PASS_BIT if self.has_drawn else 0)
                    elif rule == 1:
                        legal = cards | (PASS_BIT if self.has_drawn else DRAW_BIT)
                    else:
                        legal = cards if cards else DRAW_BIT
            elif phase == OPENING:
                clubs = hand & SUIT_MASKS[CLUBS]
                legal = clubs if clubs else DRAW_BIT
            elif phase == NOMINATE:
                legal = NOMINATE_BITS
                if self._nominate_other:
                    legal &= ~(1 << (NOMINATE_BASE + self.active_suit))
            else:  # the Ace's extra play: its suit or rank, or any Jack, or pass
                legal = (hand & (SUIT_MASKS[self.active_suit] | _ACE_EXTRA)) | PASS_BIT
        self._legal = legal
        return legal

    def legal_actions(self) -> list[int]:
        """The legal action ids, ascending (empty once the deal is over)."""
        return cards_of(self.legal_mask())

    def is_legal(self, action: int) -> bool:
        return 0 <= action < NUM_ACTIONS and (self.legal_mask() >> action) & 1 == 1

    @property
    def phase_name(self) -> str:
        return PHASE_NAMES[self.phase]

    def hand_points(self, player: int) -> int:
        return points_of(self.hands[player])

    def hand_sizes(self) -> list[int]:
        return [h.bit_count() for h in self.hands]

    # ------------------------------------------------------------------ acting
    def apply(self, action: int) -> None:
        """Apply a legal action of the current player. An illegal or out-of-range action
        raises ``IllegalActionError`` and changes nothing."""
        legal = self._legal if self._legal is not None else self.legal_mask()
        if type(action) is not int:
            if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
                raise IllegalActionError(self._illegal_message(action))
            action = int(action)
        if action < 0 or not (legal >> action) & 1:
            raise IllegalActionError(self._illegal_message(action))
        self._legal = None
        self.turns += 1
        self.history.append((self.current, action))
        if action < NUM_CARDS:
            self._play(action)
        elif action == DRAW:
            self._draw()
        elif action == PASS:
            self._advance(1)
        else:
            self.active_suit = action - NOMINATE_BASE
            self._advance(1)
        if self._max_turns and not self.deal_over and self.turns >= self._max_turns:
            self._end_deal(TRUNCATED, [0] * self.num_players, [False] * self.num_players)

    def _illegal_message(self, action) -> str:
        if self.deal_over:
            return f"action {action!r} is illegal: the deal is over"
        legal = self.legal_actions()
        return (
            f"action {action!r} ({action_name(action) if isinstance(action, int) else '?'}) "
            f"is illegal for player_{self.current} in phase {self.phase_name}; legal actions: "
            + ", ".join(f"{a} ({action_name(a)})" for a in legal)
        )

    def _play(self, card: int) -> None:
        p = self.current
        bit = 1 << card
        hand = self.hands[p] ^ bit
        self.hands[p] = hand
        self.pile.append(card)
        self.pile_mask |= bit
        self.top = card
        suit = card // 13
        rank = card - 13 * suit
        self.drew_on[p] &= ~(1 << suit)
        if self.phase == OPENING:  # the opening club: no effect
            self.opened |= 1 << p
            self.active_suit = suit
            self._advance(1)
            return
        if not hand:  # going out: the top card sets the suit, but no effect applies
            if rank != JACK:
                self.active_suit = suit
            charges, winners = scoring.going_out([points_of(h) for h in self.hands], p, rank)
            self._end_deal(GOING_OUT, charges, winners)
            return
        if rank == JACK:
            self.phase = NOMINATE  # the active suit stays until the nomination
            return
        self.active_suit = suit
        if rank == SEVEN:
            self.pending_sevens += 1
            self._advance(1)
        elif rank == EIGHT:
            self._advance(2)
        elif rank == TEN:
            self.direction = -self.direction
            self._advance(1)
        elif rank == ACE:
            self.phase = ACE_PHASE
        else:
            self._advance(1)

    def _draw(self) -> None:
        p = self.current
        if self.phase == PLAY and self.pending_sevens:
            k = self.pending_sevens
            count = 3 * (1 << (k - 1)) if self._double else 3 * k
            self.pending_sevens = 0
            if not self._take(p, count):
                return
            if self._continue:
                self.has_drawn = True
            else:
                self._advance(1)
            return
        self.drew_on[p] |= 1 << self.active_suit
        if self._take(p, 1):
            self.has_drawn = True

    def _take(self, player: int, count: int) -> bool:
        """Move ``count`` cards from the stock to a hand. The stock running dry reshuffles
        the pile (variant) or ends the deal; returns whether the deal goes on."""
        stock = self.stock
        hand = self.hands[player]
        for _ in range(count):
            hand |= 1 << stock.pop()
            if not stock:
                if not self._refill_stock():
                    self.hands[player] = hand
                    self._end_by_empty_stock()
                    return False
                stock = self.stock
        self.hands[player] = hand
        return True

    def _refill_stock(self) -> bool:
        if not refill_size(self._reshuffle, len(self.pile)):
            return False
        top = self.pile.pop()
        rest = self.pile
        log = _reshuffle_log(self)
        if getattr(self, "_scripted", None) is not None:
            self.stock = self._scripted_stock(rest, len(log[-1]) if log is not None else 0)
        else:
            self.stock = [rest[i] for i in self.rng.permutation(len(rest)).tolist()]
        if log is not None:
            log[-1].append(self.stock[::-1])
        self.pile = [top]
        self.pile_mask = 1 << top
        return True

    def _scripted_stock(self, rest: list[int], done: int) -> list[int]:
        """The new stock of this deal's reshuffle number ``done`` (0-based) from the given
        ``reshuffles``, checked against the cards under the top of the pile."""
        deal = self.deal_index
        scripted = self._scripted or []
        orders = scripted[deal] if deal < len(scripted) else []
        if done >= len(orders):
            raise ChanceError(
                f"deal {deal}: the stock ran out and must be reshuffled (reshuffle {done + 1}),"
                f" but only {len(orders)} reshuffle order(s) were given for this deal"
            )
        order = orders[done]
        if sorted(order) != sorted(rest):
            raise ChanceError(
                f"deal {deal}: reshuffle {done + 1} must order the {len(rest)} cards under the "
                f"top of the pile, {[card_name(c) for c in sorted(rest)]}; got {len(order)} "
                "other cards"
            )
        return order[::-1]

    def _advance(self, steps: int) -> None:
        n = self.num_players
        p = (self.current + steps * self.direction) % n
        self.current = p
        self.has_drawn = False
        if self._first_round:
            self.phase = PLAY if (self.opened >> p) & 1 else OPENING
        else:
            self.phase = PLAY if self.opened else OPENING

    # ------------------------------------------------------------------ deal end
    def _end_by_empty_stock(self) -> None:
        charges, winners = scoring.empty_stock([points_of(h) for h in self.hands])
        self._end_deal(EMPTY_STOCK, charges, winners)

    def _end_deal(self, reason: str, charges: list[int], winners: list[bool]) -> None:
        self.deal_over = True
        self.end_reason = reason
        self.charges = charges
        self.winners = winners
        self._legal = 0
        for i, c in enumerate(charges):
            self.totals[i] += c
        if reason in (ILLEGAL, TRUNCATED) or self.deal_index >= self.rules.num_deals - 1:
            self.match_over = True

    def forfeit(self, player: int) -> None:
        """End the match because ``player`` made an illegal move (``illegal_action=
        "terminate"``): it is charged 3 x its hand points + 100, the others 0 and win."""
        if self.deal_over:
            raise RuntimeError("the deal is already over")
        charges, winners = scoring.forfeit([points_of(h) for h in self.hands], player)
        self._end_deal(ILLEGAL, charges, winners)

    # ------------------------------------------------------------------ search helpers
    def copy(self, rng: np.random.Generator | None = None) -> GameState:
        """An independent clone; it draws from ``rng``, else from a copy of this RNG."""
        new = object.__new__(GameState)
        for name in GameState.__slots__:
            try:
                setattr(new, name, getattr(self, name))
            except AttributeError:  # a state assembled field by field lacks the replay log
                pass
        new.rng = rng if rng is not None else _copy.deepcopy(self.rng)
        new.hands = self.hands.copy()
        new.stock = self.stock.copy()
        new.pile = self.pile.copy()
        new.drew_on = self.drew_on.copy()
        new.totals = self.totals.copy()
        # Finished deals' logs never change: shared. The current one is an ActionLog (O(1)
        # copy) unless code outside the engine put a plain list there.
        new.history = self.history.copy()
        new.histories = self.histories[:-1] + [new.history]
        new.deal_decks = self.deal_decks.copy()
        new.deal_dealers = self.deal_dealers.copy()
        new._decks_left = self._decks_left.copy()
        log = _reshuffle_log(self)
        if log is not None:
            new.deal_reshuffles = [deal.copy() for deal in log]
        if self.charges is not None:
            new.charges = self.charges.copy()
        if self.winners is not None:
            new.winners = self.winners.copy()
        return new

    def determinize(self, observer: int, rng: np.random.Generator) -> GameState:
        """A clone in which the cards ``observer`` cannot see are dealt anew.

        The observer's hand, the discard pile and every public count (hand sizes, stock
        size) are kept; the other hands and the stock are redrawn from the unseen cards.
        The clone draws its future random numbers from ``rng``."""
        state = self.copy(rng)
        unseen = cards_of(FULL_DECK & ~self.hands[observer] & ~self.pile_mask)
        order = rng.permutation(len(unseen)).tolist()
        shuffled = [unseen[i] for i in order]
        pos = 0
        for i in range(self.num_players):
            if i == observer:
                continue
            size = self.hands[i].bit_count()
            mask = 0
            for c in shuffled[pos:pos + size]:
                mask |= 1 << c
            state.hands[i] = mask
            pos += size
        state.stock = shuffled[pos:]
        state._decks_left = []
        state._scripted = None
        state._legal = None  # the mask cached by the copy was of the hand it replaced
        return state

    def card_count(self) -> int:
        """Cards in hands, stock and pile together (always 52)."""
        return sum(h.bit_count() for h in self.hands) + len(self.stock) + len(self.pile)


def _reshuffle_log(state: GameState) -> list[list[list[int]]] | None:
    """``state.deal_reshuffles``, or None for a state that code outside the engine built
    field by field (the batched engine's ``game_state``, the bots' search states) and that
    keeps no record of chance."""
    return getattr(state, "deal_reshuffles", None)

"""The model set's playing styles, in plain Python: the reference their numba port
(``agents.panel.batched``) is held equal to.

Each style is a small rule on the facts a seat can see, read from its observation by
``agents.heuristic.ObservationReader``: the hand and the legal set as bit masks, the
phase, whether the seat has drawn this turn, the stock size and the hand sizes. A style is
deterministic (ties go to the lowest card id); randomness enters only through the
epsilon mixing of ``mixed_action``, so an opponent model can give the exact probability
of every move (``agents.panel.models.PanelModel``).

Why so many plain rules: the search and the networks were measured only against the
heuristic family they model. These styles play in ways the heuristic never does
(hoarding 7s and Jacks, shedding low cards, drawing on purpose, dumping short suits), so
that a model of the opponent that fits only the heuristic is visibly wrong against them.

The styles (``STYLES`` gives their ids, shared with the numba port):

* ``greedy``: ``agents.greedy``'s rule (the highest-point card; redraws until it can play).
* ``high_shedder``: the card of the highest rank (A, K, Q, J, 10 ... 2) first.
* ``hoarder``: keeps its 7s and Jacks: sheds the highest-point other card, draws rather
  than play a 7 or a Jack, answers sevens only with a spare 7.
* ``sevens``: plays a 7 whenever it can, then an 8, then its highest-point card; Jacks last.
* ``cautious``: never plays an 8 or an Ace while it holds more than three cards (it draws
  instead when nothing else fits); otherwise the highest-point card, Jacks last.
* ``miser``: the lowest-point card first (keeps its high cards, as beginners do).
* ``suit_keeper``: the card after which it can follow with the most cards of its hand.
* ``drawer``: draws once at the start of every turn while the stock holds 10+ cards, then
  plays its highest-point card; takes the sevens' penalty unless it holds 3 cards or fewer.
* ``jack_happy``: plays a Jack whenever it can and names its richest suit; otherwise
  dumps its shortest suit first.
"""

from __future__ import annotations

from pis_env.actions import DRAW, NOMINATE_BASE, PASS
from pis_env.cards import (
    ACE,
    CARD_POINTS,
    EIGHT,
    FULL_DECK,
    JACKS,
    RANK_MASKS,
    SEVEN,
    SEVENS,
    SUIT_MASKS,
)
from pis_env.engine import ACE_PHASE, NOMINATE, PLAY

#: Style name -> id (the numba kernel dispatches on the id).
STYLES = {name: i for i, name in enumerate((
    "greedy", "high_shedder", "hoarder", "sevens", "cautious", "miser", "suit_keeper",
    "drawer", "jack_happy",
))}
#: The stock size from which ``drawer`` draws before it plays.
DRAWER_STOCK = 10
#: ``cautious`` keeps its 8s and Aces while its hand holds more than this many cards.
CAUTIOUS_HAND = 3
_EIGHTS_ACES = RANK_MASKS[EIGHT] | RANK_MASKS[ACE]


def _bits(mask: int):
    """The set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _points(mask: int) -> int:
    return sum(CARD_POINTS[c] for c in _bits(mask))


def _best(cards: int, key) -> int:
    """The card of ``cards`` with the highest ``key``; ties go to the lowest id."""
    best, best_key = -1, None
    for c in _bits(cards):
        k = key(c)
        if best_key is None or k > best_key:
            best, best_key = c, k
    return best


def nominate(hand: int, legal: int, by_points: bool) -> int:
    """The nomination: the legal suit with the most non-Jack cards in hand (then the most
    points in it), or with ``by_points`` the most points (then the most cards); ties go to
    the lower suit."""
    best, best_key = -1, None
    for s in range(4):
        if (legal >> (NOMINATE_BASE + s)) & 1:
            suited = hand & SUIT_MASKS[s] & ~JACKS
            count, pts = suited.bit_count(), _points(suited)
            k = (pts, count) if by_points else (count, pts)
            if best_key is None or k > best_key:
                best, best_key = s, k
    return NOMINATE_BASE + best


def _no_card(legal: int, has_drawn: bool, redraw: bool) -> int:
    """No card and no nomination is legal: draw, or pass once drawn (``redraw``: draw
    again while the draw is legal, as ``greedy`` does)."""
    can_draw, can_pass = (legal >> DRAW) & 1, (legal >> PASS) & 1
    if can_draw and (redraw or not has_drawn or not can_pass):
        return DRAW
    return PASS


def choose(style: int, hand: int, legal: int, pending: int, phase: int, has_drawn: bool,
           stock: int) -> int:
    """The action of ``style`` (an id of ``STYLES``) for a seat holding ``hand`` with the
    legal set ``legal`` (58-bit mask), ``pending`` sevens, the engine ``phase``, whether it
    has drawn this turn and the stock size."""
    cards = legal & FULL_DECK
    can_draw = (legal >> DRAW) & 1
    can_pass = (legal >> PASS) & 1
    if phase == NOMINATE:
        return nominate(hand, legal, style == STYLES["jack_happy"])
    if not cards:
        return _no_card(legal, has_drawn, style == STYLES["greedy"])
    size = hand.bit_count()

    if style == STYLES["greedy"]:
        return _best(cards, lambda c: CARD_POINTS[c])
    if style == STYLES["high_shedder"]:
        return _best(cards, lambda c: c % 13)
    if style == STYLES["hoarder"]:
        if pending:
            if (hand & SEVENS).bit_count() >= 2 or size == 1 or not can_draw:
                return _best(cards, lambda c: 0)
            return DRAW
        others = cards & ~SEVENS & ~JACKS
        if others:
            return _best(others, lambda c: CARD_POINTS[c])
        if size > 1:
            if phase == ACE_PHASE and can_pass:
                return PASS
            if can_draw and not has_drawn:
                return DRAW
        return _best(cards, lambda c: 1 if c % 13 == SEVEN else 0)
    if style == STYLES["sevens"]:
        def key(c):
            r = c % 13
            cls = 3 if r == SEVEN else 2 if r == EIGHT else 0 if (JACKS >> c) & 1 else 1
            return cls * 100 + CARD_POINTS[c]
        return _best(cards, key)
    if style == STYLES["cautious"]:
        def key(c):
            return (0 if (JACKS >> c) & 1 else 100) + CARD_POINTS[c]
        allowed = cards & ~_EIGHTS_ACES if size > CAUTIOUS_HAND else cards
        if allowed:
            return _best(allowed, key)
        if phase == ACE_PHASE and can_pass:
            return PASS
        if can_draw and not has_drawn:
            return DRAW
        return _best(cards, key)
    if style == STYLES["miser"]:
        return _best(cards, lambda c: -CARD_POINTS[c])
    if style == STYLES["suit_keeper"]:
        def key(c):
            if (JACKS >> c) & 1:
                return CARD_POINTS[c]
            rest = hand & ~(1 << c) & ~JACKS
            follow = (rest & (SUIT_MASKS[c // 13] | RANK_MASKS[c % 13])).bit_count()
            return 10_000 + 64 * follow + CARD_POINTS[c]
        return _best(cards, key)
    if style == STYLES["drawer"]:
        if pending:
            if size <= 3 or not can_draw:
                return _best(cards, lambda c: 0)
            return DRAW
        if phase == PLAY and can_draw and not has_drawn and stock >= DRAWER_STOCK:
            return DRAW
        return _best(cards, lambda c: CARD_POINTS[c])
    if style == STYLES["jack_happy"]:
        def key(c):
            if (JACKS >> c) & 1:
                return 100_000 + CARD_POINTS[c]
            suit_count = (hand & SUIT_MASKS[c // 13] & ~JACKS).bit_count()
            return 100 * (13 - suit_count) + CARD_POINTS[c]
        return _best(cards, key)
    raise ValueError(f"unknown style id {style!r}")


def mixed_action(base: int, legal: int, epsilon: float, u: float, v: float) -> int:
    """``base`` with probability ``1 - epsilon``, else a uniformly random legal action:
    with ``u < epsilon`` the ``floor(v * count)``-th legal action (``u``, ``v`` uniform in
    [0, 1)). The numba port (``agents.panel.batched.mix``) makes the same choice from the
    same ``u`` and ``v``."""
    if u >= epsilon:
        return base
    count = legal.bit_count()
    k = min(int(v * count), count - 1)
    for i, a in enumerate(_bits(legal)):
        if i == k:
            return a
    raise ValueError("empty legal set")


__all__ = ["CAUTIOUS_HAND", "DRAWER_STOCK", "STYLES", "choose", "mixed_action",
           "nominate"]

"""Cards: ids, names, penalty points and the bit masks the engine works with.

Card id = 13 * suit + rank (RULES.md, Cards and ids). Suits: clubs, diamonds, hearts, spades = 0..3.
Ranks: 2 3 4 5 6 7 8 9 10 J Q K A = 0..12. A hand is a 52-bit integer whose bit ``c``
is set when the hand holds card ``c``: that makes the legal set a few bit operations.
"""

from __future__ import annotations

from collections.abc import Iterable

NUM_CARDS = 52
NUM_SUITS = 4
NUM_RANKS = 13

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
SUIT_LETTERS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")

SEVEN, EIGHT, TEN, JACK, QUEEN, KING, ACE = 5, 6, 8, 9, 10, 11, 12

#: Penalty points of each rank (J 25, 7 20, A 15, K and Q 10, spot cards face value).
RANK_POINTS = (2, 3, 4, 5, 6, 20, 8, 9, 10, 25, 10, 10, 15)
CARD_POINTS = tuple(RANK_POINTS[c % 13] for c in range(NUM_CARDS))

#: Cards dealt to each player, and so the largest table (seven hands of seven leave a stock).
CARDS_PER_HAND = 7
MAX_PLAYERS = 7

FULL_DECK = (1 << NUM_CARDS) - 1
SUIT_MASKS = tuple(((1 << NUM_RANKS) - 1) << (NUM_RANKS * s) for s in range(NUM_SUITS))
RANK_MASKS = tuple(sum(1 << (NUM_RANKS * s + r) for s in range(NUM_SUITS)) for r in range(13))
JACKS = RANK_MASKS[JACK]
SEVENS = RANK_MASKS[SEVEN]

_SUIT_INPUT = {
    "C": 0, "D": 1, "H": 2, "S": 3,
    "♣": 0, "♦": 1, "♥": 2, "♠": 3, "♧": 0, "♢": 1, "♡": 2, "♤": 3,
}
_RANK_INPUT = {name: r for r, name in enumerate(RANK_NAMES)} | {"T": 8}


def suit_of(card: int) -> int:
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    return card % NUM_RANKS


def card_id(rank: int, suit: int) -> int:
    return NUM_RANKS * suit + rank


def card_name(card: int, unicode: bool = False) -> str:
    """``"7C"``, ``"10H"``; with ``unicode=True`` ``"7♣"``, ``"10♥"``."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id must be in 0..51, got {card!r}")
    suits = SUIT_SYMBOLS if unicode else SUIT_LETTERS
    return RANK_NAMES[card % NUM_RANKS] + suits[card // NUM_RANKS]


def parse_card(card: int | str) -> int:
    """A card id from an id or a name such as ``"7C"``, ``"10h"``, ``"TH"`` or ``"J♠"``."""
    if isinstance(card, bool):
        raise ValueError(f"not a card: {card!r} (a bool; a card is an int id 0..51 or a name)")
    if isinstance(card, int) or (hasattr(card, "__index__") and not isinstance(card, str)):
        value = int(card)
        if not 0 <= value < NUM_CARDS:
            raise ValueError(f"card id must be in 0..51, got {value}")
        return value
    if not isinstance(card, str):
        raise ValueError(
            f"not a card: {card!r} (a {type(card).__name__}; a card is an int id 0..51 or a "
            "name such as '7C')"
        )
    text = card.strip().upper()
    if len(text) < 2 or text[-1] not in _SUIT_INPUT or text[:-1] not in _RANK_INPUT:
        raise ValueError(f"not a card name: {card!r} (expected e.g. '7C', '10H', 'TH', 'J♠')")
    return card_id(_RANK_INPUT[text[:-1]], _SUIT_INPUT[text[-1]])


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def cards_of(mask: int) -> list[int]:
    """The ids of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def points_of(mask: int) -> int:
    """Penalty points of the cards in a hand mask."""
    total = 0
    while mask:
        low = mask & -mask
        total += CARD_POINTS[low.bit_length() - 1]
        mask ^= low
    return total

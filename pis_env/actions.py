"""Action ids (RULES.md, Actions): the one place that numbers them.

Ids 0..51 play the card of that id (``pis_env.cards``); 52..55 nominate a suit after a
Jack (clubs, diamonds, hearts, spades); 56 draws; 57 passes. A legal set is a 58-bit
integer whose bit ``a`` is set when action ``a`` is legal, so the non-card actions also
have bit constants here. The engine, the encoder's mask, the bots and the numba kernels
all import these names; none of them types the numbers again.
"""

from __future__ import annotations

from enum import IntEnum

from .cards import NUM_CARDS

NOMINATE_BASE = NUM_CARDS
DRAW = NOMINATE_BASE + 4
PASS = DRAW + 1
NUM_ACTIONS = PASS + 1

DRAW_BIT = 1 << DRAW
PASS_BIT = 1 << PASS
NOMINATE_BITS = 0b1111 << NOMINATE_BASE


class Action(IntEnum):
    """The actions that are not a card (a card's action id is its card id)."""

    NOMINATE_CLUBS = NOMINATE_BASE
    NOMINATE_DIAMONDS = NOMINATE_BASE + 1
    NOMINATE_HEARTS = NOMINATE_BASE + 2
    NOMINATE_SPADES = NOMINATE_BASE + 3
    DRAW = DRAW
    PASS = PASS


__all__ = ["DRAW", "DRAW_BIT", "NOMINATE_BASE", "NOMINATE_BITS", "NUM_ACTIONS", "PASS",
           "PASS_BIT", "Action"]

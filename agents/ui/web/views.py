"""JSON views of a table for the page: cards, moves and positions as plain dicts.

One place turns engine values into what the page shows, so that the play view and the
replay view render the same position the same way. A *seat view* holds only what that
seat sees (its own hand, public counts); the *full table* adds every hand and the stock.
"""

from __future__ import annotations

from agents.ui.human import penalty_cards
from agents.ui.play import deal_end_sentence
from pis_env.cards import (
    RANK_NAMES,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    card_name,
    points_of,
)
from pis_env.engine import DRAW, NOMINATE_BASE, PASS, GameState

#: Suits shown in red (diamonds, hearts); clubs and spades are black.
RED_SUITS = (1, 2)


def card(c: int) -> dict:
    """``{"id", "name", "label", "rank", "suit", "symbol", "color"}`` of a card id."""
    suit = c // 13
    return {
        "id": c,
        "name": card_name(c),
        "label": card_name(c, unicode=True),
        "rank": RANK_NAMES[c % 13],
        "suit": suit,
        "symbol": SUIT_SYMBOLS[suit],
        "color": "red" if suit in RED_SUITS else "black",
    }


def suit(s: int) -> dict:
    return {"id": s, "symbol": SUIT_SYMBOLS[s], "name": SUIT_NAMES[s],
            "color": "red" if s in RED_SUITS else "black"}


def cards_of(mask: int) -> list[int]:
    """Card ids of a 52-bit hand, in suit order (clubs first), then rank."""
    return [c for c in range(52) if (mask >> c) & 1]


def move_label(action: int, game: GameState) -> str:
    """What a legal move does, for a button or a policy table (``"take the penalty: draw
    6 cards"``)."""
    if action < 52:
        return card_name(action, unicode=True)
    if NOMINATE_BASE <= action < DRAW:
        s = action - NOMINATE_BASE
        return f"name {SUIT_SYMBOLS[s]} {SUIT_NAMES[s]}"
    if action == DRAW:
        if game.pending_sevens and game.phase_name == "play":
            count = penalty_cards(game.pending_sevens, game.rules.seven_penalty)
            return f"take the penalty: draw {count} cards"
        return "draw a card"
    if action == PASS:
        return "pass"
    raise ValueError(f"action {action!r} is not in 0..57")


def position(game: GameState, seat: int | None, names: list[str]) -> dict:
    """The position as ``seat`` sees it (``seat=None``: the full table, every hand and the
    stock in draw order). Finished deals show every hand, as at a real table."""
    n = game.num_players
    sevens = game.pending_sevens
    over = game.deal_over
    view = {
        "seat": seat,
        "names": list(names),
        "num_players": n,
        "deal": game.deal_index,
        "num_deals": game.rules.num_deals,
        "dealer": game.dealer,
        "turn": None if over else game.current,
        "phase": game.phase_name,
        "has_drawn": bool(game.has_drawn),
        "top": card(game.top) if game.top >= 0 else None,
        "active_suit": suit(game.active_suit),
        "pending_sevens": sevens,
        "penalty_cards": penalty_cards(sevens, game.rules.seven_penalty),
        "hand_sizes": game.hand_sizes(),
        "stock_size": len(game.stock),
        "discard_size": len(game.pile),
        "direction": "clockwise" if game.direction == 1 else "anticlockwise",
        "totals": list(game.totals),
        "deal_over": bool(over),
        "hands": [
            [card(c) for c in cards_of(game.hands[i])]
            if (seat is None or seat == i or over) else None
            for i in range(n)
        ],
    }
    if seat is None:
        view["stock"] = [card(c) for c in reversed(game.stock)]  # the next card first
    if over:
        view["result"] = result(game, names)
    return view


def result(game: GameState, names: list[str]) -> dict:
    """A finished deal: why it ended, charges, winners, hand points and match totals."""
    n = game.num_players
    reason = game.end_reason
    text = deal_end_sentence(game, names, lambda card: card_name(card, unicode=True))
    return {
        "reason": reason,
        "text": text,
        "charges": list(game.charges),
        "winners": [bool(w) for w in game.winners],
        "points": [points_of(game.hands[i]) for i in range(n)],
        "totals": list(game.totals),
        "match_over": bool(game.match_over),
    }

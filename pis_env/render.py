"""A readable text table of a position, for ``render_mode="ansi"``/``"human"`` and the
terminal game."""

from __future__ import annotations

from .cards import SUIT_NAMES, SUIT_SYMBOLS, card_name, cards_of
from .engine import GameState


def hand_text(mask: int) -> str:
    """Cards of a hand mask with unicode suits, grouped by suit: ``"2♣ 7♣  K♥"``."""
    groups = []
    for suit in range(4):
        cards = [card_name(c, unicode=True) for c in cards_of(mask) if c // 13 == suit]
        if cards:
            groups.append(" ".join(cards))
    return "  ".join(groups) if groups else "(no cards)"


def render_table(game: GameState, viewer: int | None = None) -> str:
    """The table as text; the hand shown is ``viewer``'s (default: the player to move)."""
    seat = game.current if viewer is None else viewer
    top = card_name(game.top, unicode=True) if game.top >= 0 else "-- (no card yet)"
    suit = game.active_suit
    sizes = "  ".join(
        f"player_{i}{'*' if i == game.current and not game.deal_over else ''}: {size}"
        for i, size in enumerate(game.hand_sizes())
    )
    lines = [
        f"Deal {game.deal_index + 1}/{game.rules.num_deals}   dealer player_{game.dealer}   "
        f"direction {'clockwise' if game.direction == 1 else 'anticlockwise'}",
        f"Top card: {top}   active suit: {SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}   "
        f"pending sevens: {game.pending_sevens}   stock: {len(game.stock)}",
        f"Hand sizes: {sizes}",
    ]
    if game.deal_over:
        result = "  ".join(
            f"player_{i}: {c}{' (winner)' if w else ''}"
            for i, (c, w) in enumerate(zip(game.charges, game.winners))
        )
        lines.append(f"Deal over ({game.end_reason}). Charges: {result}")
        if game.rules.num_deals > 1:
            lines.append("Match totals: " + "  ".join(
                f"player_{i}: {t}" for i, t in enumerate(game.totals)))
    else:
        lines.append(
            f"player_{seat} to move ({game.phase_name}"
            f"{', has drawn' if game.has_drawn else ''}): {hand_text(game.hands[seat])}"
        )
    return "\n".join(lines)

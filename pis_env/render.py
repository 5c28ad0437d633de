"""Pictures of a position: a readable text table (``render_mode="ansi"``/``"human"``, the
terminal game) and an RGB frame (``render_mode="rgb_array"``, what video recorders read).

Frames are drawn with Pillow (in the ``agents`` and ``video`` extras; ``pis_env`` itself
needs only numpy): an env built with ``render_mode="rgb_array"`` works without it, and
only ``render()`` asks for it, so SB3's ``make_vec_env`` (which asks for ``rgb_array``
by default) never needs it unless a video is recorded.
"""

from __future__ import annotations

import functools

import numpy as np

from .cards import RANK_NAMES, SUIT_NAMES, SUIT_SYMBOLS, card_name, cards_of
from .engine import GameState


def hand_text(mask: int) -> str:
    """Cards of a hand mask with unicode suits, grouped by suit: ``"2♣ 7♣  K♥"``."""
    groups = []
    for suit in range(4):
        cards = [card_name(c, unicode=True) for c in cards_of(mask) if c // 13 == suit]
        if cards:
            groups.append(" ".join(cards))
    return "  ".join(groups) if groups else "(no cards)"


def render_table(game: GameState, viewer: int | None = None, reveal: bool = False) -> str:
    """The table as text; the hand shown is ``viewer``'s (default: the player to move),
    every hand with ``reveal``."""
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
            for i, (c, w) in enumerate(zip(game.charges or [], game.winners or []))
        )
        lines.append(f"Deal over ({game.end_reason}). Charges: {result}")
        if game.rules.num_deals > 1:
            lines.append("Match totals: " + "  ".join(
                f"player_{i}: {t}" for i, t in enumerate(game.totals)))
    elif seat == game.current:
        lines.append(
            f"player_{seat} to move ({game.phase_name}"
            f"{', has drawn' if game.has_drawn else ''}): {hand_text(game.hands[seat])}"
        )
    else:
        lines.append(f"player_{game.current} to move; player_{seat} holds "
                     f"{hand_text(game.hands[seat])}")
    if reveal:
        lines += [f"player_{i} holds {hand_text(h)}" for i, h in enumerate(game.hands)]
    return "\n".join(lines)


# ---------------------------------------------------------------------- rgb_array frames
#: ``(width, height)`` of every frame: fixed, whatever the table, as video encoders need.
FRAME_SIZE = (960, 640)

_FELT = (22, 92, 54)
_PANEL = (16, 72, 42)
_FACE = (250, 249, 242)
_EDGE = (30, 30, 30)
_BACK = (38, 64, 150)
_BACK_INNER = (92, 120, 200)
_RED = (200, 28, 40)
_BLACK = (18, 18, 18)
_TEXT = (238, 238, 228)
_DIM = (160, 190, 170)
_MARK = (250, 206, 60)


def render_frame(game: GameState, viewer: int | None = None, *,
                 reveal: bool = False) -> np.ndarray:
    """The table as a picture: ``uint8[H, W, 3]`` (``FRAME_SIZE``), drawn with Pillow.

    By default it shows what ``viewer`` (the player to move when None) may see and
    nothing else: its own hand face up, every other hand as that many card backs, the top
    card, the active suit, the pending sevens, the stock and discard counts, the
    direction, whose turn it is, the suits each opponent drew on, and the charges once
    the deal is over. Two positions that differ only in cards hidden from ``viewer``
    give the same frame. ``reveal=True`` turns every hand face up (replays, debugging).
    """
    image_module, draw_module = _pillow()
    n = game.num_players
    seat = game.current if viewer is None else viewer
    if not 0 <= seat < n:
        raise ValueError(f"viewer={viewer!r}: must be a seat in 0..{n - 1}")
    image = image_module.new("RGB", FRAME_SIZE, _FELT)
    painter = _Painter(draw_module.Draw(image))
    width, height = FRAME_SIZE
    to_move = None if game.deal_over else game.current

    # Opponents across the top, clockwise from the viewer's left.
    panel_w = width // (n - 1)
    for k in range(1, n):
        player = (seat + k) % n
        x0 = (k - 1) * panel_w
        box = (x0 + 4, 4, x0 + panel_w - 4, 196)
        painter.draw.rounded_rectangle(box, 10, fill=_PANEL,
                                       outline=_MARK if player == to_move else None, width=3)
        size = game.hands[player].bit_count()
        painter.text((box[0] + 10, 10), f"player_{player}", 20,
                     _MARK if player == to_move else _TEXT)
        painter.text((box[0] + 10, 36), f"{size} card{'s' if size != 1 else ''}", 16, _DIM)
        painter.suit_row((box[0] + 10, 60), game.drew_on[player])
        cards = cards_of(game.hands[player]) if reveal else [None] * size
        painter.fan(cards, (box[0] + 10, 84, box[2] - 10, 190), card_w=44, card_h=62)

    # The middle: stock, pile, active suit, sevens, direction, deal.
    mid = 214
    painter.card((width // 2 - 150, mid), None, 86, 120)
    painter.text((width // 2 - 150, mid + 126), f"stock {len(game.stock)}", 16, _TEXT)
    if game.top >= 0:
        painter.card((width // 2 - 40, mid), game.top, 86, 120)
    else:
        painter.draw.rounded_rectangle((width // 2 - 40, mid, width // 2 + 46, mid + 120), 8,
                                       outline=_DIM, width=2)
    painter.text((width // 2 - 40, mid + 126), f"discard {len(game.pile)}", 16, _TEXT)
    info_x = width // 2 + 80
    painter.text((info_x, mid), "suit to follow", 16, _DIM)
    painter.suit((info_x + 150, mid + 10), game.active_suit, 16)
    painter.text((info_x, mid + 28), f"pending sevens: {game.pending_sevens}", 16,
                 _MARK if game.pending_sevens else _TEXT)
    painter.text((info_x, mid + 56), "clockwise" if game.direction == 1 else "anticlockwise",
                 16, _TEXT)
    painter.text((info_x, mid + 84), f"deal {game.deal_index + 1}/{game.rules.num_deals}   "
                 f"dealer player_{game.dealer}", 16, _TEXT)
    if game.rules.num_deals > 1:
        painter.text((info_x, mid + 112), "totals " + " ".join(map(str, game.totals)), 16, _TEXT)
    painter.text((16, mid), "to move", 16, _DIM)
    painter.text((16, mid + 22), "-" if to_move is None else f"player_{to_move}", 20,
                 _MARK if to_move is not None else _TEXT)
    if to_move is not None:
        painter.text((16, mid + 50), game.phase_name + (", has drawn" if game.has_drawn
                                                         else ""), 16, _TEXT)
    if game.deal_over:
        painter.text((16, mid + 80), f"deal over ({game.end_reason})", 16, _MARK)
        if game.charges is not None and game.winners is not None:
            for i, (charge, won) in enumerate(zip(game.charges, game.winners)):
                painter.text((16, mid + 102 + 20 * i),
                             f"player_{i}: {charge}{'  winner' if won else ''}", 16, _TEXT)

    # The viewer's hand along the bottom.
    box = (4, 404, width - 4, height - 4)
    painter.draw.rounded_rectangle(box, 10, fill=_PANEL,
                                   outline=_MARK if seat == to_move else None, width=3)
    hand = cards_of(game.hands[seat])
    painter.text((box[0] + 12, box[1] + 8), f"player_{seat}: {len(hand)} card"
                 f"{'s' if len(hand) != 1 else ''}", 20, _MARK if seat == to_move else _TEXT)
    painter.fan(hand, (box[0] + 12, box[1] + 40, box[2] - 12, box[3] - 8), card_w=76,
                card_h=106)
    return np.asarray(image, dtype=np.uint8)


def _pillow():
    """Pillow's ``Image`` and ``ImageDraw``, or an ImportError that says how to get them."""
    try:
        from PIL import Image, ImageDraw
    except ImportError as e:
        raise ImportError(
            "render_mode='rgb_array' draws the table with Pillow, which is not installed: "
            "pip install 'pis-yedili[agents]' (or 'pis-yedili[video]', or pillow)"
        ) from e
    return Image, ImageDraw


@functools.cache
def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


class _Painter:
    """Cards, suits and labels on one ``ImageDraw``; suits are drawn as shapes, so no
    font needs the ♣♦♥♠ glyphs."""

    def __init__(self, draw):
        self.draw = draw

    def text(self, xy, text: str, size: int, fill) -> None:
        self.draw.text(xy, text, font=_font(size), fill=fill)

    def fan(self, cards: list, box, card_w: int, card_h: int) -> None:
        """``cards`` (ids, or None for a back) overlapped left to right inside ``box``, in
        rows of at most 26 cards and as many rows as fit (more cards overlap more)."""
        if not cards:
            return
        x0, y0, x1, y1 = box
        rows = max(1, min((len(cards) + 25) // 26, (y1 - y0) // (card_h // 3 + 1)))
        per_row = -(-len(cards) // rows)
        row_h = card_h if rows == 1 else min(card_h, (y1 - y0 - card_h) // (rows - 1))
        for r in range(rows):
            chunk = cards[r * per_row:(r + 1) * per_row]
            step = card_w + 4 if len(chunk) < 2 else min(
                card_w + 4, (x1 - x0 - card_w) / (len(chunk) - 1))
            for i, card in enumerate(chunk):
                self.card((int(x0 + i * step), y0 + r * row_h), card, card_w, card_h)

    def card(self, xy, card: int | None, w: int, h: int) -> None:
        x, y = xy
        radius = max(3, w // 10)
        if card is None:
            self.draw.rounded_rectangle((x, y, x + w, y + h), radius, fill=_BACK,
                                        outline=_EDGE, width=1)
            inset = max(3, w // 8)
            self.draw.rounded_rectangle((x + inset, y + inset, x + w - inset, y + h - inset),
                                        radius, outline=_BACK_INNER, width=2)
            return
        suit, rank = divmod(card, 13)
        colour = _RED if suit in (1, 2) else _BLACK
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius, fill=_FACE, outline=_EDGE,
                                    width=1)
        label = max(10, w // 3)
        self.text((x + max(2, w // 14), y + 2), RANK_NAMES[rank], label, colour)
        pip = max(4, w // 7)
        self.suit((x + max(2, w // 14) + pip, y + label + pip + 4), suit, pip)
        self.suit((x + w // 2, y + h * 3 // 5), suit, max(6, w // 4))

    def suit_row(self, left_top, suits_mask: int) -> None:
        """"drew on" and small suit symbols: the suits a player drew on and has not played
        since (nothing when there are none)."""
        if not suits_mask:
            return
        x, y = left_top
        self.text((x, y), "drew on", 14, _DIM)
        x += 66
        for suit in range(4):
            if suits_mask >> suit & 1:
                self.suit((x, y + 9), suit, 8)
                x += 20

    def suit(self, centre, suit: int, r: int) -> None:
        """A suit symbol of half-size ``r`` centred on ``centre``."""
        cx, cy = centre
        colour = _RED if suit in (1, 2) else _BLACK
        d = self.draw
        if suit == 1:  # diamond
            d.polygon([(cx, cy - r), (cx + r * 3 // 4, cy), (cx, cy + r),
                       (cx - r * 3 // 4, cy)], fill=colour)
        elif suit == 2:  # heart
            q = r // 2
            d.ellipse((cx - r, cy - r + 1, cx, cy - r + 1 + r), fill=colour)
            d.ellipse((cx, cy - r + 1, cx + r, cy - r + 1 + r), fill=colour)
            d.polygon([(cx - r, cy - q + 1), (cx + r, cy - q + 1), (cx, cy + r)], fill=colour)
        elif suit == 3:  # spade
            q = r // 2
            d.polygon([(cx, cy - r), (cx + r, cy + q - 1), (cx - r, cy + q - 1)], fill=colour)
            d.ellipse((cx - r, cy - 1, cx, cy + r - 1), fill=colour)
            d.ellipse((cx, cy - 1, cx + r, cy + r - 1), fill=colour)
            d.polygon([(cx, cy), (cx + q, cy + r), (cx - q, cy + r)], fill=colour)
        else:  # club
            t = r * 5 // 9
            d.ellipse((cx - t, cy - r, cx + t, cy - r + 2 * t), fill=colour)
            d.ellipse((cx - r, cy - t // 2, cx - r + 2 * t, cy - t // 2 + 2 * t), fill=colour)
            d.ellipse((cx + r - 2 * t, cy - t // 2, cx + r, cy - t // 2 + 2 * t), fill=colour)
            d.polygon([(cx, cy), (cx + t, cy + r), (cx - t, cy + r)], fill=colour)

"""A person at the terminal, as an agent: ``HumanAgent(input_fn=input, output=print)``.

``act(observation)`` prints the table as the observation shows it (the hand with unicode
suits, the top card, the active suit, pending sevens, every opponent's hand size, match
totals, the moves since the last decision), lists the legal moves with numbers and reads
one. After a Jack the nomination is its own prompt with the suits. Input may be a menu
number, a card name (``7c``, ``10♥``), ``d``/``draw``, ``p``/``pass``, or for a suit
``c``/``d``/``h``/``s``; ``?`` shows help and ``q`` quits.

Bad input (text, a number out of range, a card that cannot be played now) prints a
message and asks again: nothing is played until a valid move is read. When only one move
is possible the prompt shows it alone in brackets (``Your move [1]:``) and Enter on an
empty line accepts it; with several moves the brackets show their range and an empty line
is asked again (a stray Enter never plays a card). End of
input, Ctrl-C and ``q`` raise ``QuitGame`` (with ``reason`` ``"eof"``, ``"interrupt"``,
``"quit"``), which the terminal game (``agents.ui.play``) turns into a clean exit.

The observation does not carry the move history, so whoever runs the game reports moves
through ``note(text)``; ``agents.ui.play`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agents.base import Agent, legal_actions
from pis_env.cards import SUIT_NAMES, SUIT_SYMBOLS, card_name, parse_card, points_of
from pis_env.engine import DRAW, NOMINATE_BASE, PASS

#: Moves shown under "Last moves"; older ones are summarized as a count.
MAX_MOVES_SHOWN = 12

_SUIT_WORDS = {
    "c": 0, "clubs": 0, "club": 0, "♣": 0, "♧": 0,
    "d": 1, "diamonds": 1, "diamond": 1, "♦": 1, "♢": 1,
    "h": 2, "hearts": 2, "heart": 2, "♥": 2, "♡": 2,
    "s": 3, "spades": 3, "spade": 3, "♠": 3, "♤": 3,
}
_QUIT_WORDS = {"q", "quit", "exit"}
_HELP_WORDS = {"?", "help"}


class QuitGame(Exception):
    """The player asked to stop: ``reason`` is ``"eof"``, ``"interrupt"`` or ``"quit"``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def suit_text(suit: int) -> str:
    return f"{SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}"


def card_text(card: int) -> str:
    return card_name(card, unicode=True)


def hand_line(cards: Sequence[int]) -> str:
    """``"2♣ 9♣  K♦  3♥ 7♥"``: cards grouped by suit."""
    groups = []
    for suit in range(4):
        in_suit = [card_text(c) for c in sorted(cards) if c // 13 == suit]
        if in_suit:
            groups.append(" ".join(in_suit))
    return "  ".join(groups) if groups else "(no cards)"


def penalty_cards(sevens: int, seven_penalty: str = "add") -> int:
    """Cards to draw for a chain of ``sevens`` sevens (3 per seven, or doubling)."""
    if sevens <= 0:
        return 0
    return 3 * (1 << (sevens - 1)) if seven_penalty == "double" else 3 * sevens


class HumanAgent(Agent):
    """A terminal player. ``names`` are display names in the observer's relative seat
    order (the observer first, then clockwise); ``seven_penalty`` the rules option, to
    say how many cards a penalty is."""

    name = "human"

    def __init__(
        self,
        num_players: int = 2,
        num_deals: int = 1,
        seed: int | None = None,
        input_fn: Callable[[str], str] = input,
        output: Callable[[str], None] = print,
        names: Sequence[str] | None = None,
        seven_penalty: str = "add",
    ):
        super().__init__(num_players=num_players, num_deals=num_deals, seed=seed)
        self.input_fn = input_fn
        self.output = output
        if names is None:
            names = ["You"] + [f"opponent {i}" for i in range(1, num_players)]
        if len(names) != num_players:
            raise ValueError(f"names must list {num_players} players, got {list(names)}")
        self.names = list(names)
        self.seven_penalty = seven_penalty
        self.moves: list[str] = []

    # ------------------------------------------------------------ protocol
    def reset(self, seed: int | None = None) -> None:
        """A new deal: forget the noted moves (``seed``: the protocol's; a person draws
        no random numbers)."""
        self.moves = []

    def note(self, text: str) -> None:
        """Record a move, shown under "Last moves" at the next decision."""
        self.moves.append(text)

    def flush_moves(self) -> None:
        """Print the moves noted since the last decision (e.g. when a deal ends)."""
        if self.moves:
            self.output(self._moves_text())
            self.moves = []

    def act(self, observation: dict) -> int:
        legal = [int(a) for a in legal_actions(observation)]
        info = self.decode(observation)
        if info["phase"] == "nominate":
            return self._nominate(info, legal)
        self.output(self.table_text(info))
        options = self.menu(info, legal)
        self.output(self._menu_text(options))
        while True:
            text = self._read(f"Your move [{_range(len(options))}]: ")
            low = text.strip().lower()
            if low in _HELP_WORDS:
                self.output(self.help_text())
                self.output(self._menu_text(options))
                continue
            action, error = self.parse_move(text, options, info, legal)
            if action is not None:
                return action
            self.output(error or "")

    # ------------------------------------------------------------ views
    def table_text(self, info: dict) -> str:
        n = self.num_players
        sizes = info["hand_sizes"]
        lines = []
        head = f"Stock: {info['stock_size']} cards"
        if self.num_deals > 1 and info.get("deal") is not None:
            head = f"Deal {info['deal'] + 1}/{self.num_deals}   " + head
        if n > 2:
            head += "   play goes " + ("clockwise" if info["direction"] == 1 else "anticlockwise")
        lines.append("\n" + "─" * 8 + " " + head + " " + "─" * 8)
        lines.append("Opponents: " + "   ".join(
            f"{self.names[i]}: {sizes[i]} card{'s' if sizes[i] != 1 else ''}"
            for i in range(1, n)))
        if info.get("scores") is not None:
            lines.append("Match totals (lower is better): " + "   ".join(
                f"{self.names[i]} {info['scores'][i]}" for i in range(n)))
        top = info["top_card"]
        top_text = card_text(top) if top is not None else "none yet (open with a club)"
        lines.append(f"Top card: {top_text}   active suit: {suit_text(info['active_suit'])}")
        sevens = info["pending_sevens"] or 0
        if sevens:
            lines.append(
                f"Pending sevens: {sevens} — answer with a 7 or take "
                f"{penalty_cards(sevens, self.seven_penalty)} cards")
        if self.moves:
            lines.append(self._moves_text())
            self.moves = []
        hand = info["hand"]
        lines.append(f"Your hand ({len(hand)} cards, {points_of(_mask(hand))} points): "
                     f"{hand_line(hand)}")
        phase = info["phase"]
        if phase == "opening":
            lines.append("You open the deal: play a club (draw if you have none).")
        elif phase == "ace":
            lines.append("Your Ace lets you play again: a card of the same suit or rank, "
                         "a Jack, or pass.")
        elif info["has_drawn"]:
            lines.append("You have drawn this turn: play, draw again or pass.")
        return "\n".join(lines)

    def _moves_text(self) -> str:
        moves = self.moves
        lines = ["Last moves:"]
        if len(moves) > MAX_MOVES_SHOWN:
            lines.append(f"  … {len(moves) - MAX_MOVES_SHOWN} earlier moves")
            moves = moves[-MAX_MOVES_SHOWN:]
        lines += [f"  {m}" for m in moves]
        return "\n".join(lines)

    def menu(self, info: dict, legal: Sequence[int]) -> list[tuple[int, str]]:
        """The numbered moves: ``[(action, text), ...]``, cards first (in hand order)."""
        sevens = info["pending_sevens"] or 0
        options = []
        for a in legal:
            if a < 52:
                options.append((a, f"play {card_text(a)}"))
        if DRAW in legal:
            if sevens and info["phase"] == "play":
                cards = penalty_cards(sevens, self.seven_penalty)
                options.append((DRAW, f"take the penalty: draw {cards} cards"))
            else:
                options.append((DRAW, "draw a card"))
        if PASS in legal:
            options.append((PASS, "pass (end your turn)"))
        return options

    @staticmethod
    def _menu_text(options: Sequence[tuple[int, str]]) -> str:
        return "Your moves:\n" + "\n".join(
            f"  {i}) {text}" for i, (_, text) in enumerate(options, start=1))

    @staticmethod
    def help_text() -> str:
        return (
            "Type the number of a move, or a card (7c, 10h, J♠), d to draw, p to pass, "
            "q to quit; Enter alone accepts [1] when it is the only move.\nMatch the top "
            "card's rank or the active suit; a Jack goes on anything but a Jack and names "
            "the next suit. 7: the next player draws 3 "
            "unless they answer with a 7. 8: skip. 10: reverse. A: play again."
        )

    # ------------------------------------------------------------ input
    def _read(self, prompt: str) -> str:
        try:
            text = self.input_fn(prompt)
        except EOFError:
            raise QuitGame("eof") from None
        except KeyboardInterrupt:
            raise QuitGame("interrupt") from None
        if text is None:
            raise QuitGame("eof")
        if text.strip().lower() in _QUIT_WORDS:
            raise QuitGame("quit")
        return text

    def parse_move(
        self, text: str, options: Sequence[tuple[int, str]], info: dict, legal: Sequence[int]
    ) -> tuple[int | None, str | None]:
        """``(action, None)`` for valid input, else ``(None, message)``."""
        raw = text.strip()
        low = raw.lower()
        count = len(options)
        if not raw:
            if count == 1:
                return options[0][0], None  # Enter accepts the move shown in brackets
            return None, f"Please type {_numbers(count)} (? for help)."
        try:
            number = int(raw)
        except ValueError:
            number = None
        if number is not None:
            if 1 <= number <= count:
                return options[number - 1][0], None
            return None, f"{number} is not on the list: type {_numbers(count)}."
        if low in ("d", "draw"):
            if DRAW in legal:
                return DRAW, None
            return None, "You cannot draw now. Choose one of the listed moves."
        if low in ("p", "pass"):
            if PASS in legal:
                return PASS, None
            return None, ("You cannot pass now: passing is allowed only after drawing "
                          "(or to end an Ace's extra play).")
        try:
            card = parse_card(raw)
        except ValueError:
            return None, (f"{raw!r} is not a move: type {_numbers(count)}, "
                          "a card like 7c, d to draw or p to pass (? for help).")
        if card in legal:
            return card, None
        if card in info["hand"]:
            return None, (f"{card_text(card)} cannot be played now. "
                          f"Choose one of the {count} listed moves.")
        return None, f"You do not hold {card_text(card)}."

    def _nominate(self, info: dict, legal: Sequence[int]) -> int:
        suits = [a - NOMINATE_BASE for a in legal if NOMINATE_BASE <= a < DRAW]
        hand = info["hand"]
        counts = {s: sum(1 for c in hand if c // 13 == s) for s in range(4)}
        lines = [f"Your hand: {hand_line(hand)}", "Name the suit the next player must follow:"]
        lines += [f"  {i}) {suit_text(s)}  (you hold {counts[s]})"
                  for i, s in enumerate(suits, start=1)]
        self.output("\n".join(lines))
        while True:
            text = self._read(f"Suit [{_range(len(suits))}]: ")
            raw = text.strip().lower()
            if raw in _HELP_WORDS:
                self.output("Type the number of a suit, or c, d, h, s (or ♣ ♦ ♥ ♠).")
                continue
            if not raw:
                self.output(f"Please type a suit number from 1 to {len(suits)}.")
                continue
            try:
                number = int(raw)
            except ValueError:
                number = None
            if number is not None:
                if 1 <= number <= len(suits):
                    return NOMINATE_BASE + suits[number - 1]
                self.output(f"{number} is not on the list: choose a number from 1 to "
                            f"{len(suits)}.")
                continue
            if raw in _SUIT_WORDS:
                suit = _SUIT_WORDS[raw]
                if suit in suits:
                    return NOMINATE_BASE + suit
                self.output(f"You may not name {suit_text(suit)} now: the rules ask for a "
                            "different suit.")
                continue
            self.output(f"{text.strip()!r} is not a suit: type 1-{len(suits)} or c, d, h, s.")


def _range(count: int) -> str:
    return "1" if count == 1 else f"1-{count}"


def _numbers(count: int) -> str:
    return "1" if count == 1 else f"a number from 1 to {count}"


def _mask(cards: Sequence[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


__all__ = ["HumanAgent", "QuitGame", "hand_line", "penalty_cards"]

"""The public events of a two-player ``pis_yedili_v0`` window, rebuilt where they are
unambiguous.

Why: a v0 observation is a snapshot, but at two players the difference between two of
the seat's consecutive observations (its own action, the cards that reached the pile,
the opponent's hand size) usually says exactly what the opponent did: it drew some
cards and then played one (or passed), it answered a 7 or took the penalty. Rebuilt as
``pis_yedili_v1``'s events (``(seat, kind, value)``, relative seats), the particle
filter weighs those moves as it does at a v1 table. Windows with two plays whose order or
whose draws in between the snapshot cannot tell (an 8 that gave the opponent another
turn after it drew, most Ace chains) return ``None``; the filter then projects its worlds
onto the observation instead. A window rebuilt wrongly cannot go unnoticed: the filter
replays it on every world and checks that they show the observation it was given.
"""

from __future__ import annotations

from collections.abc import Mapping

from pis_env.cards import NUM_CARDS
from pis_env.engine import DRAW, NOMINATE_BASE, PASS
from pis_env.rules import Rules

JACK, SEVEN, EIGHT, ACE = 9, 5, 6, 12


def _penalty(pending: int, rules: Rules) -> int:
    return 3 * (1 << (pending - 1)) if rules.seven_penalty == "double" else 3 * pending


def deal_start(decoded: Mapping) -> list | None:
    """The events before the seat's first decision of a deal: it opens (the opponent
    dealt), or the opponent opened, drawing first if it held no club."""
    discard = list(decoded["discard"])
    if not discard:
        return [(1, "deal", None)]
    if len(discard) == 1 and decoded["hand_sizes"][0] == 7:
        drew = decoded["hand_sizes"][1] - 6
        if drew < 0:
            return None
        return [(0, "deal", None)] + ([(1, "draw", drew)] if drew else []) + [
            (1, "play", discard[0])]
    return None


def window(prev: Mapping, action: int, new: Mapping, rules: Rules) -> list | None:
    """The events from the seat's ``action`` at ``prev`` to its observation ``new``
    (the action first, as a v1 window), or ``None`` when they are ambiguous."""
    pending = prev["pending_sevens"]
    own: tuple[int, str, int | None]
    if action < NUM_CARDS:
        own = (0, "play", action)
    elif NOMINATE_BASE <= action < DRAW:
        own = (0, "nominate", action - NOMINATE_BASE)
    elif action == PASS:
        own = (0, "pass", None)
    elif pending:
        own = (0, "penalty", _penalty(pending, rules))
    else:
        own = (0, "draw", 1)
    mine = {action} if action < NUM_CARDS else set()
    played = set(new["discard"]) - set(prev["discard"]) - mine
    delta = new["hand_sizes"][1] - prev["hand_sizes"][1]
    if not played and delta == 0:
        return [own]  # the seat's turn went on
    drawn = delta + len(played)
    events: list[tuple[int, str, int | None]] = [own]
    faced = pending + 1 if action < NUM_CARDS and action % 13 == SEVEN else 0
    if faced:
        if len(played) == 1 and drawn == 0 and next(iter(played)) % 13 == SEVEN:
            return events + [(1, "play", next(iter(played)))]
        count = _penalty(faced, rules)
        if drawn < count:
            return None
        events.append((1, "penalty", count))
        drawn -= count
        if rules.after_penalty != "continue":
            return events if not played and drawn == 0 else None
        if not played and drawn == 0:
            return None  # it continued after the penalty: it passed or played
    if not played:
        if drawn < 1:
            return None
        return events + [(1, "draw", drawn), (1, "pass", None)]
    top = new["top_card"]
    if top is None or top not in played:
        return None
    first = [c for c in played if c != top]
    if len(first) > 1 or (first and first[0] % 13 != ACE):
        return None  # two plays that are not an Ace and its extra play
    if top % 13 == EIGHT:
        # At two players an 8 gives the opponent another turn: it drew and passed after it.
        if first or drawn != 1:
            return None
        return events + [(1, "play", top), (1, "draw", 1), (1, "pass", None)]
    if drawn:
        events.append((1, "draw", drawn))
    events += [(1, "play", c) for c in first] + [(1, "play", top)]
    if top % 13 == JACK:
        events.append((1, "nominate", new["active_suit"]))
    elif top % 13 == ACE:
        events.append((1, "pass", None))  # the extra play it did not use
    return events


__all__ = ["deal_start", "window"]

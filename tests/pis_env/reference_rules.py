"""An independent reference for the rules, written from RULES.md.

Nothing here calls the engine's legal-move or scoring code, nor the bit masks of
``pis_env.cards``: cards are plain ids (``13 * suit + rank``) and hands plain lists. It
reads only the public fields of a ``GameState`` (and its ``history`` to know who has
already opened under ``opening="first_round"``).

- ``legal_actions(state)``: the set of legal action ids for the player to move.
- ``hand_points`` / ``going_out_charges`` / ``empty_stock_result`` / ``penalty_size``:
  the scoring rules.
- ``predict(state, action)``: what the public state must look like after a legal
  action (whose turn, phase, top card, active suit, chain of sevens, direction, hands,
  stock, pile, and how the deal ends). The property tests compare it with the engine
  after every step, so the engine's phase and turn bookkeeping is checked as well.
"""

from __future__ import annotations

# Action ids (RULES.md, Actions).
NOMINATE = 52  # 52 + suit
DRAW = 56
PASS = 57

# Ranks 2 3 4 5 6 7 8 9 10 J Q K A are 0..12; suits C D H S are 0..3.
R_SEVEN, R_EIGHT, R_TEN, R_JACK, R_ACE = 5, 6, 8, 9, 12
CLUBS = 0

#: Penalty points by rank name, straight from the rules text.
POINTS_BY_RANK_NAME = {
    "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 20, "8": 8, "9": 9, "10": 10,
    "J": 25, "Q": 10, "K": 10, "A": 15,
}
RANK_NAMES = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]

PHASE_OPENING, PHASE_PLAY, PHASE_NOMINATE, PHASE_ACE = 0, 1, 2, 3


def rank(card: int) -> int:
    return card % 13


def suit(card: int) -> int:
    return card // 13


def card_points(card: int) -> int:
    return POINTS_BY_RANK_NAME[RANK_NAMES[rank(card)]]


def hand_cards(mask: int) -> list[int]:
    """The card ids of a 52-bit hand mask, ascending."""
    return [c for c in range(52) if (mask >> c) & 1]


def hand_points(cards) -> int:
    """Penalty points of a hand (a mask or an iterable of ids)."""
    if isinstance(cards, int):
        cards = hand_cards(cards)
    return sum(card_points(c) for c in cards)


def going_out_charges(hands: list, last_card: int) -> list[int]:
    """Charges when a player goes out with ``last_card`` (their hand then empty):
    ×3 on a seven, ×2 on a Jack, else ×1."""
    multiplier = 3 if rank(last_card) == R_SEVEN else 2 if rank(last_card) == R_JACK else 1
    return [hand_points(h) * multiplier for h in hands]


def empty_stock_result(hands: list) -> tuple[list[int], list[bool]]:
    """(charges, winners) when the stock runs out: the lowest hand points win and are
    charged 0, the others their points with no multiplier."""
    points = [hand_points(h) for h in hands]
    low = min(points)
    winners = [p == low for p in points]
    return [0 if w else p for p, w in zip(points, winners)], winners


def penalty_size(sevens: int, seven_penalty: str) -> int:
    """Cards to draw for a chain of ``sevens`` sevens: 3 per seven (``add``) or
    3, 6, 12, … (``double``)."""
    if sevens <= 0:
        return 0
    if seven_penalty == "add":
        return 3 * sevens
    size = 3
    for _ in range(sevens - 1):
        size *= 2
    return size


def openers(state) -> set[int]:
    """Players who have played a card in the current deal (their opening is done)."""
    return {p for p, a in state.history if a < 52}


# ---------------------------------------------------------------------- legal moves
def legal_actions(state) -> set[int]:
    """The legal action ids for ``state.current``, from the rules alone."""
    if state.deal_over:
        return set()
    rules = state.rules
    hand = hand_cards(state.hands[state.current])
    phase = state.phase

    if phase == PHASE_OPENING:
        # Must play a club; with none, draw one at a time (no draw rule applies here).
        clubs = {c for c in hand if suit(c) == CLUBS}
        return clubs if clubs else {DRAW}

    if phase == PHASE_NOMINATE:
        suits = {0, 1, 2, 3}
        if rules.nominate == "other":
            suits.discard(state.active_suit)
        return {NOMINATE + s for s in suits}

    top = state.top
    if phase == PHASE_ACE:
        # One more card of the Ace's rank or suit, or any Jack, or pass; never draw.
        extra = {c for c in hand
                 if rank(c) == R_ACE or suit(c) == suit(top) or rank(c) == R_JACK}
        return extra | {PASS}

    # A normal turn.
    if state.pending_sevens:
        # Answer with any seven or take the whole penalty (always allowed).
        return {c for c in hand if rank(c) == R_SEVEN} | {DRAW}
    if rank(top) == R_JACK:
        playable = {c for c in hand if suit(c) == state.active_suit and rank(c) != R_JACK}
    else:
        playable = {c for c in hand
                    if rank(c) == rank(top) or suit(c) == state.active_suit
                    or rank(c) == R_JACK}
    drawn = state.has_drawn
    if rules.draw_rule == "free":
        return playable | {DRAW} | ({PASS} if drawn else set())
    if rules.draw_rule == "one":
        return playable | ({PASS} if drawn else {DRAW})
    # until_playable: draw only with nothing to play; never pass.
    return playable if playable else {DRAW}


# ---------------------------------------------------------------------- transitions
def predict(state, action: int) -> dict:
    """The public state expected after ``action`` (which must be legal).

    Keys: ``current phase top active_suit pending_sevens direction has_drawn hands
    pile stock deal_over end_reason charges winners``. ``has_drawn`` is None where it
    does not matter (nominating, the Ace's extra play, after the deal). After a
    reshuffle the new stock's order is random: then ``stock`` is None, ``stock_size``
    the expected length, and ``hands[current]`` holds only the cards certainly drawn
    (``hand_at_least`` is True; ``drawn_count`` more come from ``drawn_from``).
    """
    rules = state.rules
    n = rules.num_players
    p = state.current
    hands = [set(hand_cards(h)) for h in state.hands]
    stock = list(state.stock)
    pile = list(state.pile)
    out = {
        "current": p, "phase": state.phase, "top": state.top,
        "active_suit": state.active_suit, "pending_sevens": state.pending_sevens,
        "direction": state.direction, "has_drawn": state.has_drawn,
        "deal_over": False, "end_reason": None, "charges": None, "winners": None,
        "hand_at_least": False, "stock_size": None, "drawer": p,
    }
    opened = openers(state)

    def phase_for(player: int) -> int:
        if rules.opening == "first_round":
            return PHASE_PLAY if player in opened else PHASE_OPENING
        return PHASE_PLAY if opened else PHASE_OPENING

    def advance(steps: int) -> None:
        nxt = (p + steps * out["direction"]) % n
        out["current"] = nxt
        out["has_drawn"] = False
        out["phase"] = phase_for(nxt)

    def end(reason: str, charges: list[int], winners: list[bool]) -> None:
        out.update(deal_over=True, end_reason=reason, charges=charges, winners=winners,
                   has_drawn=None)

    def take(count: int) -> bool:
        """Draw ``count`` cards for p; False when the deal ended on the empty stock."""
        nonlocal stock, pile
        for i in range(count):
            hands[p].add(stock.pop())
            if stock:
                continue
            left = count - 1 - i
            if rules.empty_stock == "reshuffle" and len(pile) >= 2:
                # All but the top card of the pile become a stock in random order.
                reshuffled = pile[:-1]
                pile = pile[-1:]
                if left >= len(reshuffled):  # drawn dry again: the deal ends
                    hands[p].update(reshuffled)
                    stock = []
                    end("empty_stock", *empty_stock_result(hands))
                    return False
                out["hand_at_least"] = True
                out["drawn_from"] = set(reshuffled)
                out["drawn_count"] = left
                out["stock_size"] = len(reshuffled) - left
                stock = None
                return True
            end("empty_stock", *empty_stock_result(hands))
            return False
        return True

    if action < 52:
        hands[p].discard(action)
        pile.append(action)
        out["top"] = action
        if state.phase == PHASE_OPENING:  # the opening club has no effect
            opened.add(p)
            out["active_suit"] = suit(action)
            advance(1)
        elif not hands[p]:
            charges = going_out_charges(hands, action)
            end("going_out", charges, [i == p for i in range(n)])
        elif rank(action) == R_JACK:
            out["phase"] = PHASE_NOMINATE  # the suit changes on the nomination
            out["has_drawn"] = None
        else:
            out["active_suit"] = suit(action)
            if rank(action) == R_SEVEN:
                out["pending_sevens"] += 1
                advance(1)
            elif rank(action) == R_EIGHT:
                advance(2)
            elif rank(action) == R_TEN:
                out["direction"] = -out["direction"]
                advance(1)
            elif rank(action) == R_ACE:
                out["phase"] = PHASE_ACE
                out["has_drawn"] = None
            else:
                advance(1)
    elif NOMINATE <= action < DRAW:
        out["active_suit"] = action - NOMINATE
        advance(1)
    elif action == PASS:
        advance(1)
    elif state.phase == PHASE_PLAY and state.pending_sevens:
        count = penalty_size(state.pending_sevens, rules.seven_penalty)
        out["pending_sevens"] = 0
        if take(count):
            if rules.after_penalty == "continue":
                out["has_drawn"] = True
            else:
                advance(1)
    else:
        if take(1):
            out["has_drawn"] = True

    if rules.max_turns and not out["deal_over"] and len(state.history) + 1 >= rules.max_turns:
        end("truncated", [0] * n, [False] * n)
    if out["deal_over"]:
        out["has_drawn"] = None
    out["hands"] = hands
    out["pile"] = pile
    out["stock"] = stock
    if stock is not None:
        out["stock_size"] = len(stock)
    return out


def check_prediction(expected: dict, state) -> None:
    """Assert that ``state`` (after the action) matches ``predict``'s ``expected``."""
    for key in ("deal_over", "end_reason", "charges", "winners"):
        assert getattr(state, key) == expected[key], (key, getattr(state, key), expected[key])
    actual_hands = [set(hand_cards(h)) for h in state.hands]
    if expected["hand_at_least"]:
        for i, (got, want) in enumerate(zip(actual_hands, expected["hands"])):
            if i == expected["drawer"]:
                extra = got - want
                assert got >= want and len(extra) == expected["drawn_count"]
                assert extra <= expected["drawn_from"]
            else:
                assert got == want, i
    else:
        assert actual_hands == expected["hands"]
    assert list(state.pile) == expected["pile"]
    assert len(state.stock) == expected["stock_size"]
    if expected["stock"] is not None:
        assert list(state.stock) == expected["stock"]
    assert state.top == expected["top"]
    if state.deal_over:
        return
    for key in ("current", "phase", "active_suit", "pending_sevens", "direction"):
        assert getattr(state, key) == expected[key], (key, getattr(state, key), expected[key])
    if expected["has_drawn"] is not None:
        assert state.has_drawn == expected["has_drawn"]

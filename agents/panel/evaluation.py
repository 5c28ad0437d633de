"""The evaluation set's own bots: styles that nothing in training or modelling may use
(``agents.panel.EVALUATION_SET``; ``tests/agents/panel/test_panel.py`` enforces it).

They have no numba port on purpose: no rollout and no opponent model can play them. Each
reads its observation with ``agents.heuristic.ObservationReader`` and is deterministic
(ties go to the lowest card id), so ``reset(seed)`` has nothing to reseed but the base
generator.

* ``attacker``: aims 7s, 8s and 10s at the next player once it holds three cards or fewer,
  keeps a Jack and its last 7 for later, names the suit the next player drew on.
* ``rank_switcher``: steers play to its longest suit: prefers cards of that suit, then a
  Jack (naming it), and only then other cards.
* ``counter``: counts cards: plays the card whose suit and rank are scarcest among the
  cards it has not seen (the next player probably cannot follow), Jacks last.
* ``held_out_tight``: the heuristic with the ``heuristic_tight`` weights of
  ``agents.heuristic.variants`` (``held_out`` is the ``heuristic_loose`` one).
"""

from __future__ import annotations

from agents.base import Agent
from agents.heuristic.bot import ObservationReader, mask_int
from agents.heuristic.variants import HeldOutHeuristic
from pis_env.actions import DRAW, NOMINATE_BASE, PASS
from pis_env.cards import (
    CARD_POINTS,
    EIGHT,
    FULL_DECK,
    JACK,
    JACKS,
    RANK_MASKS,
    SEVEN,
    SEVENS,
    SUIT_MASKS,
    TEN,
)
from pis_env.engine import ACE_PHASE, NOMINATE


def _best(cards: int, key) -> int:
    best, best_key = -1, None
    m = cards
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        k = key(c)
        if best_key is None or k > best_key:
            best, best_key = c, k
    return best


def _suit_count(hand: int, s: int) -> int:
    return (hand & SUIT_MASKS[s] & ~JACKS).bit_count()


class _ReadingAgent(Agent):
    """Reads the observation; ``decide(legal, facts)`` makes the move."""

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None):
        super().__init__(num_players, num_deals, seed)
        self._reader = ObservationReader(num_players, num_deals)

    def act(self, observation: dict) -> int:
        self.check_observation(observation["observation"])
        legal = mask_int(observation["action_mask"])
        if not legal:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        if legal & (legal - 1) == 0:
            return legal.bit_length() - 1
        facts = self._reader.read(observation["observation"])
        if not legal & FULL_DECK and not (legal >> NOMINATE_BASE) & 0b1111:
            has_drawn = facts[5]
            if (legal >> DRAW) & 1 and (not has_drawn or not (legal >> PASS) & 1):
                return DRAW
            return PASS
        return self.decide(legal, *facts)

    def decide(self, legal, hand, top, suit, pending, phase, has_drawn, direction, sizes,
               stock, discard, voids) -> int:
        raise NotImplementedError


def _nominate(legal: int, key) -> int:
    suits = [s for s in range(4) if (legal >> (NOMINATE_BASE + s)) & 1]
    return NOMINATE_BASE + max(suits, key=lambda s: (key(s), -s))


class AttackerAgent(_ReadingAgent):
    """Aims 7s, 8s and 10s at a next player close to going out; keeps a Jack and its last 7."""

    name = "attacker"

    def decide(self, legal, hand, top, suit, pending, phase, has_drawn, direction, sizes,
               stock, discard, voids) -> int:
        n = self.num_players
        nxt = direction % n
        if phase == NOMINATE:
            return _nominate(legal, lambda s: ((voids[nxt] >> s) & 1, _suit_count(hand, s)))
        cards = legal & FULL_DECK
        if pending:
            return _best(cards, lambda c: _suit_count(hand & ~(1 << c), c // 13))
        if hand.bit_count() == 1:
            return cards.bit_length() - 1
        if sizes[nxt] <= 3:
            effects = {SEVEN: 3, EIGHT: 2, TEN: 1 if n > 2 else 0}
            aimed = _best(cards, lambda c: (effects.get(c % 13, 0), CARD_POINTS[c]))
            if effects.get(aimed % 13, 0):
                return aimed
        keep = JACKS
        if (hand & SEVENS).bit_count() == 1 and hand.bit_count() > 2:
            keep |= SEVENS
        others = cards & ~keep
        if others:
            return _best(others, lambda c: CARD_POINTS[c])
        if phase == ACE_PHASE and (legal >> PASS) & 1:
            return PASS
        if (legal >> DRAW) & 1 and not has_drawn and stock > 0 and hand.bit_count() > 2:
            return DRAW
        return _best(cards, lambda c: -CARD_POINTS[c])


class RankSwitcherAgent(_ReadingAgent):
    """Steers play to its longest suit: cards of it first, then a Jack naming it."""

    name = "rank_switcher"

    def decide(self, legal, hand, top, suit, pending, phase, has_drawn, direction, sizes,
               stock, discard, voids) -> int:
        def long_key(s):
            return (_suit_count(hand, s), sum(CARD_POINTS[c] for c in range(13 * s, 13 * s + 13)
                                              if (hand >> c) & 1 and c % 13 != JACK))

        if phase == NOMINATE:
            return _nominate(legal, long_key)
        cards = legal & FULL_DECK
        longest = max(range(4), key=lambda s: (long_key(s), -s))

        def key(c):
            if (JACKS >> c) & 1:
                return (1, CARD_POINTS[c])
            return (2 if c // 13 == longest else 0, CARD_POINTS[c])

        best = _best(cards, key)
        if key(best)[0] == 0 and (legal >> DRAW) & 1 and not has_drawn and not pending:
            return DRAW
        if key(best)[0] == 0 and phase == ACE_PHASE and (legal >> PASS) & 1:
            return PASS
        return best


class CounterAgent(_ReadingAgent):
    """Counts cards: plays where the unseen cards say the next player cannot follow."""

    name = "counter"

    def decide(self, legal, hand, top, suit, pending, phase, has_drawn, direction, sizes,
               stock, discard, voids) -> int:
        unseen = FULL_DECK & ~hand & ~discard

        def scarce(s):
            return -(unseen & SUIT_MASKS[s]).bit_count()

        if phase == NOMINATE:
            return _nominate(legal, lambda s: (_suit_count(hand, s) > 0, scarce(s)))
        cards = legal & FULL_DECK

        def key(c):
            if (JACKS >> c) & 1:
                return (0, 0, CARD_POINTS[c])
            s, r = c // 13, c % 13
            follow = (unseen & (SUIT_MASKS[s] | RANK_MASKS[r])).bit_count()
            return (1, -follow, CARD_POINTS[c])

        return _best(cards, key)


class HeldOutTightAgent(HeldOutHeuristic):
    """The heuristic with the ``heuristic_tight`` weights (``held_out?variant=...``)."""

    name = "held_out_tight"

    def __init__(self, **kwargs):
        super().__init__(variant="heuristic_tight", **kwargs)


__all__ = ["AttackerAgent", "CounterAgent", "HeldOutTightAgent", "RankSwitcherAgent"]

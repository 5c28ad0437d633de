"""The greedy bot: sheds the most penalty points it can, right now.

It plays the legal card worth the most points (J 25, 7 20, A 15, K/Q 10, spot cards face
value; ties go to the lower card id), nominates its longest suit after a Jack, takes the
Ace's extra play whenever it can, and otherwise draws; it passes only when it must (after
drawing with nothing playable, or at the end of an Ace's extra play with nothing to add).
No memory and no look-ahead: the first baseline above ``random``.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent, legal_actions
from pis_env.actions import DRAW, NOMINATE_BASE, PASS
from pis_env.cards import CARD_POINTS, JACKS, NUM_CARDS, SUIT_MASKS, points_of
from pis_env.observation import Layout


def longest_suit(hand: int, allowed: list[int]) -> int:
    """The suit among ``allowed`` with the most cards in ``hand`` (Jacks not counted: they
    follow any suit); ties go to the suit with more points, then to the lower suit."""
    def key(s: int):
        cards = hand & SUIT_MASKS[s] & ~JACKS
        return (cards.bit_count(), points_of(cards), -s)

    return max(allowed, key=key)


def greedy_action(legal: list[int], hand: int) -> int:
    """The greedy choice among the legal action ids, given the hand as a 52-bit mask."""
    cards = [a for a in legal if a < NUM_CARDS]
    if cards:
        return max(cards, key=lambda c: (CARD_POINTS[c], -c))
    nominations = [a - NOMINATE_BASE for a in legal if NOMINATE_BASE <= a < DRAW]
    if nominations:
        return NOMINATE_BASE + longest_suit(hand, nominations)
    if DRAW in legal:
        return DRAW
    if PASS in legal:
        return PASS
    raise ValueError(f"no action the greedy bot knows among {legal}")


class GreedyAgent(Agent):
    name = "greedy"

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None):
        super().__init__(num_players, num_deals, seed)
        self._hand = Layout.of(num_players, num_deals).offsets["hand"]

    def act(self, observation: dict) -> int:
        self.check_observation(observation["observation"])
        legal = legal_actions(observation).tolist()
        hand = hand_mask(observation["observation"][self._hand])
        return greedy_action(legal, hand)


def hand_mask(bits) -> int:
    """A 0/1 vector of 52 card flags as a 52-bit integer."""
    return int(sum(1 << int(c) for c in np.flatnonzero(np.asarray(bits) > 0.5)))

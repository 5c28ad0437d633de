"""The positions of an observer seat, with the truth about the hidden cards: the data the
belief model learns from (``train.belief_model.training``) and the positions at which the belief
benchmark asks every belief (``benchmarks.belief``), played one way for both.

Seat 0 is the observer. It is played by the heuristic in even games and by greedy in odd
ones, so that the positions are not one bot's. Every other seat plays the opponent kind
under study. Game ``g`` deals ``seed + g``; the observer's bot is seeded with it, the
opponent in seat ``s`` with ``(seed + g) * 8 + s``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import count

import numpy as np

from agents.base import Agent


@dataclass
class Position:
    """One decision of the observer seat."""

    game: int                 # the game's index, from 0
    first: bool               # its first decision of the game: trackers start afresh
    previous: int | None      # the observer's action since its previous position
    observation: dict         # what the env showed it: observation, action_mask
    decoded: dict             # decode_observation of it, at the env's layout
    holders: np.ndarray       # int8[52]: 0 the stock, k opponent seat k, -1 seen by it

    @property
    def choice(self) -> bool:
        """Whether the observer has more than one legal action here (the positions the
        beliefs are asked at)."""
        return int(self.observation["action_mask"].sum()) > 1


def observer_positions(num_players: int, opponent: Callable[[int], Agent], seed: int,
                       version: int = 0, games: int | None = None) -> Iterator[Position]:
    """Every decision of seat 0 in ``games`` games (``None``: until the caller stops) of
    ``pis_yedili_v<version>``; ``opponent(seed)`` makes the bot of each other seat.

    A consumer that keeps a tracker of the deal records ``previous`` and then observes
    ``decoded`` at each position (and starts a new tracker where ``first``)."""
    from agents import make
    from pis_env import decode_observation, pis_yedili_v0, pis_yedili_v1

    n = num_players
    env = (pis_yedili_v1 if version else pis_yedili_v0).raw_env(num_players=n)
    for g in range(games) if games is not None else count():
        gseed = seed + g
        me = make("heuristic" if g % 2 == 0 else "greedy", num_players=n, seed=gseed)
        bots = [me] + [opponent(gseed * 8 + s) for s in range(1, n)]
        env.reset(seed=gseed)
        previous: int | None = None
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = int(agent.split("_")[1])
            if seat != 0:
                env.step(bots[seat].act(obs))
                continue
            decoded = decode_observation(obs["observation"], n, 1, version)
            yield Position(g, previous is None, previous, obs, decoded,
                           _holders(env.unwrapped.game.hands, decoded, n))
            previous = me.act(obs)
            env.step(previous)


def _holders(hands, decoded: dict, n: int) -> np.ndarray:
    """Where each card is: opponent seat k, the stock (0), or -1 where the observer sees
    it (its hand and the discard pile)."""
    holders = np.zeros(52, dtype=np.int8)
    for k in range(1, n):
        holders[[c for c in range(52) if hands[k] >> c & 1]] = k
    holders[list(decoded["hand"])] = -1
    holders[list(decoded["discard"])] = -1
    return holders

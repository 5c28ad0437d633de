"""The agent protocol (SPEC §7) shared by every bot.

An agent offers ``act(observation) -> int`` where ``observation`` is the dict that
``env.observe(agent)`` returns (``{"observation", "action_mask"}``); it must return an
action whose mask entry is 1. ``reset()`` is called between deals and may be a no-op.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from pis_env import decode_observation


@runtime_checkable
class AgentProtocol(Protocol):
    def act(self, observation: dict) -> int: ...


class Agent:
    """Base class: remembers the table size and owns a seeded random generator."""

    name = "agent"

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None):
        if not isinstance(num_players, int) or not 2 <= num_players <= 7:
            raise ValueError(f"num_players={num_players!r}: allowed values are 2..7")
        if not isinstance(num_deals, int) or num_deals < 1:
            raise ValueError(f"num_deals={num_deals!r}: must be an int >= 1")
        self.num_players = num_players
        self.num_deals = num_deals
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Called between deals; stateless bots need nothing."""

    def decode(self, observation: dict) -> dict:
        """The named fields of an observation (``pis_env.decode_observation``)."""
        return decode_observation(observation["observation"], self.num_players, self.num_deals)

    def act(self, observation: dict) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_players={self.num_players}, seed={self.seed})"


def legal_actions(observation: dict) -> np.ndarray:
    """The legal action ids of an observation dict, ascending."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("no legal action in this observation: it is not this agent's turn")
    return legal

"""The agent protocol (docs/bots.md) shared by every bot.

An agent offers ``act(observation) -> int`` where ``observation`` is the dict that
``env.observe(agent)`` returns (``{"observation", "action_mask"}``); it must return an
action whose mask entry is 1.

``reset(seed=None)`` is called between deals and is the one seeding path: with a seed the
agent draws every later random number from that seed (the tournament reseeds the agents it
reuses, the gymnasium view reseeds its opponents from ``reset(seed=...)``); a plain
``reset()`` only forgets the deal. Callers that may hold third-party agents (the gymnasium
view) pass ``seed=`` only when ``reset`` accepts it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from pis_env import decode_observation
from pis_env.observation import LAYOUT_VERSION, LAYOUT_VERSIONS, Layout, layout_mismatch


@runtime_checkable
class AgentProtocol(Protocol):
    def act(self, observation: dict) -> int: ...


class Agent:
    """Base class: remembers the table size and owns a seeded random generator."""

    name = "agent"
    #: The observation layout the agent reads (layout N: ``pis_yedili_v{N}``). The
    #: rule-based bots read layout 0; a PPO policy the one it was trained on.
    layout_version = LAYOUT_VERSION
    #: Whether it also reads the later layouts: the rule-based bots read only named segments
    #: of layout 0, which every later layout begins with unchanged, so they play at every
    #: table (``pis_yedili_v1`` too); a network reads exactly its own layout.
    reads_later_layouts = True

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None):
        if not isinstance(num_players, int) or not 2 <= num_players <= 7:
            raise ValueError(f"num_players={num_players!r}: allowed values are 2..7")
        if not isinstance(num_deals, int) or num_deals < 1:
            raise ValueError(f"num_deals={num_deals!r}: must be an int >= 1")
        self.num_players = num_players
        self.num_deals = num_deals
        self.observation_size = Layout.of(num_players, num_deals, self.layout_version).size
        self._readable_sizes = {self.observation_size: self.layout_version}
        if self.reads_later_layouts:
            for v in LAYOUT_VERSIONS:
                if v > self.layout_version:
                    self._readable_sizes[Layout.of(num_players, num_deals, v).size] = v
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Called between deals. With ``seed``, restart the agent's random generator from
        it, so that its play from here on depends only on that seed and what it is shown.
        Bots with more per-deal state override this and call ``super().reset(seed)``."""
        if seed is not None:
            self.seed = seed
            self.rng = np.random.default_rng(seed)

    def check_observation(self, vector) -> None:
        """Refuse an observation vector of another table: the bots read features at fixed
        offsets, so a vector from another table size would be misread silently."""
        size = np.shape(vector)[-1] if np.ndim(vector) else 0
        if size not in self._readable_sizes:
            other = layout_mismatch(self.layout_version, None, self.num_players,
                                    self.num_deals, size)
            if other:
                raise ValueError(f"{self.name}: {other}")
            raise ValueError(
                f"{self.name}: observation of size {size}, but this agent was built for "
                f"{self.num_players} players and {self.num_deals} deal(s) (observation size "
                f"{self.observation_size}); build it with the table's num_players/num_deals"
            )

    def decode(self, observation: dict) -> dict:
        """The named fields of an observation (``pis_env.decode_observation``, at the
        layout its size says: a v1 observation's dict holds the v0 fields and the rest)."""
        vector = observation["observation"]
        version = self._readable_sizes.get(np.shape(vector)[-1] if np.ndim(vector) else 0,
                                           self.layout_version)
        return decode_observation(vector, self.num_players, self.num_deals, version)

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

"""The panel's network member: ``ppo_v2``, the project's previous shipped network (v2, the
start of the v3 bots' expert iteration), for the table size it sits at.

``PPOv2Agent`` is ``agents.ppo.PPOAgent`` on ``models/ppo_{n}p_v2.zip``; ``ppo_v2`` (the
registered factory) builds it once per process and table and hands out copies, since a
tournament builds a bot for every deal and reading the file dominates a deal's time;
``NetworkGamePolicy`` plays a policy file on a ``BatchedGame`` with the interface of the
other batched panel policies (``policy(game) -> actions``, ``-1`` where the match is over):
the observations and masks of the games still playing, one argmax forward pass.
"""

from __future__ import annotations

import copy

import numpy as np

from agents.ppo import PPOAgent

#: The v2 policy file of a table of ``n`` players.
V2_PATH = "models/ppo_{n}p_v2.zip"


class PPOv2Agent(PPOAgent):
    """The v2 network (``models/ppo_{n}p_v2.zip``, 2 or 4 players)."""

    name = "ppo_v2"

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None,
                 **kwargs):
        super().__init__(path=V2_PATH.format(n=num_players), num_players=num_players,
                         num_deals=num_deals, seed=seed, **kwargs)


_PROTOTYPES: dict[tuple, PPOv2Agent] = {}


def ppo_v2(num_players: int = 2, num_deals: int = 1, seed: int | None = None,
           deterministic: bool = True) -> PPOv2Agent:
    """A ``PPOv2Agent`` for the table, seeded by ``seed``: a copy of one built once per
    process (the network's weights are shared, read only; the generator is its own)."""
    key = (num_players, num_deals, bool(deterministic))
    if key not in _PROTOTYPES:
        _PROTOTYPES[key] = PPOv2Agent(num_players, num_deals, deterministic=deterministic)
    agent = copy.copy(_PROTOTYPES[key])
    agent.seed = seed
    agent.rng = np.random.default_rng(seed)
    return agent


class NetworkGamePolicy:
    """A ``TorchPolicy`` (argmax over the legal actions) as ``policy(game) -> actions``."""

    def __init__(self, network, name: str):
        self.network = network
        self.name = name

    @classmethod
    def v2(cls, num_players: int, seed: int | None = None) -> NetworkGamePolicy:
        from agents.batched_policy import TorchPolicy

        path = V2_PATH.format(n=num_players)
        return cls(TorchPolicy.from_file(path, num_players, 1, deterministic=True, seed=seed),
                   "ppo_v2")

    def from_game(self, game) -> np.ndarray:
        from pis_env.batched import kernels as K

        acts = np.full(game.num_games, -1, dtype=np.int64)
        rows = np.flatnonzero(game.st[:, K.LEGAL] != 0)
        if rows.size:
            obs = game.observe(games=rows, layout_version=self.network.layout_version)
            acts[rows] = self.network(obs, game.action_masks(games=rows))
        return acts

    __call__ = from_game

    def __repr__(self) -> str:
        return f"NetworkGamePolicy({self.name!r})"


__all__ = ["V2_PATH", "NetworkGamePolicy", "PPOv2Agent", "ppo_v2"]

"""The uniformly random legal player: the floor every other bot must beat."""

from __future__ import annotations

from agents.base import Agent, legal_actions


class RandomAgent(Agent):
    name = "random"

    def act(self, observation: dict) -> int:
        self.check_observation(observation["observation"])
        legal = legal_actions(observation)
        return int(legal[self.rng.integers(legal.size)])

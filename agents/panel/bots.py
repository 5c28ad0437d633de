"""The model set's style bots at a table: ``agents.panel.styles`` behind the agent
protocol (docs/bots.md).

Each bot reads its observation with ``agents.heuristic.ObservationReader`` (no offsets of
its own), plays its style's move, and with ``epsilon > 0`` a uniformly random legal move
instead with that probability (``styles.mixed_action``, two draws from the bot's
generator per decision, seeded by ``reset(seed)``).
"""

from __future__ import annotations

from agents.base import Agent
from agents.heuristic.bot import ObservationReader, mask_int
from agents.panel.styles import STYLES, choose, mixed_action


class StyleAgent(Agent):
    """A bot playing ``style`` (a name of ``STYLES``), a share ``epsilon`` of its moves at
    random. The subclasses below fix the style (and the epsilon) of each panel name."""

    name = "style"
    style = "greedy"
    default_epsilon = 0.0

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None,
                 epsilon: float | None = None, style: str | None = None):
        super().__init__(num_players, num_deals, seed)
        if style is not None:
            if style not in STYLES:
                raise ValueError(f"style {style!r}: one of {', '.join(STYLES)}")
            self.style = style
        epsilon = self.default_epsilon if epsilon is None else float(epsilon)
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon={epsilon!r}: must be in [0, 1]")
        self.epsilon = epsilon
        self.style_id = STYLES[self.style]
        self._reader = ObservationReader(num_players, num_deals)

    def act(self, observation: dict) -> int:
        self.check_observation(observation["observation"])
        legal = mask_int(observation["action_mask"])
        if not legal:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        if legal & (legal - 1) == 0:
            return legal.bit_length() - 1
        hand, _, _, pending, phase, has_drawn, _, _, stock, _, _ = self._reader.read(
            observation["observation"])
        action = choose(self.style_id, hand, legal, pending, phase, has_drawn, stock)
        if self.epsilon > 0.0:
            u, v = self.rng.random(2)
            action = mixed_action(action, legal, self.epsilon, float(u), float(v))
        return action


class GreedyEpsAgent(StyleAgent):
    """``greedy`` with 30% of its moves uniformly random: a random/greedy mixture."""

    name = "greedy_eps"
    style = "greedy"
    default_epsilon = 0.3


class HighShedderAgent(StyleAgent):
    """Sheds its highest-ranked card first (A, K, Q, J, 10 ... 2)."""

    name = "high_shedder"
    style = "high_shedder"


class HoarderAgent(StyleAgent):
    """Hoards its 7s and Jacks; sheds the highest-point other card."""

    name = "hoarder"
    style = "hoarder"


class SevensAgent(StyleAgent):
    """Plays a 7 whenever it can, then an 8, then its highest card; Jacks last."""

    name = "sevens"
    style = "sevens"


class CautiousAgent(StyleAgent):
    """Never plays an 8 or an Ace while it holds more than three cards."""

    name = "cautious"
    style = "cautious"


class MiserAgent(StyleAgent):
    """Plays its lowest-point card first."""

    name = "miser"
    style = "miser"


class SuitKeeperAgent(StyleAgent):
    """Plays the card after which it can follow with the most cards."""

    name = "suit_keeper"
    style = "suit_keeper"


class DrawerAgent(StyleAgent):
    """Draws at the start of every turn while the stock holds 10+ cards."""

    name = "drawer"
    style = "drawer"


class JackHappyAgent(StyleAgent):
    """Plays a Jack whenever it can; otherwise dumps its shortest suit."""

    name = "jack_happy"
    style = "jack_happy"


__all__ = ["CautiousAgent", "DrawerAgent", "GreedyEpsAgent", "HighShedderAgent",
           "HoarderAgent", "JackHappyAgent", "MiserAgent", "SevensAgent", "StyleAgent",
           "SuitKeeperAgent"]

"""The batched ports and opponent models of the shipped bots, as ``agents.registry``'s
entries name them (``"agents.ports:heuristic_port"``).

Each is a small adapter from the registry's call -- ``port(name, num_games, rules, seed,
**options)``, ``model(name, num_players, epsilon)`` -- to the bot's own batched class or
model, imported inside the function so that reading the registry loads no numba and no
torch. The bot's name comes first so that one adapter serves every style of the opponent
panel.
"""

from __future__ import annotations


# ------------------------------------------------------------------ ports
def heuristic_port(name: str, num_games: int, rules, seed: int | None = None, **options):
    """The heuristic's numba port (``agents.heuristic.batched``): the same choices, about
    a hundred times faster than the Python bot; it also plays observation rows."""
    from agents.heuristic.batched import HeuristicPolicy

    return HeuristicPolicy(num_games, rules, **options)


def greedy_port(name: str, num_games: int, rules, seed: int | None = None, **options):
    from agents.greedy.batched import GreedyPolicy

    return GreedyPolicy(num_games)


def style_port(name: str, num_games: int, rules, seed: int | None = None, **options):
    """A style of the opponent panel (``agents.panel.batched``) with its own epsilon;
    ``random``: any style with every move at random."""
    from agents.panel import STYLE_BOTS
    from agents.panel.batched import PanelPolicy

    style, epsilon = STYLE_BOTS.get(name, ("greedy", 1.0))
    policy = PanelPolicy(num_games, style, epsilon, seed=seed)
    policy.name = name
    return policy


def ppo_v2_port(name: str, num_games: int, rules, seed: int | None = None, **options):
    from agents.panel.networks import NetworkGamePolicy

    return NetworkGamePolicy.v2(rules.num_players, seed)


def ppo_port(name: str, num_games: int, rules, seed: int | None = None, *, path: str,
             **options):
    """A policy file, batched (one forward pass for all rows), its argmax as ``PPOAgent``
    plays by default."""
    from agents.batched_policy import TorchPolicy

    return TorchPolicy.from_file(path, rules.num_players, rules.num_deals,
                                 deterministic=True, name=f"ppo:{path}")


# ------------------------------------------------------------------ models
def heuristic_model(name: str, num_players: int, epsilon: float = 0.1):
    from agents.belief.opponent_models import HeuristicModel

    return HeuristicModel(epsilon)


def uniform_model(name: str, num_players: int, epsilon: float = 0.1):
    from agents.belief.opponent_models import UniformModel

    return UniformModel()


def style_model(name: str, num_players: int, epsilon: float = 0.1):
    """The exact model of a style bot (``agents.panel.models``)."""
    from agents.panel.models import StyleModel

    return StyleModel(name, epsilon)


def ppo_v2_model(name: str, num_players: int, epsilon: float = 0.1):
    from agents.belief.opponent_models import NetworkModel
    from agents.panel.networks import V2_PATH

    return NetworkModel(V2_PATH.format(n=num_players), num_players)


__all__ = ["greedy_port", "heuristic_model", "heuristic_port", "ppo_port", "ppo_v2_model",
           "ppo_v2_port", "style_model", "style_port", "uniform_model"]

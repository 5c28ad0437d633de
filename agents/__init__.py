"""Bots that play Pis Yedili through the agent protocol (docs/bots.md).

``agents.make(name, **kwargs)`` builds one by name; every agent's ``act(observation)``
returns a legal action id for an ``env.observe()`` dict.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from agents.base import Agent, AgentProtocol, legal_actions

#: name -> "module:Class"; modules are imported on demand so that no bot drags in torch.
REGISTRY = {
    "random": "agents.random_agent:RandomAgent",
    "greedy": "agents.greedy:GreedyAgent",
    "heuristic": "agents.heuristic:HeuristicAgent",
    "held_out": "agents.heuristic.variants:HeldOutHeuristic",
    "mc": "agents.mc:MonteCarloAgent",
    "search": "agents.search:SearchAgent",
    "human": "agents.ui.human:HumanAgent",
    "ppo": "agents.ppo:PPOAgent",
}


def make(name: str, **kwargs: Any) -> Agent:
    """An agent by name, e.g. ``make("heuristic", num_players=4, seed=0)`` or
    ``make("ppo", path="models/ppo_2p.zip")``. ``"ppo:PATH"`` is short for the latter."""
    if isinstance(name, str) and name.startswith("ppo:"):
        name, kwargs = "ppo", {**kwargs, "path": name[4:]}
    if name not in REGISTRY:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(REGISTRY))}")
    module_name, class_name = REGISTRY[name].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**kwargs)


def make_for_table(name: str, rules: dict, seed: int | None = None) -> Agent:
    """``make(name)`` for a table of ``rules`` (a rules options dict): the table size and
    deal count, the seed when given, and the rules themselves for bots that take
    ``rules=`` (``mc`` simulates the variant being played)."""
    kwargs: dict[str, Any] = {"num_players": int(rules["num_players"]),
                              "num_deals": int(rules.get("num_deals", 1))}
    if seed is not None:
        kwargs["seed"] = seed
    cls_path = REGISTRY.get(name.split(":", 1)[0])
    if cls_path is not None:
        module_name, class_name = cls_path.split(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        if "rules" in inspect.signature(cls).parameters:
            kwargs["rules"] = {k: v for k, v in rules.items() if k != "illegal_action"}
    return make(name, **kwargs)


__all__ = ["Agent", "AgentProtocol", "REGISTRY", "legal_actions", "make", "make_for_table"]

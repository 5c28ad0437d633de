"""Agent specs: ``"heuristic"``, ``"ppo:PATH"``, ``"pkg.mod:Class"``, each with optional
``?key=value`` arguments, built into agents for a table; in Python also an agent class
(built as ``Class(num_players=n, seed=s)``) or an agent instance (a fresh copy of it for
every seat and deal, reseeded with ``reset(seed=...)``)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from agents.registry import is_registered
from agents.spec import parse


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mc?samples=8&rollouts=2"`` -> ``("mc", {"samples": 8, "rollouts": 2})``: the
    spec's base as written and its query (``agents.spec.parse``)."""
    parsed = parse(spec, is_registered)
    return parsed.base, parsed.query


def spec_text(entry: Any) -> str:
    """The spec string that stands for an entry of ``run_tournament(agents)``: a string
    itself (stripped); ``"module:Class"`` for an agent class or instance."""
    if isinstance(entry, str):
        return entry.strip()
    cls = entry if isinstance(entry, type) else type(entry)
    if not isinstance(entry, type) and not callable(getattr(entry, "act", None)):
        raise TypeError(f"an agent must be a spec string, an agent class or an object with "
                        f"act(observation), got {entry!r}")
    return f"{cls.__module__}:{cls.__qualname__}"


def spec_kind(spec: Any) -> str:
    """The registry name a spec resolves to (``ppo`` for every policy file), or
    ``"class"`` / ``"instance"`` for a Python entry."""
    if not isinstance(spec, str):
        return "class" if isinstance(spec, type) else "instance"
    return parse(spec, is_registered).name


def build_agent(spec: Any, num_players: int, seed: int | None):
    """An agent from a spec (see the module docstring), seated at ``num_players``."""
    from agents import make

    if isinstance(spec, type):
        return spec(num_players=num_players, seed=seed)
    if not isinstance(spec, str):
        return _copy_of(spec, num_players, seed)
    return make(spec, num_players=num_players, seed=seed)


def _copy_of(agent: Any, num_players: int, seed: int | None):
    """A fresh copy of an agent instance for one seat, reseeded (the protocol's one
    seeding path), so that copies at one table share no state and results depend only on
    the tournament's seed."""
    from pis_env.wrappers import reset_opponent

    seats = getattr(agent, "num_players", num_players)
    if seats != num_players:
        raise ValueError(f"{agent!r} was built for {seats} players; this table has "
                         f"{num_players}")
    fresh = copy.deepcopy(agent)
    reset_opponent(fresh, seed)
    return fresh


def agent_labels(specs: Sequence[str]) -> list[str]:
    """Unique display labels: a spec given more than once becomes ``spec#1``, ``spec#2``."""
    counts: dict[str, int] = {}
    for s in specs:
        counts[s] = counts.get(s, 0) + 1
    seen: dict[str, int] = {}
    labels = []
    for s in specs:
        if counts[s] > 1:
            seen[s] = seen.get(s, 0) + 1
            labels.append(f"{s}#{seen[s]}")
        else:
            labels.append(s)
    return labels

"""Agent specs: ``"heuristic"``, ``"ppo:PATH"``, ``"pkg.mod:Class"``, each with optional
``?key=value`` arguments, built into agents for a table; in Python also an agent class
(built as ``Class(num_players=n, seed=s)``) or an agent instance (a fresh copy of it for
every seat and deal, reseeded with ``reset(seed=...)``)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from agents.common.cli import yaml_error_text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mc?samples=8&rollouts=2"`` -> ``("mc", {"samples": 8, "rollouts": 2})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}")
    base, _, query = spec.strip().partition("?")
    kwargs: dict[str, Any] = {}
    if query:
        import yaml

        for item in query.split("&"):
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise ValueError(f"agent spec {spec!r}: expected key=value after '?', got {item!r}")
            try:
                kwargs[key.strip()] = yaml.safe_load(value) if value.strip() else ""
            except yaml.YAMLError as e:
                raise ValueError(yaml_error_text(e, item)) from None
    return base, kwargs


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
    if not isinstance(spec, str):
        return "class" if isinstance(spec, type) else "instance"
    base, _ = parse_spec(spec)
    return base.split(":", 1)[0] if base.startswith("ppo:") else base


def build_agent(spec: Any, num_players: int, seed: int | None):
    """An agent from a spec (see the module docstring), seated at ``num_players``."""
    from agents import make

    if isinstance(spec, type):
        return spec(num_players=num_players, seed=seed)
    if not isinstance(spec, str):
        return _copy_of(spec, num_players, seed)
    base, kwargs = parse_spec(spec)
    return make(base, num_players=num_players, seed=seed, **kwargs)


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

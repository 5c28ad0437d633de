"""Agent specs: ``"heuristic"``, ``"ppo:PATH"``, ``"pkg.mod:Class"``, each with optional
``?key=value`` arguments, built into agents for a table."""

from __future__ import annotations

import importlib
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


def spec_kind(spec: str) -> str:
    base, _ = parse_spec(spec)
    return base.split(":", 1)[0] if base.startswith("ppo:") else base


def build_agent(spec: str, num_players: int, seed: int | None):
    """An agent from a spec string (see the module docstring), seated at ``num_players``."""
    from agents import REGISTRY, make

    base, kwargs = parse_spec(spec)
    head = base.split(":", 1)[0]
    if ":" in base and head not in REGISTRY:
        module_name, _, class_name = base.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"agent spec {spec!r}: cannot load {base!r}: {e}") from e
        return cls(num_players=num_players, seed=seed, **kwargs)
    return make(base, num_players=num_players, seed=seed, **kwargs)


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

"""The duplicate-deal schedule: tables, seat rotations, and the seeds of every deck, dealer
and agent (results depend only on the tournament seed), and the rules of the table (the
stacked decks of a match: ``agents.tournament.matches``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def make_tables(agents: Sequence[str], num_players: int) -> list[list[str]]:
    """The lineups played when none are given (see the module docstring)."""
    agents = list(agents)
    k, n = len(agents), num_players
    if k == 0:
        raise ValueError("a tournament needs at least one agent")
    if k == n:
        return [agents]
    if k > n:
        return [list(c) for c in itertools.combinations(agents, n)]
    others = agents[1:] or agents[:1]
    return [[agents[0]] + [others[i % len(others)] for i in range(n - 1)]]


def rotations(lineup: Sequence[str]) -> list[list[str]]:
    """``rotations(lineup)[r][seat]``: who sits in ``seat`` under rotation ``r``
    (lineup entry ``i`` sits in seat ``(i + r) % n``)."""
    n = len(lineup)
    return [[lineup[(seat - r) % n] for seat in range(n)] for r in range(n)]


def deal_setup(seed: int, deal: int, num_players: int) -> tuple[list[int], int]:
    """The deck (52 card ids, ``deck[0]`` to the dealer's left) and dealer of deal ``deal``."""
    rng = np.random.default_rng([seed, deal])
    deck = rng.permutation(52).tolist()
    return deck, int(rng.integers(num_players))


def agent_seed(seed: int, deal: int, rotation: int, seat: int) -> int:
    """The seed of the agent in ``seat`` for one (deal, rotation)."""
    return int(np.random.SeedSequence([seed, deal, rotation, seat]).generate_state(1)[0])


def env_seed(seed: int, deal: int) -> int:
    return int(np.random.SeedSequence([seed, deal, 2**31]).generate_state(1)[0])


# ---------------------------------------------------------------------------- rules
def resolve_rules(
    rules: dict | Any | str | Path | None, num_players: int | None
) -> dict[str, Any]:
    """Validated rules options (a dict) of the tournament's tables; ``num_deals > 1`` is
    the match mode (``agents.tournament.matches``)."""
    from pis_env import Rules

    if rules is None:
        r = Rules()
        given_players = None
    elif isinstance(rules, Rules):
        r, given_players = rules, rules.num_players
    elif isinstance(rules, (str, Path)):
        r = Rules.from_yaml(rules)
        given_players = r.num_players
    elif isinstance(rules, dict):
        r = Rules.from_options(**rules)
        given_players = rules.get("num_players")
    else:
        raise TypeError(f"rules must be a dict, a Rules, a YAML path or None, got {rules!r}")
    if num_players is not None:
        if given_players is not None and given_players != num_players:
            raise ValueError(
                f"num_players={num_players} conflicts with the rules' num_players={given_players}"
            )
        r = r.replace(num_players=num_players)
    return r.to_dict()

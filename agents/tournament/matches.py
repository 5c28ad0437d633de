"""Duplicate matches: the tournament's match mode, set by the rules' ``num_deals``.

With ``num_deals = k > 1`` every game of the tournament is a whole match of ``k`` deals,
as RULES.md plays the game: ``deals`` counts matches, match ``m`` stacks ``k`` decks drawn
from ``numpy.random.default_rng([seed, m])`` (its first deck and dealer are those of deal
``m`` of a one-deal tournament of the same seed; the dealer then moves one seat clockwise
each deal, as the rules say) and is replayed under every seat rotation, so every agent
holds every seat's hands of every deal of every match. A match is won by the lowest total
charge after its last deal; a tie on totals shares the win (``1/w`` to each of ``w``).
The statistics are the one-deal ones with the match in place of the deal: match win rate,
mean total, head-to-head on totals, ratings ranked by totals. Bots are built with the
table's ``num_deals`` and told of each new deal with ``reset()`` (the agent protocol's
between-deals call; without a seed, so a bot's play depends only on its seat's seed).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def match_setup(seed: int, match: int, num_players: int,
                num_deals: int) -> tuple[list[list[int]], int]:
    """The ``num_deals`` stacked decks (52 card ids each, ``deck[0]`` to the dealer's
    left) and the first dealer of match ``match``."""
    rng = np.random.default_rng([seed, match])
    decks = [rng.permutation(52).tolist()]
    dealer = int(rng.integers(num_players))
    decks += [rng.permutation(52).tolist() for _ in range(num_deals - 1)]
    return decks, dealer


def build_seat(spec: Any, num_players: int, seed: int | None, num_deals: int = 1):
    """``specs.build_agent`` for a table of ``num_deals`` deals: the bot is built with
    ``num_deals=`` (a string spec gets it as one more keyword, a class as a keyword, an
    instance must have been built for it). A bot that cannot play such a table is a
    ``ValueError`` that says what would fit; no other bot takes its place."""
    from agents.tournament.specs import build_agent, parse_spec

    if num_deals == 1:
        return _single_deal_seat(spec, num_players, seed)
    where = f"{num_deals}-deal matches (--option num_deals={num_deals})"
    if isinstance(spec, str):
        _, kwargs = parse_spec(spec)
        if "num_deals" in kwargs and kwargs["num_deals"] != num_deals:
            raise ValueError(f"agent spec {spec!r} asks for num_deals={kwargs['num_deals']}, "
                             f"but the table plays {where}: drop it from the spec (the "
                             "rules set it)")
        entry: Any = spec if "num_deals" in kwargs else (
            f"{spec}{'&' if '?' in spec else '?'}num_deals={num_deals}")
    elif isinstance(spec, type):
        try:
            return spec(num_players=num_players, num_deals=num_deals, seed=seed)
        except TypeError as e:
            raise ValueError(f"{spec.__name__} cannot play {where}: {e}; a bot for match "
                             "tables takes num_deals=") from e
    else:
        have = getattr(spec, "num_deals", None)
        if have != num_deals:
            raise ValueError(f"{spec!r} was built for num_deals={have!r}, but the table plays "
                             f"{where}: build it with num_deals={num_deals}")
        entry = spec
    try:
        return build_agent(entry, num_players, seed)
    except TypeError as e:
        if "num_deals" not in str(e):
            raise
        raise ValueError(f"agent spec {spec!r} cannot play {where}: it takes no num_deals "
                         "(a bot for match tables takes num_deals=; without it, play "
                         "single deals: num_deals=1)") from e


def _single_deal_seat(spec: Any, num_players: int, seed: int | None):
    """``build_agent`` for a one-deal table. A bot built for more deals (a network trained
    on matches takes its file's ``num_deals`` unless told) is built again with
    ``num_deals=1``, so that one that cannot play single deals says so in its own words
    before any game (``ppo``: "seat it at a 4-deal table"), as at a match table of
    another length, instead of failing at its first observation; one that can is
    returned."""
    from agents.tournament.specs import build_agent, parse_spec

    agent = build_agent(spec, num_players, seed)
    have = getattr(agent, "num_deals", 1)
    if have in (None, 1):
        return agent
    where = "single deals (num_deals=1)"
    if isinstance(spec, str):
        _, kwargs = parse_spec(spec)
        if "num_deals" in kwargs:
            raise ValueError(f"agent spec {spec!r} asks for num_deals={kwargs['num_deals']}, "
                             f"but the table plays {where}: drop it from the spec (the "
                             "rules set it)")
        try:
            return build_agent(f"{spec}{'&' if '?' in spec else '?'}num_deals=1",
                               num_players, seed)
        except TypeError as e:
            if "num_deals" not in str(e):
                raise
            raise ValueError(f"agent spec {spec!r} builds a bot for num_deals={have!r}, but "
                             f"the table plays {where}: {e}") from e
    if isinstance(spec, type):
        try:
            return spec(num_players=num_players, num_deals=1, seed=seed)
        except TypeError as e:
            raise ValueError(f"{spec.__name__} builds a bot for num_deals={have!r}, but the "
                             f"table plays {where}: {e}") from e
    raise ValueError(f"{spec!r} was built for num_deals={have!r}, but the table plays "
                     f"{where}: build it with num_deals=1")


def play_match(env, players: list, decks: list[list[int]], dealer: int, env_seed: int,
               move) -> tuple[list[int], list[bool], str, int]:
    """Play one whole match at ``env`` (a ``raw_env`` of the match's rules) from its
    stacked decks; ``move(seat, deal)`` plays (steps) one move of the seat to move. The
    ``players`` are reset between deals. Returns the
    totals, the match winners (the lowest total; a tie makes several), the last deal's
    end reason (``"truncated"`` when a deal ran out of turns: the match is left out) and
    the number of moves."""
    env.reset(seed=env_seed, options={"deck": decks, "dealer": dealer})
    game = env.game
    deal, moves = 0, 0
    while not game.match_over:
        if game.deal_index != deal:
            deal = game.deal_index
            for p in players:
                reset = getattr(p, "reset", None)
                if reset is not None:
                    reset()
        move(game.current, deal)
        moves += 1
    totals = [int(t) for t in game.totals]
    low = min(totals)
    return totals, [t == low for t in totals], str(game.end_reason), moves


__all__ = ["build_seat", "match_setup", "play_match"]

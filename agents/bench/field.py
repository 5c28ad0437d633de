"""Playing a bot against a field: a table of ``n`` seats holds the bot and ``n - 1`` copies
of one field member, under every seat rotation, on duplicate decks (one tournament of
``agents.tournament.run_tournament`` for all the tables, so every table plays the same
decks). ``pis-bench`` (``agents.bench.card``) plays the reference field this way and
``python -m benchmarks.panel`` the opponent panel; both read the results with
:func:`table_shares`.

Why one place: the card and the panel matrix must count a shared win, a truncated deal
and a bot that is also a member (``heuristic`` against copies of ``heuristic``) the same
way, and the tournament's own statistics pool every table an agent sits at, where these
need one figure per (bot, member) table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.panel import EVALUATION_SET
from agents.tournament import agent_labels, run_tournament
from agents.tournament.worker import TRUNCATED, TableResult

#: The reference field of the benchmark card: fast bots that do not change (no network,
#: no search), each of which sits at every table size from 2 to 7. ``heuristic`` is the
#: anchor of the rating scale (``agents.bench.rating``).
REFERENCE_FIELD: tuple[str, ...] = ("random", "greedy", "heuristic", *EVALUATION_SET)
#: The table sizes the card plays and the stored ratings cover.
TABLE_SIZES = range(2, 8)


def table_shares(table_result: TableResult, bot: str) -> tuple[np.ndarray, np.ndarray]:
    """``bot``'s wins (shared wins ``1/w``) and valid seat-deals per deck, [D] each, over
    the seats it holds in every rotation of a ``TableResult``."""
    valid = table_result.reasons != TRUNCATED                      # [D, R]
    nwin = table_result.winners.sum(axis=2)                        # [D, R]
    share = np.where(nwin > 0, 1.0 / np.maximum(nwin, 1), 0.0)
    wins = np.zeros(valid.shape[0])
    games = np.zeros(valid.shape[0])
    for r, seats in enumerate(table_result.seating):
        for s, label in enumerate(seats):
            if label == bot:
                wins += np.where(valid[:, r], table_result.winners[:, r, s] * share[:, r], 0.0)
                games += valid[:, r]
    return wins, games


def table_charges(table_result: TableResult, bot: str) -> np.ndarray:
    """``bot``'s summed charges per deck, [D], over the seats it holds in every rotation
    (truncated deals left out; divide by :func:`table_shares`'s games for the mean). In
    match mode the charges are the match totals."""
    valid = table_result.reasons != TRUNCATED
    total = np.zeros(valid.shape[0])
    for r, seats in enumerate(table_result.seating):
        for s, label in enumerate(seats):
            if label == bot:
                total += np.where(valid[:, r], table_result.charges[:, r, s], 0)
    return total


@dataclass
class TablePlay:
    """One (bot, member) table read for the bot: its wins (shared wins ``1/w``), valid
    seat-deals and summed charges per deck, [D] each, and the table's truncated
    seat-deals."""

    wins: np.ndarray
    games: np.ndarray
    charges: np.ndarray
    truncated: int


def table_play(table_result: TableResult, bot: str) -> TablePlay:
    """A finished table's :class:`TablePlay` for the agent labelled ``bot``."""
    wins, games = table_shares(table_result, bot)
    return TablePlay(wins, games, table_charges(table_result, bot),
                     int((table_result.reasons == TRUNCATED).sum()))


@dataclass
class FieldPlay:
    """Per-deck figures of every (bot, member) table, keyed by the specs as given:
    ``wins[bot][member]`` (shared wins ``1/w``), ``games`` (valid seat-deals) and
    ``charges`` (summed), [D] each."""

    bots: list[str]
    members: list[str]
    num_players: int
    decks: int
    seed: int
    num_deals: int
    wins: dict[str, dict[str, np.ndarray]]
    games: dict[str, dict[str, np.ndarray]]
    charges: dict[str, dict[str, np.ndarray]]
    truncated: int
    elapsed_s: float
    workers: int


def play_field(bots: Sequence[str], members: Sequence[str], num_players: int = 2,
               decks: int = 200, seed: int = 0, workers: int | None = 2,
               progress: bool = True, num_deals: int = 1, backend: str = "local",
               address: str | None = None,
               pairs: Sequence[tuple[str, str]] | None = None,
               on_table: Callable[[str, str, TablePlay], None] | None = None) -> FieldPlay:
    """Play every bot against ``num_players - 1`` copies of every member, all tables in
    one tournament (the same ``decks`` decks from ``seed`` at every table, each under
    every rotation); ``num_deals > 1`` plays ``decks`` matches of that many deals (the
    tournament's match mode). ``pairs`` (``(bot, member)``) plays only those tables; a
    table's results do not depend on the other tables played beside it (every deal and
    seat is seeded on its own). ``on_table(bot, member, table_play)`` is called as each
    table finishes (a long run can keep them)."""
    specs = list(bots) + list(members)
    labels = agent_labels(specs)
    bot_labels, member_labels = labels[:len(bots)], labels[len(bots):]
    chosen = [(bl, b, ml, m) for bl, b in zip(bot_labels, bots)
              for ml, m in zip(member_labels, members)
              if pairs is None or (b, m) in pairs]
    if not chosen:
        raise ValueError("no (bot, member) table to play")
    tables = [[bl] + [ml] * (num_players - 1) for bl, _, ml, _ in chosen]
    rules: dict[str, Any] = {"num_players": num_players}
    if num_deals != 1:
        rules["num_deals"] = num_deals
    finished = None if on_table is None else \
        (lambda t, table_result: on_table(chosen[t][1], chosen[t][3],
                                          table_play(table_result, chosen[t][0])))
    result = run_tournament(specs, num_players=num_players, deals=decks, seed=seed,
                            rules=rules, workers=workers, progress=progress, tables=tables,
                            backend=backend, address=address, on_table=finished)
    wins: dict[str, dict[str, np.ndarray]] = {}
    games: dict[str, dict[str, np.ndarray]] = {}
    charges: dict[str, dict[str, np.ndarray]] = {}
    for tr, (b, bot_spec, _, member) in zip(result.table_results, chosen):
        played = table_play(tr, b)
        wins.setdefault(bot_spec, {})[member] = played.wins
        games.setdefault(bot_spec, {})[member] = played.games
        charges.setdefault(bot_spec, {})[member] = played.charges
    return FieldPlay(bots=list(bots), members=list(members), num_players=num_players,
                     decks=decks, seed=seed, num_deals=num_deals, wins=wins, games=games,
                     charges=charges, truncated=result.truncated,
                     elapsed_s=result.elapsed_s, workers=result.workers)


__all__ = ["REFERENCE_FIELD", "TABLE_SIZES", "FieldPlay", "TablePlay", "play_field",
           "table_charges", "table_play", "table_shares"]

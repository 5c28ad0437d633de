"""Saving a tournament's games as replayable histories (``--record N``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from agents.tournament.deals import agent_seed, env_seed
from agents.tournament.matches import build_seat, match_setup, play_match
from agents.tournament.results import TournamentResult
from agents.tournament.worker import seat_observation


def record_games(result: TournamentResult, count: int, out_dir: str | Path) -> list[Path]:
    """Save the tournament's first ``count`` games (table, deal, rotation order) as
    ``export_history()`` JSON files in ``out_dir``, with ``index.json`` naming who sat
    where. Each game is played again from its seeds (deck, dealer, agent seeds: results
    never depend on the worker that played them), and a game whose charges differ from
    the tournament's is an error rather than a wrong record. In match mode a game is a
    whole match (its history holds every deal)."""
    from pis_env import raw_env

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    env = raw_env(**result.rules)
    n, seed, num_deals = result.num_players, result.seed, result.num_deals
    encoders: dict = {}
    index: list[dict[str, Any]] = []
    games = ((t, d, r) for t in range(len(result.table_results))
             for d in range(result.deals) for r in range(n))
    for t, d, r in itertools.islice(games, count):
        labels = result.table_results[t].seating[r]
        players = [build_seat(result.specs[labels[s]], n, agent_seed(seed, d, r, s), num_deals)
                   for s in range(n)]
        # a deal is a one-deal match: one path, every seat shown its own layout version
        decks, dealer = match_setup(seed, d, n, num_deals)
        versions = [getattr(p, "layout_version", env.layout_version) for p in players]

        def move(s: int, _deal: int, players=players, versions=versions) -> None:
            env.step(players[s].act(seat_observation(env, s, versions[s], encoders)))

        charges = play_match(env, players, decks, dealer, env_seed(seed, d), move)[0]
        if charges != result.table_results[t].charges[d, r].tolist():
            raise RuntimeError(f"table {t}, deal {d}, rotation {r} played differently when "
                               "recorded: a bot does not play the same from the same seed")
        name = f"table{t}-deal{d}-rotation{r}.json"
        (out / name).write_text(env.export_history())
        index.append({"file": name, "table": t, "deal": d, "rotation": r,
                      "seats": list(labels), "charges": list(charges)})
    (out / "index.json").write_text(json.dumps(index, indent=1))
    return [out / g["file"] for g in index]

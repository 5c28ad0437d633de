"""Measures the charge distribution of one deal at every table size and writes it to
``agents/data/deal_charges.json``: the model of the deals left that the match-aware
search and Monte Carlo bots score a rollout with (``agents.match_value``).

Why a measured table: a match is won on the total charge after the last deal, so the
worth of a deal's outcome depends on how far later deals can move the totals. The deals
are played by the heuristic at every seat, the policy that plays the bots' own rollouts,
on the batched engine (seed rules, fresh random decks). Per table size the file holds how
many deals were played and a histogram of the charges of the seats other than the deal's
winner (one seat charged 0 is taken out of each deal; an empty-stock tie leaves its other
zeros in): the model of a deal that ``match_value`` draws from is one winner at a random
seat, charged 0, and every other seat charged a draw from that histogram.

    python scripts/measure_deal_charges.py            # 20,000 deals per table size
    python scripts/measure_deal_charges.py --deals 2000 --out /tmp/charges.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "agents" / "data" / "deal_charges.json"


def measure(num_players: int, deals: int, seed: int) -> list[list[int]]:
    """``deals`` charge vectors of heuristic self-play deals at ``num_players`` seats
    (truncated deals, which the seed rules never reach, are left out)."""
    from agents.heuristic.batched import HeuristicPolicy
    from pis_env.batched import BatchedGame
    from pis_env.rules import Rules

    rules = Rules(num_players=num_players)
    game = BatchedGame(deals, rules, seed=seed)
    game.reset(seed=seed)
    bot = HeuristicPolicy(deals, rules)
    charges = np.zeros((deals, num_players), np.int64)
    ended = np.zeros(deals, bool)
    while not ended.all():
        acts = bot(game)
        acts[ended] = -1
        out = game.step(acts, write_obs=False)
        new = (out.reason > 0) & ~ended
        charges[new] = out.charges[new]
        ended |= new | (out.reason == 4)
        charges[out.reason == 4] = -1
    keep = (charges >= 0).all(axis=1)
    return charges[keep].tolist()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=20000, help="deals per table size")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    table = {"format": "pis-yedili-deal-charges", "format_version": 1,
             "policy": "heuristic at every seat", "rules": "seed rules",
             "seed": args.seed, "charges": {}}  # per table size: deals, values, counts
    for n in range(2, 8):
        rows = np.asarray(measure(n, args.deals, args.seed + n))
        others = np.sort(rows, axis=1)[:, 1:].ravel()  # one zero (the winner) out per deal
        values, counts = np.unique(others, return_counts=True)
        table["charges"][str(n)] = {"deals": int(len(rows)), "values": values.tolist(),
                                    "counts": counts.tolist()}
        print(f"{n} players: {len(rows)} deals, mean charge of a non-winner "
              f"{others.mean():.2f}, of a seat {rows.mean():.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(table, separators=(",", ":")) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Evaluation of a saved policy against baseline bots on duplicate deals.

Each opponent gets its own ``agents.tournament.run_tournament`` table: the policy against
copies of the opponent at every other seat, every deal replayed under every seat rotation.
With the rules' ``num_deals`` above 1 the tournament plays duplicate matches: ``deals``
counts matches, the win rate is the match win rate and the charges are match totals.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)


def evaluate(policy_path: str | Path, rules: dict, opponents: list[str], deals: int,
             seed: int = 0, workers: int | None = None, progress: bool = True,
             out_dir: str | Path | None = None, verbose: bool = True) -> list[dict]:
    """One row per opponent: the policy's win rate (95% Wilson interval) and mean charges.

    Writes ``eval_<opponent>.json`` (the tournament's full result) and ``eval.json`` (the
    rows) into ``out_dir`` when given."""
    from agents.tournament import run_tournament

    n = int(rules["num_players"])
    path = Path(policy_path).resolve()
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        rel = str(path)
    spec = f"ppo:{rel if not rel.startswith('..') else path}"
    table_rules = {k: v for k, v in rules.items() if k != "illegal_action"}
    rows = []
    for opp in opponents:
        result = run_tournament([spec, opp], num_players=n, deals=deals, seed=seed,
                                rules=table_rules, workers=workers, progress=progress)
        me = result.stats[result.agents[0]]
        them = result.stats[result.agents[1]]
        h2h = result.head_to_head.get(result.agents[0], {}).get(result.agents[1])
        row = {
            "opponent": opp,
            "num_players": n,
            "num_deals": int(rules.get("num_deals", 1)),
            "deals": deals,
            "seat_deals": me.games,
            "win_rate": me.win_rate,
            "win_low": me.win_low,
            "win_high": me.win_high,
            "mean_charge": me.mean_charge,
            "opponent_mean_charge": them.mean_charge,
            "fair_share": 1.0 / n,
            "beats_rate": h2h.rate if h2h else None,
            "beats_low": h2h.low if h2h else None,
            "beats_high": h2h.high if h2h else None,
            "elapsed_s": result.elapsed_s,
        }
        rows.append(row)
        if verbose:
            print(f"\n=== policy vs {opp} ===")
            print(result.table())
        if out_dir is not None:
            safe = opp.replace("/", "_").replace(":", "_").replace("?", "_")
            result.to_json(Path(out_dir) / f"eval_{safe}.json")
    if out_dir is not None:
        Path(out_dir, "eval.json").write_text(json.dumps(rows, indent=2) + "\n",
                                              encoding="utf-8")
    if verbose and rows:
        print("\n" + summary_table(rows))
    return rows


def summary_table(rows: list[dict]) -> str:
    """Markdown: the policy's win rate and mean charge against each opponent."""
    if not rows:
        return ""
    n = rows[0]["num_players"]
    unit = ("deals" if rows[0].get("num_deals", 1) == 1
            else f"matches of {rows[0]['num_deals']} deals")
    charge = "charge" if unit == "deals" else "total"
    lines = [
        f"| opponent ({n} players{', 1 policy vs ' + str(n - 1) + ' copies' if n > 2 else ''}) "
        f"| duplicate {unit} | policy win rate [95% CI] | policy mean {charge} "
        f"| opponent mean {charge} |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['opponent']} | {r['deals']} | {100 * r['win_rate']:.1f}% "
            f"[{100 * r['win_low']:.1f}, {100 * r['win_high']:.1f}] | {r['mean_charge']:.2f} "
            f"| {r['opponent_mean_charge']:.2f} |"
        )
    return "\n".join(lines)

"""The shipped bots against every member of the opponent panel (``agents.panel``), on
duplicate deals: the matrix, with 95% intervals, and the mean over each set.

    python -m benchmarks.panel                                   # every shipped bot
    python -m benchmarks.panel --bots heuristic,greedy --decks 200 --workers 2
    python -m benchmarks.panel --bots search --decks 30 --members attacker,counter
    python -m benchmarks.panel --players 4 --decks 100          # three copies of each member

Every (bot, member) pair is one table of ``agents.bench.field.play_field`` (the bot,
then ``players - 1`` copies of the member), all tables in one tournament: the same decks
(``--seed``) at every table, each under every seat rotation. A cell is the bot's win share
at that table (a shared win counts ``1/w``; the deal win rate at two players) with Wilson's
95% interval over its seat-deals, as the tournament reports win rates. A set's mean is
the mean over decks of each deck's mean share over the set's members (the mean of the
cells when no deal is truncated), with a normal interval over decks: the rotations of a
deck and the tables sharing it are correlated, decks are not. Every other bot's set mean
is also paired with the first bot's, deck by deck (``minus <first bot>, paired``).
Truncated deals are left out, as in the tournament.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
from collections.abc import Sequence

import numpy as np

from agents.bench.field import play_field, table_shares
from agents.panel import EVALUATION_SET, MODEL_SET, panel
from agents.tournament.stats import mean_ci, wilson_interval

#: Re-exported: the card (``pis-bench``) and this matrix read tables alike.
__all__ = ["SHIPPED", "format_markdown", "format_matrix", "main", "panel_matrix",
           "table_shares"]

#: The shipped bots (``{n}``: the table size, for the network's file).
SHIPPED = ("heuristic", "search", "ppo:models/ppo_{n}p.zip", "mc", "greedy", "random")


def panel_matrix(bots: Sequence[str], members: Sequence[str], num_players: int = 2,
                 decks: int = 200, seed: int = 0, workers: int | None = 2,
                 progress: bool = True) -> dict:
    """Play the matrix; returns ``{"cells": {bot: {member: (rate, low, high, games)}},
    "means": {bot: {set: (mean, low, high)}}, ...}`` (set: ``"model"``, ``"evaluation"``,
    over the members given that belong to it). The tables are ``agents.bench.field``'s,
    as ``pis-bench`` plays them."""
    played = play_field(bots, members, num_players, decks, seed, workers, progress)
    cells: dict[str, dict[str, tuple]] = {}
    per_deck: dict[str, dict[str, np.ndarray]] = {}
    for bot_spec in bots:
        cells[bot_spec] = {}
        per_deck[bot_spec] = {}
        for member in members:
            wins, games = played.wins[bot_spec][member], played.games[bot_spec][member]
            total = float(games.sum())
            rate = float(wins.sum()) / total if total else math.nan
            low, high = wilson_interval(float(wins.sum()), int(total)) if total else \
                (math.nan, math.nan)
            cells[bot_spec][member] = (rate, low, high, int(total))
            per_deck[bot_spec][member] = np.where(games > 0, wins / np.maximum(games, 1),
                                                  np.nan)
    means: dict[str, dict[str, tuple]] = {}
    paired: dict[str, dict[str, tuple]] = {}
    for name, group in (("model", MODEL_SET), ("evaluation", EVALUATION_SET)):
        chosen = [m for m in members if m in group]
        if not chosen:
            continue
        deck_means = {b: np.nanmean(np.stack([per_deck[b][m] for m in chosen]), axis=0)
                      for b in bots}                                   # [D] each
        for bot_spec in bots:
            own = deck_means[bot_spec]
            means.setdefault(bot_spec, {})[name] = mean_ci(own[~np.isnan(own)])
            if bot_spec != bots[0]:  # the same decks: paired deck by deck with the first
                diff = own - deck_means[bots[0]]
                paired.setdefault(bot_spec, {})[name] = mean_ci(diff[~np.isnan(diff)])
    return {"cells": cells, "means": {b: means.get(b, {}) for b in bots}, "paired": paired,
            "players": num_players, "decks": decks, "seed": seed,
            "truncated": played.truncated, "elapsed_s": played.elapsed_s}


def _cell(v: tuple) -> str:
    rate, low, high = v[:3]
    if math.isnan(rate):
        return "-"
    return f"{100 * rate:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def format_matrix(out: dict) -> str:
    """The matrix as text: one row per member (model set, then evaluation set), one
    column per bot, then the set means."""
    bots = list(out["cells"])
    members = list(next(iter(out["cells"].values())))
    n = out["players"]
    what = "win rate" if n == 2 else f"win share (with {n - 1} copies of the member)"
    lines = [f"Panel: {what} in %, 95% interval; {out['decks']} duplicate decks x {n} "
             f"rotations, {n} players, seed {out['seed']}"
             + (f"; {out['truncated']} truncated deals left out" if out["truncated"] else "")]
    rows = [("member", "set", *bots)]
    for m in members:
        group = "model" if m in MODEL_SET else "evaluation" if m in EVALUATION_SET else "-"
        rows.append((m, group, *(_cell(out["cells"][b][m]) for b in bots)))
    for name in ("model", "evaluation"):
        if any(name in out["means"][b] for b in bots):
            rows.append((f"mean, {name} set", "",
                         *(_cell(out["means"][b].get(name, (math.nan,) * 3)) for b in bots)))
    for name in ("model", "evaluation"):
        if any(name in out["paired"].get(b, {}) for b in bots):
            rows.append((f"minus {bots[0]}, paired", name, "", *(
                _points(out["paired"][b].get(name)) if b in out["paired"] else ""
                for b in bots[1:])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if j < 2 else c.rjust(w)
                               for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _points(v: tuple | None) -> str:
    """A paired difference in points, 95% interval (signed)."""
    if v is None or math.isnan(v[0]):
        return "-"
    return f"{100 * v[0]:+.1f} [{100 * v[1]:+.1f}, {100 * v[2]:+.1f}]"


def format_markdown(out: dict) -> str:
    """The matrix as a Markdown table (docs/results.md): members as rows, bots as columns,
    then the set means in bold."""
    bots = list(out["cells"])
    members = list(next(iter(out["cells"].values())))
    lines = ["| member | set | " + " | ".join(f"`{b}`" for b in bots) + " |",
             "| --- | --- |" + " ---: |" * len(bots)]
    for m in members:
        group = "model" if m in MODEL_SET else "evaluation" if m in EVALUATION_SET else "-"
        lines.append(f"| `{m}` | {group} | "
                     + " | ".join(_cell(out["cells"][b][m]) for b in bots) + " |")
    for name in ("model", "evaluation"):
        if any(name in out["means"][b] for b in bots):
            lines.append(f"| **mean, {name} set** | | " + " | ".join(
                f"**{_cell(out['means'][b].get(name, (math.nan,) * 3))}**" for b in bots)
                + " |")
    return "\n".join(lines)


def _names(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.panel", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", default=",".join(SHIPPED),
                   help="comma-separated agent specs for the columns ({n}: the table size; "
                        "default: %(default)s)")
    p.add_argument("--members", default=",".join(panel()),
                   help="comma-separated panel members for the rows (default: all)")
    p.add_argument("--decks", type=int, default=200, help="duplicate decks (default 200)")
    p.add_argument("--players", type=int, default=2, help="table size (default 2)")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--seed", type=int, default=0, help="the decks' seed (default 0)")
    p.add_argument("--json", default=None, help="also write the figures to this JSON file")
    p.add_argument("--markdown", action="store_true",
                   help="also print the matrix as a Markdown table")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    n = args.players
    bots = [b.replace("{n}", str(n)) for b in _names(args.bots)]
    members = _names(args.members)
    if not bots or not members:
        print("python -m benchmarks.panel: --bots and --members need at least one name each",
              file=sys.stderr)
        return 2
    unknown = [m for m in members if m not in panel()]
    if unknown:
        print(f"python -m benchmarks.panel: not panel members: {', '.join(unknown)} (the "
              f"panel: {', '.join(panel())})", file=sys.stderr)
        return 2
    out = panel_matrix(bots, members, n, args.decks, args.seed, args.workers)
    print(format_matrix(out))
    if args.markdown:
        print()
        print(format_markdown(out))
    print(f"({out['elapsed_s']:.0f} s, {datetime.date.today().isoformat()})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

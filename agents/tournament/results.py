"""A tournament's statistics and their output: the table, CSV, JSON and the plot."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.tournament.stats import (
    Rating,
    bootstrap_mean_ci,
    openskill_ratings,
    ranks_from_scores,
    wilson_interval,
)
from agents.tournament.worker import REASONS, TRUNCATED, TableResult


@dataclass
class AgentStats:
    label: str
    spec: str
    games: int  # seat-deals played (truncated deals excluded)
    wins: float  # shared wins count 1/w
    outright_wins: int
    win_rate: float
    win_low: float
    win_high: float
    mean_charge: float
    charge_low: float
    charge_high: float
    rating_mu: float
    rating_sigma: float
    rating_ordinal: float


@dataclass
class HeadToHead:
    agent: str
    opponent: str
    games: int  # seat pairs compared
    score: float  # pairs where agent was charged less, ties count half
    rate: float
    low: float
    high: float
    mean_charge_diff: float  # agent's charge minus opponent's, per pair


@dataclass
class TournamentResult:
    """What ``run_tournament`` returns; see the module docstring for the statistics."""

    agents: list[str]  # labels, in the order given
    specs: dict[str, str]  # label -> spec string
    num_players: int
    deals: int
    seed: int
    rules: dict[str, Any]
    tables: list[list[str]]
    stats: dict[str, AgentStats]
    head_to_head: dict[str, dict[str, HeadToHead]]
    ratings: dict[str, Rating]
    table_results: list[TableResult] = field(repr=False)
    truncated: int = 0
    mean_decisions: float = 0.0
    elapsed_s: float = 0.0
    workers: int = 1

    # ------------------------------------------------------------ views
    @property
    def num_deals(self) -> int:
        """Deals per game: 1, or the match mode's ``num_deals`` (then every count, win and
        charge here is a match's: ``agents.tournament.matches``)."""
        return int(self.rules.get("num_deals", 1))

    def _game_words(self) -> tuple[str, str, str]:
        """``(game, seat-games column, charge column)`` in the table's words."""
        if self.num_deals > 1:
            return "match", "seat-matches", "mean total"
        return "deal", "seat-deals", "mean charge"

    def h2h_matrix(self) -> np.ndarray:
        """``M[i, j]``: agent i's head-to-head rate against agent j (NaN when they never
        met or i == j), in the order of ``agents``."""
        k = len(self.agents)
        m = np.full((k, k), np.nan)
        for i, a in enumerate(self.agents):
            for j, b in enumerate(self.agents):
                h = self.head_to_head.get(a, {}).get(b)
                if h is not None and h.games:
                    m[i, j] = h.rate
        return m

    def ranking(self) -> list[AgentStats]:
        """Agents by win rate, best first (then by mean charge)."""
        return sorted(self.stats.values(), key=lambda s: (-s.win_rate, s.mean_charge))

    def rules_text(self) -> str:
        from pis_env import Rules

        default = Rules(num_players=self.num_players).to_dict()
        changed = [f"{k}={v}" for k, v in self.rules.items() if default.get(k) != v]
        return ", ".join(changed) if changed else "seed rules (defaults)"

    def table(self) -> str:
        """A plain-text report: per-agent statistics, then the head-to-head matrix."""
        n = self.num_players
        game, seat_games, charge = self._game_words()
        what = (f"{self.deals} duplicate matches of {self.num_deals} deals"
                if self.num_deals > 1 else f"{self.deals} duplicate deals")
        lines = [
            f"Tournament: {len(self.agents)} agents, {n} players, {what} "
            f"x {n} seat rotations, {len(self.tables)} table(s), seed {self.seed}",
            f"Rules: {self.rules_text()}",
        ]
        if self.truncated:
            lines.append(f"Truncated {game}{'es' if game == 'match' else 's'} left out: "
                         f"{self.truncated}")
        rows = [("agent", seat_games, "win rate", "95% CI", charge, "95% CI",
                 "OpenSkill mu", "sigma", "ordinal")]
        for s in self.ranking():
            rows.append((
                s.label, str(s.games), f"{100 * s.win_rate:.1f}%",
                f"[{100 * s.win_low:.1f}, {100 * s.win_high:.1f}]",
                f"{s.mean_charge:.2f}", f"[{s.charge_low:.2f}, {s.charge_high:.2f}]",
                f"{s.rating_mu:.2f}", f"{s.rating_sigma:.2f}", f"{s.rating_ordinal:.2f}",
            ))
        lines += ["", *_format_rows(rows)]
        if len(self.agents) > 1:
            what = (f"{game} win rate" if n == 2 else
                    f"share of {game}es charged less" if game == "match" else
                    "share of deals charged less")
            lines += ["", f"Head-to-head: row's {what} against column [95% Wilson interval]"]
            order = [s.label for s in self.ranking()]
            hrows = [("", *order)]
            for a in order:
                cells = []
                for b in order:
                    h = self.head_to_head.get(a, {}).get(b)
                    if a == b or h is None or not h.games:
                        cells.append("-")
                    else:
                        cells.append(f"{100 * h.rate:.1f}% [{100 * h.low:.1f}, {100 * h.high:.1f}]")
                hrows.append((a, *cells))
            lines += _format_rows(hrows)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Everything but the raw arrays, JSON-ready."""
        return {
            "agents": self.agents,
            "specs": self.specs,
            "num_players": self.num_players,
            "deals": self.deals,
            "seed": self.seed,
            "rules": self.rules,
            "tables": self.tables,
            "truncated": self.truncated,
            "mean_decisions": self.mean_decisions,
            "elapsed_s": self.elapsed_s,
            "workers": self.workers,
            "stats": {k: _clean(asdict(v)) for k, v in self.stats.items()},
            "head_to_head": {
                a: {b: _clean(asdict(h)) for b, h in row.items()}
                for a, row in self.head_to_head.items()
            },
        }

    def to_json(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    def to_csv(self, path: str | Path) -> None:
        """One row per agent (best first) with every statistic."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        names = list(AgentStats.__dataclass_fields__)
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(names)
            for s in self.ranking():
                w.writerow([getattr(s, k) for k in names])

    def head_to_head_csv(self, path: str | Path) -> None:
        """One row per ordered pair of agents that met."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        names = list(HeadToHead.__dataclass_fields__)
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(names)
            for row in self.head_to_head.values():
                for h in row.values():
                    w.writerow([getattr(h, k) for k in names])

    def deals_csv(self, path: str | Path) -> None:
        """Every seat of every played deal: table, deal, rotation, seat, agent, charge,
        winner, end reason. In match mode a row is a seat of a match: ``deal`` is the
        match, ``charge`` its total, ``winner`` the match winner (a tie on totals marks
        every tied seat), ``end_reason`` the last deal's, ``decisions`` the match's."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["table", "deal", "rotation", "seat", "agent", "charge", "winner",
                        "end_reason", "decisions"])
            for t, tr in enumerate(self.table_results):
                for d in range(tr.charges.shape[0]):
                    for r, labels in enumerate(tr.seating):
                        reason = REASONS[tr.reasons[d, r]]
                        for s, label in enumerate(labels):
                            w.writerow([t, d, r, s, label, int(tr.charges[d, r, s]),
                                        int(tr.winners[d, r, s]), reason,
                                        int(tr.decisions[d, r])])

    def plot(self, path: str | Path) -> None:
        """``tournament.png``: :meth:`figure` saved at 110 dpi."""
        import matplotlib.pyplot as plt

        fig = self.figure()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        plt.close(fig)

    def figure(self):
        """A matplotlib ``Figure``: win rates with their Wilson intervals, mean charges
        with their intervals, and (several agents) the head-to-head matrix, agents in
        ranking order. Close it with ``plt.close`` when done."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        order = self.ranking()
        labels = [s.label for s in order]
        x = np.arange(len(order))
        panels = 3 if len(self.agents) > 1 else 2
        fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.4))
        ax = axes[0]
        rate = np.array([s.win_rate for s in order]) * 100
        err = np.array([[s.win_rate - s.win_low for s in order],
                        [s.win_high - s.win_rate for s in order]]) * 100
        ax.bar(x, rate, yerr=err, capsize=5, color="tab:blue", alpha=0.8)
        ax.axhline(100 / self.num_players, color="grey", ls="--", lw=1, label="even share")
        ax.set_xticks(x, labels, rotation=20, ha="right")
        ax.set_ylabel(f"{self._game_words()[0]} win rate (%)")
        ax.set_title("Win rate (95% Wilson interval)")
        ax.legend(loc="best", fontsize=8)
        ax = axes[1]
        mean = np.array([s.mean_charge for s in order])
        cerr = np.array([[s.mean_charge - s.charge_low for s in order],
                         [s.charge_high - s.mean_charge for s in order]])
        ax.bar(x, mean, yerr=np.nan_to_num(cerr), capsize=5, color="tab:red", alpha=0.8)
        ax.set_xticks(x, labels, rotation=20, ha="right")
        ax.set_ylabel("mean total per match (points)" if self.num_deals > 1
                      else "mean charge per deal (points)")
        ax.set_title("Mean charge (95% interval), lower is better")
        if panels == 3:
            ax = axes[2]
            idx = [self.agents.index(label) for label in labels]
            m = self.h2h_matrix()[np.ix_(idx, idx)] * 100
            im = ax.imshow(m, cmap="RdYlGn", vmin=0, vmax=100)
            ax.set_xticks(x, labels, rotation=20, ha="right")
            ax.set_yticks(x, labels)
            for i in range(len(labels)):
                for j in range(len(labels)):
                    if not math.isnan(m[i, j]):
                        ax.text(j, i, f"{m[i, j]:.0f}", ha="center", va="center", fontsize=8)
            ax.set_title("Head-to-head: row vs column (%)")
            fig.colorbar(im, ax=ax, fraction=0.046)
        fig.suptitle(
            f"{self.deals} duplicate {'matches' if self.num_deals > 1 else 'deals'}, "
            f"{self.num_players} players, seed {self.seed}",
            fontsize=10,
        )
        fig.tight_layout()
        return fig

    def save(self, out_dir: str | Path) -> list[Path]:
        """Write ``summary.csv``, ``head_to_head.csv``, ``deals.csv``, ``results.json``,
        ``table.txt`` and ``tournament.png`` into ``out_dir``; returns the paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "summary.csv", out / "head_to_head.csv", out / "deals.csv",
                 out / "results.json", out / "table.txt", out / "tournament.png"]
        self.to_csv(paths[0])
        self.head_to_head_csv(paths[1])
        self.deals_csv(paths[2])
        self.to_json(paths[3])
        paths[4].write_text(self.table() + "\n", encoding="utf-8")
        self.plot(paths[5])
        return paths


def _clean(d: dict) -> dict:
    """NaN -> None so that the JSON is standard."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def _format_rows(rows: Sequence[tuple[str, ...]], right_from: int = 1) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if i >= right_from else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  ".join(cells).rstrip())
    return out


# ---------------------------------------------------------------------------- statistics
def summarize(
    labels: list[str], specs: dict[str, str], results: list[TableResult], deals: int
) -> tuple[dict[str, AgentStats], dict[str, dict[str, HeadToHead]], dict[str, Rating], int]:
    wins = {a: 0.0 for a in labels}
    outright = {a: 0 for a in labels}
    games = {a: 0 for a in labels}
    charge_sum = {a: np.zeros(deals) for a in labels}
    charge_cnt = {a: np.zeros(deals) for a in labels}
    pair_games: dict[tuple[str, str], int] = {}
    pair_score: dict[tuple[str, str], float] = {}
    pair_diff: dict[tuple[str, str], float] = {}
    truncated = 0
    for tr in results:
        valid = tr.reasons != TRUNCATED  # [D, R]
        truncated += int((~valid).sum())
        nwin = tr.winners.sum(axis=2)  # [D, R]
        share = np.where(nwin > 0, 1.0 / np.maximum(nwin, 1), 0.0)
        n = tr.charges.shape[2]
        for r, seats in enumerate(tr.seating):
            v = valid[:, r]
            for s, a in enumerate(seats):
                w = tr.winners[:, r, s] & v
                wins[a] += float((w * share[:, r]).sum())
                outright[a] += int((w & (nwin[:, r] == 1)).sum())
                games[a] += int(v.sum())
                charge_sum[a] += np.where(v, tr.charges[:, r, s], 0)
                charge_cnt[a] += v
            for sa, sb in itertools.permutations(range(n), 2):
                a, b = seats[sa], seats[sb]
                if a == b:
                    continue
                ca = tr.charges[v, r, sa].astype(np.int64)
                cb = tr.charges[v, r, sb].astype(np.int64)
                key = (a, b)
                pair_games[key] = pair_games.get(key, 0) + int(ca.size)
                pair_score[key] = pair_score.get(key, 0.0) + float(
                    (ca < cb).sum() + 0.5 * (ca == cb).sum())
                pair_diff[key] = pair_diff.get(key, 0.0) + float((ca - cb).sum())
    ratings = openskill_ratings(rating_games(results), players=labels)
    stats = {}
    for a in labels:
        lo, hi = wilson_interval(wins[a], games[a]) if games[a] else (math.nan, math.nan)
        cnt = charge_cnt[a]
        per_deal = charge_sum[a][cnt > 0] / cnt[cnt > 0]
        mean, clo, chi = bootstrap_mean_ci(per_deal)  # over decks; a charge is >= 0
        rt = ratings[a]
        stats[a] = AgentStats(
            label=a, spec=specs[a], games=games[a], wins=wins[a], outright_wins=outright[a],
            win_rate=wins[a] / games[a] if games[a] else math.nan, win_low=lo, win_high=hi,
            mean_charge=mean, charge_low=clo, charge_high=chi,
            rating_mu=rt.mu, rating_sigma=rt.sigma, rating_ordinal=rt.ordinal,
        )
    h2h: dict[str, dict[str, HeadToHead]] = {}
    for (a, b), g in pair_games.items():
        sc = pair_score[(a, b)]
        lo, hi = wilson_interval(sc, g) if g else (math.nan, math.nan)
        h2h.setdefault(a, {})[b] = HeadToHead(
            agent=a, opponent=b, games=g, score=sc, rate=sc / g if g else math.nan,
            low=lo, high=hi, mean_charge_diff=pair_diff[(a, b)] / g if g else math.nan,
        )
    h2h = {a: dict(sorted(h2h[a].items(), key=lambda kv: labels.index(kv[0])))
           for a in labels if a in h2h}
    return stats, h2h, ratings, truncated


def rating_games(results: list[TableResult]):
    """(names, ranks) per played deal in a fixed order: deal, table, rotation."""
    if not results:
        return
    deals = results[0].charges.shape[0]
    for d in range(deals):
        for tr in results:
            for r, seats in enumerate(tr.seating):
                if tr.reasons[d, r] == TRUNCATED:
                    continue
                charges: dict[str, list[int]] = {}
                for s, a in enumerate(seats):
                    charges.setdefault(a, []).append(int(tr.charges[d, r, s]))
                if len(charges) < 2:
                    continue
                names = list(charges)
                means = [sum(c) / len(c) for c in charges.values()]
                yield names, ranks_from_scores(means)

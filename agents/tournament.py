"""Duplicate-deal tournaments between bots.

::

    python -m agents.tournament --agents heuristic,greedy,random --players 2 --deals 10000

or from Python (the training code uses this)::

    from agents.tournament import run_tournament
    result = run_tournament(["heuristic", "greedy", "random"], num_players=2, deals=10000)
    print(result.table())
    result.to_json("runs/t/results.json"); result.to_csv("runs/t/summary.csv")
    result.plot("runs/t/tournament.png")

**Agent specs** are strings: any name of ``agents.make`` (``"heuristic"``),
``"ppo:PATH"``, or ``"package.module:Class"`` for your own bot (built as
``Class(num_players=n, seed=s)``), each optionally followed by ``?key=value&key=value``
keyword arguments (values read as YAML scalars: ``mc?samples=8&rollouts=2``). Every worker
process builds its own agents from these strings. The same spec given twice is labelled
``spec#1``, ``spec#2``.

**Duplicate deals.** Deal ``d`` uses a deck and a dealer drawn from
``numpy.random.default_rng([seed, d])``, the same at every table. At a table of ``n``
seats the deal is replayed under the ``n`` cyclic rotations of the lineup (rotation ``r``
puts lineup entry ``i`` in seat ``(i + r) % n``), so every agent holds every seat's hand
of every deal. Agents are built fresh for each (deal, rotation, seat) and seeded from
``(seed, d, r, seat)`` (agents whose loading is costly, ``ppo``, are built once per
process and reseeded with ``agent.reset(seed=...)``, the agent protocol's one seeding path);
the environment's own RNG (only used by the ``reshuffle``
variant) from ``(seed, d)``. So results depend only on the seed, never on the number of
workers or how deals are split between them.

**Tables.** With ``k`` agents and ``n`` players: explicit ``tables`` (lineups of ``n``
agents) are used as given; otherwise ``k == n`` is one table of everyone, ``k > n`` is a
round robin over every combination of ``n`` agents (all pairs for 2 players), and
``k < n`` is one table with the first agent against copies of the others, filling the
remaining seats in order and cycling (``[ppo, heuristic]`` at 4 seats is
``ppo, heuristic, heuristic, heuristic``; ``[a, b, c]`` at 5 is ``a, b, c, b, c``).

**Statistics** (per agent, over every seat it held in every deal; an agent with copies
at a table counts every copy's seat):

- *win rate*: a deal's winners share one win, so a win shared by ``w`` players (an
  empty-stock tie) counts ``1/w`` to each; the win rates of a table's seats add up to 1.
  The 95% interval is Wilson's score interval over the seat-deals.
- *mean charge* per deal (the deal's penalty points after multipliers; lower is
  better) with a 95% normal interval computed over deals: the agent's average over its
  seats and rotations of one deck is one independent observation (duplicate rotations of
  one deck are correlated, decks are not).
- *head-to-head* (``result.head_to_head[a][b]``): over every deal where ``a`` and ``b``
  sat at the same table, the share of seat pairs in which ``a`` was charged less than
  ``b`` (equal charges count half), with a Wilson interval, and the mean charge
  difference. With 2 players this is ``a``'s deal win rate against ``b``.
- *OpenSkill* ratings (Plackett-Luce) from every played deal in a fixed order (deal,
  then table, then rotation), ranking the agents at the table by charge (copies of one
  agent enter once, with their mean charge).

Deals truncated by ``max_turns`` (charges all 0, no winner) are left out of every
statistic and counted in ``result.truncated``.

**Progress** goes to stderr: a tqdm bar on a terminal; in a log (stderr not a terminal) a
plain line every ``PROGRESS_EVERY_S`` seconds and one at the end.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import itertools
import json
import math
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .cli import (
    check_out_dir,
    error_exit,
    parse_options,
    positive_int,
    read_rules,
    yaml_error_text,
)
from .stats import Rating, mean_ci, openskill_ratings, ranks_from_scores, wilson_interval

#: The most deals per work unit (fewer for short runs, so that every worker has work).
CHUNK_DEALS = 25
#: End reasons, as stored in ``TableResult.reasons``.
REASONS = ("going_out", "empty_stock", "illegal", "truncated")
_TRUNCATED = REASONS.index("truncated")
#: Agent kinds built once per process and reseeded before every deal.
_CACHED_KINDS = ("ppo",)
#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_EVERY_S = 30.0


# ---------------------------------------------------------------------------- specs
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


def _kind(spec: str) -> str:
    base, _ = parse_spec(spec)
    return base.split(":", 1)[0] if base.startswith("ppo:") else base


def build_agent(spec: str, num_players: int, seed: int | None):
    """An agent from a spec string (see the module docstring), seated at ``num_players``."""
    from . import REGISTRY, make

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
    """Validated rules options (a dict) for single-deal tournament tables."""
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
    if r.num_deals != 1:
        raise ValueError(
            f"a tournament plays single deals (num_deals=1), got num_deals={r.num_deals}; "
            "use the deals count instead"
        )
    return r.to_dict()


# ---------------------------------------------------------------------------- playing
@dataclass
class TableResult:
    """Raw results of one table: arrays indexed ``[deal, rotation, seat]``."""

    lineup: list[str]
    seating: list[list[str]]  # seating[rotation][seat] -> agent label
    charges: np.ndarray  # int32 [D, R, n]
    winners: np.ndarray  # bool  [D, R, n]
    reasons: np.ndarray  # uint8 [D, R], index into REASONS
    decisions: np.ndarray  # int32 [D, R], actions taken in the deal


_WORKER: dict[str, Any] = {}


def _init_pool_worker(config: dict[str, Any]) -> None:
    """The pool's initializer. A forked worker inherits the parent's signal handlers (the
    training CLI turns SIGTERM into KeyboardInterrupt), and ``Pool.terminate`` sends SIGTERM:
    with the inherited handler every idle worker would print a traceback. Workers die
    quietly on SIGTERM and ignore SIGINT (Ctrl-C reaches the whole process group; the parent
    handles it and terminates the pool)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _init_worker(config)


def _init_worker(config: dict[str, Any]) -> None:
    _WORKER.clear()
    _WORKER.update(config)
    _WORKER["cache"] = {}
    _WORKER["env"] = None


def _get_agent(spec: str, n: int, seed: int, seat: int):
    if _kind(spec) in _CACHED_KINDS:
        cache = _WORKER["cache"]
        key = (spec, seat)
        if key not in cache:
            cache[key] = build_agent(spec, n, seed)
        agent = cache[key]
        agent.reset(seed=seed)
        return agent
    return build_agent(spec, n, seed)


def _play_chunk(task: tuple[int, int, int]):
    """Play deals ``start..stop-1`` of table ``t`` under every rotation."""
    from pis_env import raw_env

    t, start, stop = task
    cfg = _WORKER
    if cfg["env"] is None:
        cfg["env"] = raw_env(**cfg["rules"])
    env = cfg["env"]
    n = cfg["rules"]["num_players"]
    seed = cfg["seed"]
    seating = cfg["seatings"][t]
    specs = cfg["specs"]
    count = stop - start
    charges = np.zeros((count, n, n), np.int32)
    winners = np.zeros((count, n, n), bool)
    reasons = np.zeros((count, n), np.uint8)
    decisions = np.zeros((count, n), np.int32)
    names = env.possible_agents
    for i, d in enumerate(range(start, stop)):
        deck, dealer = deal_setup(seed, d, n)
        eseed = env_seed(seed, d)
        for r in range(n):
            labels = seating[r]
            players = [
                _get_agent(specs[labels[s]], n, agent_seed(seed, d, r, s), s) for s in range(n)
            ]
            env.reset(seed=eseed, options={"deck": deck, "dealer": dealer})
            game = env.game
            while not game.deal_over:
                s = game.current
                try:
                    action = players[s].act(env.observe(names[s]))
                    env.step(action)
                except Exception as e:
                    raise RuntimeError(
                        f"agent {labels[s]!r} in seat {s} failed at table {t}, deal {d}, "
                        f"rotation {r}: {type(e).__name__}: {e}"
                    ) from e
            charges[i, r] = game.charges
            winners[i, r] = game.winners
            reasons[i, r] = REASONS.index(game.end_reason)
            decisions[i, r] = game.turns
    return t, start, charges, winners, reasons, decisions


def record_games(result: TournamentResult, count: int, out_dir: str | Path) -> list[Path]:
    """Save the tournament's first ``count`` games (table, deal, rotation order) as
    ``export_history()`` JSON files in ``out_dir``, with ``index.json`` naming who sat
    where. Each game is played again from its seeds (deck, dealer, agent seeds: results
    never depend on the worker that played them), and a game whose charges differ from
    the tournament's is an error rather than a wrong record."""
    from pis_env import raw_env

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    env = raw_env(**result.rules)
    n, seed = result.num_players, result.seed
    index: list[dict[str, Any]] = []
    games = ((t, d, r) for t in range(len(result.table_results))
             for d in range(result.deals) for r in range(n))
    for t, d, r in itertools.islice(games, count):
        labels = result.table_results[t].seating[r]
        players = [build_agent(result.specs[labels[s]], n, agent_seed(seed, d, r, s))
                   for s in range(n)]
        deck, dealer = deal_setup(seed, d, n)
        env.reset(seed=env_seed(seed, d), options={"deck": deck, "dealer": dealer})
        while not env.game.deal_over:
            s = env.game.current
            env.step(players[s].act(env.observe(env.possible_agents[s])))
        if env.game.charges != result.table_results[t].charges[d, r].tolist():
            raise RuntimeError(f"table {t}, deal {d}, rotation {r} played differently when "
                               "recorded: a bot does not play the same from the same seed")
        name = f"table{t}-deal{d}-rotation{r}.json"
        (out / name).write_text(env.export_history())
        index.append({"file": name, "table": t, "deal": d, "rotation": r,
                      "seats": list(labels), "charges": list(env.game.charges)})
    (out / "index.json").write_text(json.dumps(index, indent=1))
    return [out / g["file"] for g in index]


# ---------------------------------------------------------------------------- results
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
        lines = [
            f"Tournament: {len(self.agents)} agents, {n} players, {self.deals} duplicate deals "
            f"x {n} seat rotations, {len(self.tables)} table(s), seed {self.seed}",
            f"Rules: {self.rules_text()}",
        ]
        if self.truncated:
            lines.append(f"Truncated deals left out: {self.truncated}")
        rows = [("agent", "seat-deals", "win rate", "95% CI", "mean charge", "95% CI",
                 "OpenSkill mu", "sigma", "ordinal")]
        for s in self.ranking():
            rows.append((
                s.label, str(s.games), f"{100 * s.win_rate:.1f}%",
                f"[{100 * s.win_low:.1f}, {100 * s.win_high:.1f}]",
                f"{s.mean_charge:.2f}", f"[{s.charge_low:.2f}, {s.charge_high:.2f}]",
                f"{s.rating_mu:.2f}", f"{s.rating_sigma:.2f}", f"{s.rating_ordinal:.2f}",
            ))
        lines += ["", *_format_rows(rows, right_from=1)]
        if len(self.agents) > 1:
            what = "deal win rate" if n == 2 else "share of deals charged less"
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
            lines += _format_rows(hrows, right_from=1)
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
        winner, end reason."""
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
        """A PNG: win rates with their Wilson intervals, mean charges with their
        intervals, and (several agents) the head-to-head matrix."""
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
        ax.set_ylabel("deal win rate (%)")
        ax.set_title("Win rate (95% Wilson interval)")
        ax.legend(loc="best", fontsize=8)
        ax = axes[1]
        mean = np.array([s.mean_charge for s in order])
        cerr = np.array([[s.mean_charge - s.charge_low for s in order],
                         [s.charge_high - s.mean_charge for s in order]])
        ax.bar(x, mean, yerr=np.nan_to_num(cerr), capsize=5, color="tab:red", alpha=0.8)
        ax.set_xticks(x, labels, rotation=20, ha="right")
        ax.set_ylabel("mean charge per deal (points)")
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
            f"{self.deals} duplicate deals, {self.num_players} players, seed {self.seed}",
            fontsize=10,
        )
        fig.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        plt.close(fig)

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


def _format_rows(rows: list[tuple[str, ...]], right_from: int = 1) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if i >= right_from else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  ".join(cells).rstrip())
    return out


# ---------------------------------------------------------------------------- statistics
def _summarize(
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
        valid = tr.reasons != _TRUNCATED  # [D, R]
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
    ratings = openskill_ratings(_rating_games(results), players=labels)
    stats = {}
    for a in labels:
        lo, hi = wilson_interval(wins[a], games[a]) if games[a] else (math.nan, math.nan)
        cnt = charge_cnt[a]
        per_deal = charge_sum[a][cnt > 0] / cnt[cnt > 0]
        mean, clo, chi = mean_ci(per_deal)
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


def _rating_games(results: list[TableResult]):
    """(names, ranks) per played deal in a fixed order: deal, table, rotation."""
    if not results:
        return
    deals = results[0].charges.shape[0]
    for d in range(deals):
        for tr in results:
            for r, seats in enumerate(tr.seating):
                if tr.reasons[d, r] == _TRUNCATED:
                    continue
                charges: dict[str, list[int]] = {}
                for s, a in enumerate(seats):
                    charges.setdefault(a, []).append(int(tr.charges[d, r, s]))
                if len(charges) < 2:
                    continue
                names = list(charges)
                means = [sum(c) / len(c) for c in charges.values()]
                yield names, ranks_from_scores(means)


# ---------------------------------------------------------------------------- driver
def run_tournament(
    agents: Sequence[str],
    num_players: int | None = None,
    deals: int = 1000,
    seed: int = 0,
    rules: dict | Any | str | Path | None = None,
    workers: int | None = None,
    progress: bool = True,
    tables: Sequence[Sequence[str]] | None = None,
    backend: str = "local",
    address: str | None = None,
) -> TournamentResult:
    """Play a duplicate-deal tournament; see the module docstring.

    Args:
        agents: agent spec strings (``"heuristic"``, ``"ppo:models/x.zip"``,
            ``"mypkg.bots:MyBot"``, ``"mc?samples=8"``). May be empty when ``tables``
            names them.
        num_players: seats per table; default the rules' ``num_players`` (2 by default).
        deals: distinct decks; each is played under every seat rotation at every table.
        seed: a non-negative int; the same seed gives the same results.
        rules: rules options (dict), a ``pis_env.Rules``, or a rules YAML path.
        workers: processes, an int >= 1 (default ``None``: every core); 1 plays in this
            process.
        progress: show the progress on stderr (a tqdm bar on a terminal, else a line now
            and then).
        tables: explicit lineups (lists of ``num_players`` agent specs or labels).
        backend: ``"local"`` (processes on this machine) or ``"ray"`` (chunks as Ray tasks,
            ``agents.ray_backend``; the same results). With ``"ray"``, ``workers`` caps the
            tasks in flight (default: the cluster's CPUs).
        address: the Ray cluster (default ``RAY_ADDRESS``, else a local Ray).
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be an int >= 1, got {deals!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"workers must be an int >= 1 (or None for every core), got {workers!r}")
    from .ray_backend import check_backend

    check_backend(backend, address)
    rules_dict = resolve_rules(rules, num_players)
    n = rules_dict["num_players"]
    specs_list = [str(a).strip() for a in agents]
    if not specs_list and tables:
        for lineup in tables:
            for a in lineup:
                if a not in specs_list:
                    specs_list.append(a)
    labels = agent_labels(specs_list)
    specs = dict(zip(labels, specs_list))
    for s in dict.fromkeys(specs_list):  # fail early, in this process, on a bad spec
        try:
            build_agent(s, n, None)
        except (ValueError, TypeError, ImportError) as e:
            raise ValueError(f"agent spec {s!r}: {e}") from e
    if tables:
        lineups = []
        for lineup in tables:
            lineup = [_resolve_label(str(a).strip(), labels, specs_list) for a in lineup]
            if len(lineup) != n:
                raise ValueError(f"table {lineup} has {len(lineup)} seats, expected {n}")
            lineups.append(lineup)
    else:
        lineups = make_tables(labels, n)
    seatings = [rotations(lineup) for lineup in lineups]
    config = {"rules": rules_dict, "seed": seed, "seatings": seatings, "specs": specs}

    session = None
    if backend == "ray":  # connected before the clock starts: ray.init is not play time
        from .ray_backend import RaySession

        session = RaySession(address)
    if workers is None:
        workers = session.cpus if session is not None else _cpu_count()
    # Work units of up to CHUNK_DEALS deals, small enough to keep every worker busy. The
    # split never changes the results: each deal is seeded on its own.
    chunk = max(1, min(CHUNK_DEALS, -(-deals * len(lineups) // (8 * workers))))
    tasks = [
        (t, start, min(start + chunk, deals))
        for t in range(len(lineups))
        for start in range(0, deals, chunk)
    ]
    workers = min(workers, len(tasks))
    charges = [np.zeros((deals, n, n), np.int32) for _ in lineups]
    winners = [np.zeros((deals, n, n), bool) for _ in lineups]
    reasons = [np.zeros((deals, n), np.uint8) for _ in lineups]
    decisions = [np.zeros((deals, n), np.int32) for _ in lineups]

    bar = _progress_bar(deals * len(lineups), progress)
    start_time = time.perf_counter()

    def store(out) -> None:
        t, start, c, w, rs, dc = out
        stop = start + c.shape[0]
        charges[t][start:stop] = c
        winners[t][start:stop] = w
        reasons[t][start:stop] = rs
        decisions[t][start:stop] = dc
        bar.update(c.shape[0])

    try:
        if session is not None:
            session.run_unordered(tasks, _play_chunk, store, workers, _init_worker, (config,))
        elif workers == 1:
            saved = dict(_WORKER)
            _init_worker(config)
            try:
                for task in tasks:
                    store(_play_chunk(task))
            finally:
                _WORKER.clear()
                _WORKER.update(saved)
        else:
            import multiprocessing as mp

            with mp.get_context().Pool(workers, _init_pool_worker, (config,)) as pool:
                for out in pool.imap_unordered(_play_chunk, tasks):
                    store(out)
    finally:
        bar.close()
        if session is not None:
            session.close()
    elapsed = time.perf_counter() - start_time

    results = [
        TableResult(lineup=lineups[t], seating=seatings[t], charges=charges[t],
                    winners=winners[t], reasons=reasons[t], decisions=decisions[t])
        for t in range(len(lineups))
    ]
    stats, h2h, ratings, truncated = _summarize(labels, specs, results, deals)
    played = [lab for lab in labels if any(lab in lineup for lineup in lineups)]
    all_decisions = np.concatenate([d.ravel() for d in decisions])
    return TournamentResult(
        agents=played, specs={a: specs[a] for a in played}, num_players=n, deals=deals,
        seed=seed, rules=rules_dict, tables=lineups,
        stats={a: stats[a] for a in played}, head_to_head=h2h,
        ratings={a: ratings[a] for a in played}, table_results=results, truncated=truncated,
        mean_decisions=float(all_decisions.mean()), elapsed_s=elapsed, workers=workers,
    )


def _resolve_label(entry: str, labels: list[str], specs: list[str]) -> str:
    if entry in labels:
        return entry
    matches = [lab for lab, s in zip(labels, specs) if s == entry]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValueError(f"table entry {entry!r} is ambiguous: use one of {matches}")
    raise ValueError(f"table entry {entry!r} is not one of the agents {labels}")


class LineProgress:
    """Progress for a log file: ``desc: done/total deals (p%), t s`` on its own line every
    ``every`` seconds and once at the end, where tqdm would redraw its bar with hundreds of
    carriage returns."""

    def __init__(self, total: int, desc: str = "tournament", every: float | None = None,
                 file=None):
        self.total = total
        self.desc = desc
        self.every = PROGRESS_EVERY_S if every is None else every
        self.file = file if file is not None else sys.stderr
        self.done = 0
        self._start = self._last = time.perf_counter()
        self._closed = False

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self._last >= self.every and self.done < self.total:
            self._last = now
            self._line(now)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._line(time.perf_counter())

    def _line(self, now: float) -> None:
        share = 100 * self.done / self.total if self.total else 100.0
        print(f"{self.desc}: {self.done}/{self.total} deals ({share:.0f}%), "
              f"{now - self._start:.1f} s", file=self.file, flush=True)


def _progress_bar(total: int, progress: bool):
    """tqdm on a terminal, ``LineProgress`` in a log, a silent tqdm when off."""
    from tqdm import tqdm

    if progress and not _isatty(sys.stderr):
        return LineProgress(total)
    return tqdm(total=total, unit="deal", desc="tournament", disable=not progress,
                file=sys.stderr, dynamic_ncols=True)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agents.tournament",
        description="Duplicate-deal tournament between Pis Yedili bots.",
        epilog="Agent specs: a registered name (random, greedy, heuristic, mc, ppo:PATH), or "
        "module:Class; append ?key=value&... for keyword arguments.",
    )
    p.add_argument("--agents", default="", help="comma-separated agent specs")
    p.add_argument("--players", type=int, default=None,
                   help="seats per table (default: the rules' num_players, else 2)")
    p.add_argument("--deals", type=int, default=1000, help="distinct duplicate deals")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rules", default=None, help="rules YAML file (configs/rules/*.yaml)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules option, e.g. --option seven_penalty=double (repeatable)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="processes, >= 1 (default: all cores)")
    p.add_argument("--out", default="runs/tournament",
                   help="output folder (checked before any game is played)")
    p.add_argument("--table", action="append", default=[], metavar="A,B,...",
                   help="an explicit lineup (repeatable); replaces the automatic tables")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes, or chunks of deals as Ray tasks (same results)")
    p.add_argument("--address", default=None,
                   help="Ray cluster address with --backend ray (default: RAY_ADDRESS, "
                   "else a local Ray)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-save", action="store_true", help="print the table only")
    p.add_argument("--record", type=int, default=0, metavar="N",
                   help="save the first N games as export_history() JSON in OUT/histories "
                   "(for the browser table's replay view)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; bad input is one line on stderr and exit code 2, before any game."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        from pis_env import Rules

        options = parse_options(args.option)
        if args.players is not None:
            options["num_players"] = args.players
        rules = read_rules(args.rules, **options) if args.rules else Rules.from_options(**options)
        agents = [a for a in args.agents.split(",") if a.strip()]
        tables = [[a for a in t.split(",") if a.strip()] for t in args.table]
        if not agents and not tables:
            raise ValueError("give --agents A,B,... (or --table lineups)")
        if args.record < 0:
            raise ValueError(f"--record must be >= 0, got {args.record}")
        if not args.no_save or args.record:
            check_out_dir(args.out)
        result = run_tournament(
            agents, num_players=None, deals=args.deals, seed=args.seed, rules=rules,
            workers=args.workers, progress=not args.no_progress, tables=tables or None,
            backend=args.backend, address=args.address,
        )
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        return error_exit(parser.prog, str(e))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    print(result.table())
    print(f"\n{result.deals * len(result.tables) * result.num_players} games in "
          f"{result.elapsed_s:.1f} s on {result.workers} worker(s)")
    if not args.no_save:
        try:
            paths = result.save(args.out)
        except OSError as e:
            print(f"{parser.prog}: error: cannot write the results to {args.out}: {e}",
                  file=sys.stderr)
            return 1
        print("wrote " + ", ".join(str(p) for p in paths))
    if args.record:
        try:
            saved = record_games(result, args.record, Path(args.out) / "histories")
        except (OSError, RuntimeError) as e:
            return error_exit(parser.prog, f"--record: {e}")
        print(f"recorded {len(saved)} game(s) in {Path(args.out) / 'histories'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

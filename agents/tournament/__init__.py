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

**Matches.** With the rules' ``num_deals > 1`` (``--option num_deals=4``) every game is a
whole match and ``deals`` counts matches: match ``m`` stacks ``num_deals`` decks from
``default_rng([seed, m])`` and is replayed under every rotation; the statistics below are
then the match's (match win rate with a tie on totals shared, mean total, head-to-head on
totals, ratings by totals). See ``agents.tournament.matches``.

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
  better) with a 95% interval computed over deals: the agent's average over its seats
  and rotations of one deck is one independent observation (duplicate rotations of one
  deck are correlated, decks are not), and the interval is a seeded percentile bootstrap
  of these (``stats.bootstrap_mean_ci``): it stays within them, so never below zero.
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
plain line every ``PROGRESS_EVERY_S`` seconds and one at the end. It counts deals, or
matches in the match mode.

**Modules** (one job each): ``specs`` (agent spec strings), ``deals`` (tables, rotations,
seeds, rules), ``matches`` (the match mode), ``worker`` (playing chunks of deals in a
process), ``driver`` (``run_tournament``: the pool or Ray, then the statistics),
``results`` (statistics and the table, CSV, JSON, plot), ``progress``, ``record``
(``--record``), ``cli``.
"""

from agents.tournament.cli import build_parser, main
from agents.tournament.deals import (
    agent_seed,
    deal_setup,
    env_seed,
    make_tables,
    resolve_rules,
    rotations,
)
from agents.tournament.driver import CHUNK_DEALS, run_tournament
from agents.tournament.progress import PROGRESS_EVERY_S, LineProgress
from agents.tournament.record import record_games
from agents.tournament.results import AgentStats, HeadToHead, TournamentResult
from agents.tournament.specs import agent_labels, build_agent, parse_spec
from agents.tournament.worker import REASONS, TableResult

__all__ = [
    "CHUNK_DEALS", "PROGRESS_EVERY_S", "REASONS", "AgentStats", "HeadToHead", "LineProgress",
    "TableResult", "TournamentResult", "agent_labels", "agent_seed", "build_agent",
    "build_parser", "deal_setup", "env_seed", "main", "make_tables", "parse_spec",
    "record_games", "resolve_rules", "rotations", "run_tournament",
]

"""Milliseconds per decision of the search bot (``agents.search``) against heuristics, at
every table size from 2 to 7 players (``--players`` picks some), in one process.

    python -m benchmarks.search                      # a short run (about a minute)
    python -m benchmarks.search --decks 10           # the results page's figure
    python -m benchmarks.search --players 2,4        # some table sizes
    python -m benchmarks.search --rollouts 256 --rollout-policy network
    python -m benchmarks.search --determinize particles   # the particle filter (v1 table)
    python -m benchmarks.search --rollout-policy types --opponent-model "panel?networks=0"

Each table size plays ``--decks`` duplicate decks (``agents.tournament.deals``), every
rotation of one search bot among heuristics, and times the search bot's decisions with a
choice (forced moves cost nothing and are not counted). ``--determinize particles`` plays
at a ``pis_yedili_v1`` table (the filter reads its exact public events) and counts the
filter's update in the time; the other modes play at ``pis_yedili_v0``. The first timed
decision of each table size is played once beforehand, untimed, so that the numba
kernels' compilation is not in the figure. Figures are wall-clock; run on a quiet machine.
"""

from __future__ import annotations

import argparse
import time

from agents import make
from agents.bench.cli import parse_sizes
from agents.search import (
    DEFAULT_DETERMINIZE,
    DEFAULT_ROLLOUTS,
    FALLBACKS,
    MODES,
    ROLLOUT_POLICIES,
)
from agents.tournament.deals import deal_setup
from pis_env import pis_yedili_v1, raw_env

#: Decks per table size of the default run: a figure in well under a minute.
DEFAULT_DECKS = 3


def _play(n: int, deck_index: int, seed: int, rotation: int, rollouts: int,
          rollout_policy: str | None, determinize: str = DEFAULT_DETERMINIZE,
          **options) -> tuple[float, int]:
    """One deal with the search bot in seat ``rotation``: (seconds, searched decisions)."""
    deck, dealer = deal_setup(seed, deck_index, n)
    env = (pis_yedili_v1.raw_env if determinize == "particles" else raw_env)(num_players=n)
    env.reset(seed=deck_index, options={"deck": deck, "dealer": dealer})
    bots = [make("heuristic", num_players=n) for _ in range(n)]
    if rollout_policy is not None:
        options["rollout_policy"] = rollout_policy
    bots[rotation] = make("search", num_players=n, seed=deck_index, rollouts=rollouts,
                          determinize=determinize, **options)
    spent, decisions = 0.0, 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        t0 = time.perf_counter()
        action = bots[seat].act(obs)
        if seat == rotation and bots[seat].last_rollouts:
            spent += time.perf_counter() - t0
            decisions += 1
        env.step(action)
    return spent, decisions


def timing(decks: int, rollouts: int, seed: int = 0, rollout_policy: str | None = None,
           players: tuple[int, ...] = (2, 3, 4, 5, 6, 7),
           determinize: str = DEFAULT_DETERMINIZE, **options) -> dict[int, float]:
    """Mean seconds per searched decision at each table size (one line printed each).
    ``rollout_policy`` ``None`` and ``options`` left out: the bot's defaults;
    ``options``: more ``SearchAgent`` keywords (``opponent_model``, ``fallback``)."""
    out = {}
    for n in players:
        _play(n, 0, seed + 1, 0, rollouts, rollout_policy, determinize,
              **options)  # numba compiles
        spent, decisions = 0.0, 0
        for g in range(decks):
            for rotation in range(n):
                s, d = _play(n, g, seed, rotation, rollouts, rollout_policy, determinize,
                             **options)
                spent, decisions = spent + s, decisions + d
        out[n] = spent / max(decisions, 1)
        print(f"{n} players: {1000 * out[n]:.1f} ms per decision ({decisions} searched "
              f"decisions, {rollouts} {rollout_policy or 'default'} rollouts, "
              f"determinize={determinize}{''.join(f', {k}={v}' for k, v in options.items())})",
              flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--decks", type=int, default=DEFAULT_DECKS,
                        help=f"duplicate decks per table size (default {DEFAULT_DECKS})")
    parser.add_argument("--rollouts", type=int, default=DEFAULT_ROLLOUTS,
                        help=f"rollouts per decision (default {DEFAULT_ROLLOUTS})")
    parser.add_argument("--rollout-policy", choices=ROLLOUT_POLICIES, default=None,
                        help="who plays the rollouts (default the bot's)")
    parser.add_argument("--opponent-model", default=None,
                        help="the particle filter's opponent model (default the bot's)")
    parser.add_argument("--fallback", choices=FALLBACKS, default=None,
                        help="the move when no other is clearly better (default the bot's)")
    parser.add_argument("--determinize", choices=MODES, default=DEFAULT_DETERMINIZE,
                        help="where the determinizations come from (default particles)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the decks")
    parser.add_argument("--players", default="2,3,4,5,6,7",
                        help="comma-separated table sizes, each in 2..7 (default all)")
    args = parser.parse_args(argv)
    if args.decks < 1 or args.rollouts < 1:
        parser.error("--decks and --rollouts must be >= 1")
    try:
        players = tuple(parse_sizes(args.players))
    except ValueError as e:
        parser.error(str(e))
    options = {k: v for k, v in (("opponent_model", args.opponent_model),
                                 ("fallback", args.fallback)) if v is not None}
    timing(args.decks, args.rollouts, args.seed, args.rollout_policy, players,
           determinize=args.determinize, **options)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

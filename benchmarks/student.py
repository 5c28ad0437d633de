"""Milliseconds per decision of the student bot (``agents.student``) against heuristics.

    python -m benchmarks.student                        # 20 deals at 2 players
    python -m benchmarks.student --deals 40 --path runs/student_2p/student.pt

The student sits at a ``pis_yedili_v1`` table (its particle filter reads the exact public
events, as at a tournament) against heuristics, in every seat of duplicate decks in turn
(``agents.tournament.deals``), until ``--deals`` deals are played. Every call of its
``act`` is timed: the filter's update and, where it has a choice, the forward pass. The
figures are the mean and the 95th percentile over the decisions with a choice (the ones
the network plays; the search's benchmark counts the same), and the mean over every call,
forced moves included. One deal is played beforehand, untimed, so that the numba kernels'
compilation is not in the figure. Figures are wall-clock; run on a quiet machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents import make
from agents.tournament.deals import deal_setup
from pis_env import pis_yedili_v1


def play(path: str | None, num_players: int, deck: int, seat: int,
         seed: int = 0) -> tuple[list[float], list[float]]:
    """One deal with the student in ``seat``: seconds of its decisions with a choice,
    and of its forced moves."""
    cards, dealer = deal_setup(seed, deck, num_players)
    env = pis_yedili_v1.raw_env(num_players=num_players)
    env.reset(seed=deck, options={"deck": cards, "dealer": dealer})
    bots = [make("heuristic", num_players=num_players) for _ in range(num_players)]
    bots[seat] = make("student", num_players=num_players, seed=deck,
                      **({} if path is None else {"path": path}))
    chosen, forced = [], []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        s = int(agent.split("_")[1])
        t0 = time.perf_counter()
        action = bots[s].act(obs)
        if s == seat:
            (chosen if int(obs["action_mask"].sum()) > 1 else forced).append(
                time.perf_counter() - t0)
        env.step(action)
    return chosen, forced


def timing(deals: int = 20, path: str | None = None, num_players: int = 2,
           seed: int = 0) -> dict[str, float]:
    """Mean and 95th percentile milliseconds per decision with a choice over ``deals``
    deals, the mean over every call, and the counts."""
    play(path, num_players, 0, 0, seed + 1)  # numba compiles
    chosen, forced = [], []
    for k in range(deals):
        c, f = play(path, num_players, k // num_players, k % num_players, seed)
        chosen += c
        forced += f
    ms = 1000 * np.asarray(chosen)
    every = 1000 * np.asarray(chosen + forced)
    return {"deals": deals, "decisions": len(chosen), "forced": len(forced),
            "mean_ms": float(ms.mean()), "p95_ms": float(np.percentile(ms, 95)),
            "mean_all_ms": float(every.mean())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.student",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=20, help="deals played (default 20)")
    p.add_argument("--path", default=None, help="a student file (default: the shipped one)")
    p.add_argument("--players", type=int, default=2, help="seats at the table (default 2)")
    p.add_argument("--seed", type=int, default=0, help="the decks' seed")
    args = p.parse_args(argv)
    if args.deals < 1:
        p.error("--deals must be >= 1")
    r = timing(args.deals, args.path, args.players, args.seed)
    print(f"student, {args.players} players, {r['deals']} deals: {r['mean_ms']:.2f} ms mean, "
          f"{r['p95_ms']:.2f} ms 95th percentile per decision with a choice "
          f"({r['decisions']} decisions); {r['mean_all_ms']:.2f} ms mean over every call "
          f"({r['forced']} forced moves too)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

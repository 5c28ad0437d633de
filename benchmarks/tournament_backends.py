"""Tournament throughput, local processes vs Ray tasks: the cost of the Ray backend.

    python -m benchmarks.tournament_backends [--deals 10000] [--agents heuristic,greedy]

Prints games/s for 1 and 2 workers on each backend at steady state: Ray is started once
(``ray.init`` is not timed) and warmed up with a short tournament so that its worker
processes exist and have imported the bots; each figure is then one tournament's own
play time (``TournamentResult.elapsed_s``). Both backends give identical results, which
the script checks.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.tournament_backends")
    p.add_argument("--deals", type=int, default=10_000)
    p.add_argument("--agents", default="heuristic,greedy")
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    args = p.parse_args(argv)
    try:
        counts = [int(w) for w in args.workers.split(",")]
    except ValueError:
        p.error(f"--workers: comma-separated ints, got {args.workers!r}")
    if args.deals < 1 or not all(1 <= c <= 256 for c in counts):
        p.error("--deals >= 1 and --workers counts in 1..256")
    import ray

    from agents.tournament import run_tournament

    agents = args.agents.split(",")
    rows = []
    ray.init(address="local", num_cpus=max(counts), include_dashboard=False, log_to_driver=False)
    try:
        run_tournament(agents, deals=50, workers=max(counts), progress=False, backend="ray")
        for workers in counts:
            res = {}
            for backend in ("local", "ray"):
                res[backend] = run_tournament(agents, deals=args.deals, workers=workers,
                                              progress=False, backend=backend)
            a, b = res["local"].table_results[0], res["ray"].table_results[0]
            if not (np.array_equal(a.charges, b.charges) and np.array_equal(a.winners, b.winners)):
                print(f"{p.prog}: error: the backends disagree ({workers} workers)",
                      file=sys.stderr)
                return 1
            games = args.deals * len(res["local"].tables) * res["local"].num_players
            rows.append((workers, games / res["local"].elapsed_s, games / res["ray"].elapsed_s))
    finally:
        ray.shutdown()
    print(f"{args.deals} duplicate deals of {', '.join(agents)} ({games} games)")
    print(f"{'workers':>7}  {'local games/s':>13}  {'ray games/s':>11}  {'ray/local':>9}")
    for workers, local, remote in rows:
        print(f"{workers:>7}  {local:>13.0f}  {remote:>11.0f}  {remote / local:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

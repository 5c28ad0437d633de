"""Who the particle filter thinks the opponent is: its type posterior against each panel
member, at two players.

    python -m benchmarks.posterior                        # every member, 3 runs of 4 deals
    python -m benchmarks.posterior --runs 10 --deals 6 --markdown
    python -m benchmarks.posterior --opponents hoarder,counter --model panel

Each run is a ``--deals``-deal series against one opponent (``agents.make(name)``, seat
1) on fresh deals: seat 0 is played by the heuristic and followed by a
``ParticleBelief`` with the opponent model ``--model`` (default the type search's,
``agents.search.TYPES_MODEL``) at a ``pis_yedili_v1`` table, ``reset()``
between deals, so the posterior carries from deal to deal as it does in a match. After
every opponent move the posterior of seat 1 is read.

* **Model-set opponents**: the mean posterior mass on the type that *is* the opponent
  (the type whose ``bot`` is its name; ``random``: the uniform type) after 5, 10, 20,
  40, ... opponent moves (moves seen, forced ones included), and how often that type
  holds the most mass: the posterior-accuracy curve.
* **Evaluation-set opponents** (no type is them): the types they land on, the mean
  posterior at the end of the series, the three largest.

Nothing is tuned here; the figures go in docs/results.md.
"""

from __future__ import annotations

import argparse

import numpy as np

#: Opponent moves at which the posterior's mass on the right type is reported.
CHECKPOINTS = (5, 10, 20, 40, 80, 160)


def series(opponent: str, model: str, deals: int, seed: int, particles: int = 256):
    """One series: (moves seen after each opponent move, posterior [T] of seat 1 after it,
    type names)."""
    from agents import make
    from agents.belief import ParticleBelief
    from agents.tournament.worker import seat_observation
    from pis_env import decode_observation, pis_yedili_v1

    n = 2
    belief = ParticleBelief(n, particles=particles, opponent_model=model, seed=seed)
    names = [getattr(m, "bot", None) or getattr(m, "name", "?") for m in belief.types]
    me = make("heuristic", num_players=n)
    other = make(opponent, num_players=n, seed=seed)
    env = pis_yedili_v1.raw_env(num_players=n)
    version = getattr(other, "layout_version", env.layout_version)
    encoders: dict = {}
    posts, seen = [], 0
    for d in range(deals):
        env.reset(seed=seed * 1000 + d)
        belief.reset()
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            if agent == "player_1":  # shown the layout it was built for
                env.step(other.act(seat_observation(env, 1, version, encoders)))
                seen += 1
                continue
            belief.observe(decode_observation(obs["observation"], n, 1, 1))
            posts.append((seen, belief.type_posterior()[1].copy()))
            action = me.act(obs)
            belief.record(action)
            env.step(action)
    return posts, names


def _at(posts, moves: int):
    """The posterior after at least ``moves`` opponent moves (None if the series is
    shorter)."""
    for seen, post in posts:
        if seen >= moves:
            return post
    return None


def main(argv=None) -> int:
    from agents.panel import EVALUATION_SET, MODEL_SET, NOT_BATCHED
    from agents.search import TYPES_MODEL

    parser = argparse.ArgumentParser(prog="python -m benchmarks.posterior",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--opponents", default=None,
                        help="comma-separated panel members (default every member)")
    parser.add_argument("--model", default=TYPES_MODEL,
                        help=f"opponent-model spec (default {TYPES_MODEL!r})")
    parser.add_argument("--runs", type=int, default=3, help="series per opponent")
    parser.add_argument("--deals", type=int, default=4, help="deals per series")
    parser.add_argument("--particles", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.deals < 1:
        parser.error("--runs and --deals must be >= 1")
    members = ([m.strip() for m in args.opponents.split(",") if m.strip()] if args.opponents
               else [m for m in MODEL_SET if m not in NOT_BATCHED] + list(EVALUATION_SET))
    sep = " | " if args.markdown else "  "
    print(f"opponent model {args.model!r}, {args.runs} series of {args.deals} deals each")
    header = ["opponent", "right type"] + [f"{c} moves" for c in CHECKPOINTS] + ["top at end"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
    else:
        print(sep.join(header))
    for name in members:
        runs = [series(name, args.model, args.deals, args.seed + 7919 * r, args.particles)
                for r in range(args.runs)]
        names = runs[0][1]
        truth = "random" if name == "random" else name
        right = names.index(truth) if truth in names else None
        cells = [name, truth if right is not None else "(none)"]
        for c in CHECKPOINTS:
            got = [p for p in (_at(posts, c) for posts, _ in runs) if p is not None]
            if right is None or not got:
                cells.append("" if right is None else "-")
                continue
            mass = float(np.mean([p[right] for p in got]))
            top = float(np.mean([int(np.argmax(p)) == right for p in got]))
            cells.append(f"{mass:.2f} ({top:.0%} top, {len(got)})")
        end = np.mean([posts[-1][1] for posts, _ in runs if posts], axis=0)
        order = np.argsort(-end)[:3]
        cells.append(", ".join(f"{names[j]} {end[j]:.2f}" for j in order))
        line = sep.join(cells)
        print(f"| {line} |" if args.markdown else line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

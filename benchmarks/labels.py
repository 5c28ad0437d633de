"""The student's labels (issue 61): their rate and their quality at a few rollout budgets.

    python -m benchmarks.labels                          # rates at 256/1024/4096, 300 positions
    python -m benchmarks.labels --rate-games 2 --positions 100     # a quick look

**Rate**: ``train.expert.iteration.label_games`` over ``--rate-games`` games of the
student's config (``configs/student_2p.yaml``: ``models/ppo_2p.zip`` against its
opponent mix) at each budget, in this process on one core (torch pinned to one thread),
after an untimed game that compiles the numba kernels. Labels per second of wall time and
per CPU second of this process: the second is the rate per core, and less disturbed by
other work on a shared machine.

**Quality**: on ``--positions`` held-out positions (games of another seed than the
labelling's, the same players) the cheap searches' choice is compared with the default
search's (4,096 rollouts), each search following the game from its start (its particle
filter sees every observation of the seat, as in labelling); beside it the default
search's agreement with itself under another seed: the ceiling, as two default searches
disagree where actions are close. ``regret``: the points an independent default search
(the other seed) gives up by each choice (its best mean minus its mean of the choice), the
price of a disagreement. Intervals are 95% (normal approximation).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.search import DEFAULT_ROLLOUTS
from train.expert.iteration import LabelJob, label_games
from train.expert.search_data import pin_threads
from train.student.labels import DEFAULT_CONFIG, job, load_config

BUDGETS = (256, 1024, 4096)
#: Held-out games: decks of the tournament's seed 62000, not the labels' (61000).
HELD_OUT_SEED = 62


def rate(base: LabelJob, budgets: tuple[int, ...], games: int) -> list[dict]:
    """Labels per second (wall, and per CPU second) of ``label_games`` at each budget."""
    label_games(_with(base, 16), 0, 1)  # compiles the kernels
    rows = []
    for rollouts in budgets:
        wall, cpu = time.perf_counter(), time.process_time()
        data = label_games(_with(base, rollouts), 0, games)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        count = len(data["action"])
        rows.append({"rollouts": rollouts, "labels": count, "seconds": wall,
                     "per_s": count / wall, "per_cpu_s": count / cpu})
    return rows


def _with(base: LabelJob, rollouts: int) -> LabelJob:
    from dataclasses import replace

    return replace(base, labeller={**base.labeller, "rollouts": rollouts})


def quality(base: LabelJob, budgets: tuple[int, ...], positions: int) -> dict:
    """Every searched decision of the network's seat in held-out games until
    ``positions``: each budget's choice (seed 0), the default's under seed 1, and the
    seed-1 default's values."""
    from agents import make, make_for_table
    from agents.tournament import deal_setup, env_seed
    from agents.tournament.worker import seat_observation
    from train.common.league import table_env_class

    rules, n = base.rules, int(base.rules["num_players"])
    env = table_env_class(base.env_version)(**rules)
    names = env.possible_agents
    table = {k: v for k, v in rules.items() if k != "illegal_action"}
    network = make("ppo", path=base.policy, num_players=n, deterministic=not base.sample)
    labeller = {k: v for k, v in base.labeller.items() if k != "rollouts"}
    budgets = tuple(sorted(set(budgets) | {DEFAULT_ROLLOUTS}))
    keys = [*budgets, "other seed"]
    searches = {b: make("search", num_players=n, rules=table, rollouts=b, **labeller)
                for b in budgets}
    searches["other seed"] = make("search", num_players=n, rules=table,
                                  rollouts=DEFAULT_ROLLOUTS, **labeller)
    bot_names = list(base.opponents)
    weights = np.asarray([base.opponents[b] for b in bot_names], float)
    weights /= weights.sum()
    encoders: dict = {}
    choices: dict = {k: [] for k in keys}
    judge: list[np.ndarray] = []
    deal_seed = HELD_OUT_SEED * 1000
    g = 0
    while len(judge) < positions:
        rng = np.random.default_rng([HELD_OUT_SEED, g])
        seat = g % n
        seats = {}
        for s in range(n):
            if s != seat:
                name = bot_names[int(rng.choice(len(bot_names), p=weights))]
                seats[s] = (make("ppo", path=base.policy, num_players=n,
                                 seed=int(rng.integers(2**31)), deterministic=not base.sample)
                            if name == "self" else
                            make_for_table(name, table, seed=int(rng.integers(2**31))))
        network.reset(seed=int(rng.integers(2**31)))
        for k in keys:
            searches[k].reset(seed=1000 * g + (1 if k == "other seed" else 0),
                              opponents_changed=True)
        deck, dealer = deal_setup(deal_seed, g, n)
        env.reset(seed=env_seed(deal_seed, g), options={"deck": deck, "dealer": dealer})
        game = env.game
        while not game.deal_over and len(judge) < positions:
            s = game.current
            if s != seat:
                version = getattr(seats[s], "layout_version", base.env_version)
                env.step(seats[s].act(seat_observation(env, s, version, encoders)))
                continue
            o = env.observe(names[s])
            for k in keys:
                search = searches[k]
                chosen = search.advise(seat_observation(env, s, search.layout_version,
                                                        encoders))
                if search.last_values:
                    choices[k].append(chosen)
            if searches["other seed"].last_values:
                values = np.full(58, np.nan)
                for a, v in searches["other seed"].last_values.items():
                    values[a] = v
                judge.append(values)
            played = network.act(o)
            for k in keys:
                searches[k].played(played)
            env.step(played)
        g += 1
    values = np.asarray(judge)
    best = np.nanmax(values, axis=1)
    reference = np.asarray(choices[DEFAULT_ROLLOUTS])
    rows = []
    for k in keys:
        chosen = np.asarray(choices[k])
        same = chosen == reference if k != DEFAULT_ROLLOUTS else None
        rows.append({"search": k,
                     "agreement": None if same is None else float(same.mean()),
                     "half_width": None if same is None
                     else 1.96 * float(np.sqrt(same.mean() * (1 - same.mean()) / len(same))),
                     "regret": None if k == "other seed"  # the judge itself
                     else float(np.mean(best - values[np.arange(len(chosen)), chosen]))})
    return {"positions": len(judge), "games": g, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.labels",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(DEFAULT_CONFIG), help="the student's config")
    p.add_argument("--rate-games", type=int, default=4, help="games per budget for the rate")
    p.add_argument("--positions", type=int, default=300, help="held-out positions")
    p.add_argument("--budgets", default=",".join(map(str, BUDGETS)),
                   help="rollout budgets, comma-separated (the default search's last)")
    args = p.parse_args(argv)
    try:
        budgets = tuple(int(b) for b in args.budgets.split(","))
    except ValueError:
        p.error(f"--budgets {args.budgets!r}: integers separated by commas")
    if min(budgets) < 1 or args.rate_games < 0 or args.positions < 0:
        p.error("--budgets >= 1, --rate-games and --positions >= 0")
    pin_threads(1)
    base = job(load_config(args.config, ["workers=1"]))
    base = LabelJob(**{**base.__dict__, "seed": HELD_OUT_SEED})
    if args.rate_games:
        print(f"rate: {args.rate_games} games a budget, one process "
              f"({time.strftime('%Y-%m-%d %H:%M')})")
        print("| rollouts | labels | seconds | labels/s (wall) | labels per CPU second |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for r in rate(base, budgets, args.rate_games):
            print(f"| {r['rollouts']} | {r['labels']} | {r['seconds']:.1f} | {r['per_s']:.2f} | "
                  f"{r['per_cpu_s']:.2f} |", flush=True)
    if args.positions:
        t0 = time.perf_counter()
        q = quality(base, budgets, args.positions)
        print(f"\nquality: {q['positions']} held-out positions from {q['games']} games "
              f"({time.perf_counter() - t0:.0f} s); reference: the default search "
              f"({DEFAULT_ROLLOUTS} rollouts, seed 0)")
        print("| search | agreement with the default's choice | regret (points) |")
        print("| --- | ---: | ---: |")
        for r in q["rows"]:
            name = (f"{DEFAULT_ROLLOUTS}, another seed (ceiling)" if r["search"] == "other seed"
                    else str(r["search"]))
            agree = ("--" if r["agreement"] is None
                     else f"{r['agreement']:.1%} ± {r['half_width']:.1%}")
            regret = "(the judge)" if r["regret"] is None else f"{r['regret']:.1f}"
            print(f"| {name} | {agree} | {regret} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
